package postgres

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/linkforge/linkforge"
)

// deliveryNotify holds the function told, after a commit, that deliveries
// became due: the node's scheduler wakes at once instead of at its next
// re-read (other nodes find them at theirs).
type deliveryNotify struct {
	f atomic.Pointer[func(time.Time)]
}

func (n *deliveryNotify) tell(t time.Time) {
	if f := n.f.Load(); f != nil {
		(*f)(t)
	}
}

// OnDeliveries sets the function called after a committed write added
// webhook deliveries, with their due time (the scheduler's Reschedule).
func (db *DB) OnDeliveries(f func(due time.Time)) { db.notify.f.Store(&f) }

// execer is what the outbox needs of a pgx.Tx.
type execer interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// outbox collects the events of one write transaction.
type outbox struct{ added bool }

// enqueue writes one delivery of ev per webhook of its tenant subscribed to
// its type, in tx: one statement, which inserts nothing (an index probe)
// when the tenant has no such webhook. key, when set, makes the event once
// per webhook.
func (o *outbox) enqueue(ctx context.Context, tx execer, ev linkforge.Event, now time.Time, key string) error {
	var k *string
	if key != "" {
		k = &key
	}
	tag, err := tx.Exec(ctx,
		`INSERT INTO webhook_deliveries (webhook_id, tenant_id, event_id, event_type, event_key, body,
			next_attempt_at, created_at, updated_at)
		 SELECT w.id, w.tenant_id, $1, $2, $3, $4, $5, $5, $5 FROM webhooks w
		 WHERE w.tenant_id = $6 AND $2 = ANY(w.events)
		 ON CONFLICT DO NOTHING`,
		ev.ID, ev.Type, k, string(ev.Body), now.UTC().Truncate(time.Microsecond), ev.TenantID)
	if err != nil {
		return fmt.Errorf("enqueue %s: %w", ev.Type, err)
	}
	if tag.RowsAffected() > 0 {
		o.added = true
	}
	return nil
}

func (o *outbox) linkEvent(ctx context.Context, tx execer, typ string, l linkforge.Link, now time.Time) error {
	ev, err := linkforge.NewEvent(l.TenantID, typ, linkforge.NewEventLink(l), now)
	if err != nil {
		return err
	}
	return o.enqueue(ctx, tx, ev, now, "")
}

func (o *outbox) done(db *DB, now time.Time) {
	if o.added {
		db.notify.tell(now)
	}
}

// clickSubscribers reports whether any webhook takes link.clicks or
// link.limit_reached: without one, a flush stays the one statement it was.
func clickSubscribers(ctx context.Context, q execer) (bool, error) {
	var ok bool
	err := q.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM webhooks
		WHERE events && ARRAY['link.clicks', 'link.limit_reached'])`).Scan(&ok)
	return ok, err
}

// clickEvents enqueues, in the flush's transaction, one link.clicks event
// per flushed link whose tenant subscribed, with the absolute counts of the
// flushed minutes summed over nodes and the link's total, and
// link.limit_reached once per link whose total reached its max_clicks.
func (o *outbox) clickEvents(ctx context.Context, tx execer, ids []int64, buckets []time.Time, now time.Time) error {
	minutes := map[int64][]time.Time{}
	for i, id := range ids {
		minutes[id] = append(minutes[id], buckets[i])
	}
	links := make([]int64, 0, len(minutes))
	for id := range minutes {
		links = append(links, id)
	}
	slices.Sort(links)
	rows, err := tx.Query(ctx, `SELECT l.id, l.tenant_id, l.slug, l.max_clicks FROM links l
		WHERE l.id = ANY($1) AND EXISTS (SELECT 1 FROM webhooks w WHERE w.tenant_id = l.tenant_id
			AND w.events && ARRAY['link.clicks', 'link.limit_reached'])
		ORDER BY l.id`, links)
	if err != nil {
		return fmt.Errorf("click events: %w", err)
	}
	type target struct {
		id, tenant int64
		slug       string
		max        *int64
	}
	var targets []target
	for rows.Next() {
		var t target
		if err := rows.Scan(&t.id, &t.tenant, &t.slug, &t.max); err != nil {
			rows.Close()
			return fmt.Errorf("click events: %w", err)
		}
		targets = append(targets, t)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return fmt.Errorf("click events: %w", err)
	}
	for _, t := range targets {
		data := linkforge.ClicksData{Link: t.slug, Buckets: []linkforge.ClicksBucket{}}
		br, err := tx.Query(ctx, `SELECT bucket, SUM(count)::bigint FROM click_rollup
			WHERE link_id = $1 AND bucket = ANY($2) GROUP BY bucket ORDER BY bucket`, t.id, minutes[t.id])
		if err != nil {
			return fmt.Errorf("click events: %w", err)
		}
		for br.Next() {
			var c linkforge.ClicksBucket
			if err := br.Scan(&c.Start, &c.Count); err != nil {
				br.Close()
				return fmt.Errorf("click events: %w", err)
			}
			c.Start = c.Start.UTC()
			data.Buckets = append(data.Buckets, c)
		}
		br.Close()
		if err := br.Err(); err != nil {
			return fmt.Errorf("click events: %w", err)
		}
		if err := tx.QueryRow(ctx, `SELECT COALESCE(SUM(count), 0)::bigint FROM click_rollup WHERE link_id = $1`,
			t.id).Scan(&data.Total); err != nil {
			return fmt.Errorf("click events: %w", err)
		}
		ev, err := linkforge.NewEvent(t.tenant, linkforge.EventLinkClicks, data, now)
		if err != nil {
			return err
		}
		if err := o.enqueue(ctx, tx, ev, now, ""); err != nil {
			return err
		}
		if t.max != nil && data.Total >= *t.max {
			ev, err := linkforge.NewEvent(t.tenant, linkforge.EventLinkLimitReached,
				linkforge.LimitData{Link: t.slug, MaxClicks: *t.max, Total: data.Total}, now)
			if err != nil {
				return err
			}
			if err := o.enqueue(ctx, tx, ev, now, fmt.Sprintf("limit:%d", t.id)); err != nil {
				return err
			}
		}
	}
	return nil
}

// CreateWebhook stores w (its ID and Secret chosen by the caller).
func (db *DB) CreateWebhook(ctx context.Context, w linkforge.Webhook) (linkforge.Webhook, error) {
	if w.CreatedAt.IsZero() {
		w.CreatedAt = now()
	}
	w.CreatedAt = w.CreatedAt.UTC().Truncate(time.Microsecond)
	if _, err := db.pool.Exec(ctx,
		`INSERT INTO webhooks (id, tenant_id, url, events, secret, created_at) VALUES ($1, $2, $3, $4, $5, $6)`,
		w.ID, w.TenantID, w.URL, w.Events, w.Secret, w.CreatedAt); err != nil {
		if pgCode(err) == "23503" {
			return linkforge.Webhook{}, notFound("tenant")
		}
		return linkforge.Webhook{}, fmt.Errorf("postgres: create webhook: %w", err)
	}
	return w, nil
}

// ListWebhooks returns the tenant's webhooks, oldest first, without secrets.
func (db *DB) ListWebhooks(ctx context.Context, tenantID int64) ([]linkforge.Webhook, error) {
	rows, err := db.pool.Query(ctx,
		`SELECT id, tenant_id, url, events, created_at FROM webhooks WHERE tenant_id = $1 ORDER BY created_at, id`, tenantID)
	if err != nil {
		return nil, fmt.Errorf("postgres: list webhooks: %w", err)
	}
	out := []linkforge.Webhook{}
	for rows.Next() {
		var w linkforge.Webhook
		if err := rows.Scan(&w.ID, &w.TenantID, &w.URL, &w.Events, &w.CreatedAt); err != nil {
			rows.Close()
			return nil, fmt.Errorf("postgres: list webhooks: %w", err)
		}
		w.CreatedAt = w.CreatedAt.UTC()
		out = append(out, w)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("postgres: list webhooks: %w", err)
	}
	return out, nil
}

// DeleteWebhook deletes the tenant's webhook; its deliveries go with it.
func (db *DB) DeleteWebhook(ctx context.Context, tenantID int64, id string) error {
	tag, err := db.pool.Exec(ctx, `DELETE FROM webhooks WHERE id = $1 AND tenant_id = $2`, id, tenantID)
	if err != nil {
		return fmt.Errorf("postgres: delete webhook: %w", err)
	}
	if tag.RowsAffected() == 0 {
		return notFound("webhook")
	}
	return nil
}

const deliveryColumns = `d.id, d.webhook_id, d.tenant_id, d.event_id, d.event_type, d.body, d.state, d.attempts,
	d.last_status, d.last_error, d.next_attempt_at, d.lease_owner, d.lease_seq, d.created_at, d.updated_at`

// ListDeliveries returns the webhook's deliveries in state, newest first.
func (db *DB) ListDeliveries(ctx context.Context, tenantID int64, webhookID string, state linkforge.DeliveryState, limit int) ([]linkforge.Delivery, error) {
	if state != "" && !state.Valid() {
		return nil, linkforge.InvalidField("state", fmt.Sprintf("unknown delivery state %q", state))
	}
	if limit <= 0 {
		limit = defaultAlarmPage
	}
	limit = min(limit, maxAlarmPage)
	var one int
	err := db.pool.QueryRow(ctx, `SELECT 1 FROM webhooks WHERE id = $1 AND tenant_id = $2`, webhookID, tenantID).Scan(&one)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, notFound("webhook")
	}
	if err != nil {
		return nil, fmt.Errorf("postgres: list deliveries: %w", err)
	}
	rows, err := db.pool.Query(ctx, `SELECT `+deliveryColumns+` FROM webhook_deliveries d
		WHERE d.webhook_id = $1 AND ($2 = '' OR d.state = $2) ORDER BY d.id DESC LIMIT $3`,
		webhookID, string(state), limit)
	if err != nil {
		return nil, fmt.Errorf("postgres: list deliveries: %w", err)
	}
	ds, err := scanDeliveries(rows, false)
	if err != nil {
		return nil, fmt.Errorf("postgres: list deliveries: %w", err)
	}
	return ds, nil
}

// RetryDelivery replays the tenant's dead delivery.
func (db *DB) RetryDelivery(ctx context.Context, tenantID, id int64, now time.Time) (linkforge.Delivery, error) {
	var out linkforge.Delivery
	err := pgx.BeginFunc(ctx, db.pool, func(tx pgx.Tx) error {
		var state string
		err := tx.QueryRow(ctx, `SELECT state FROM webhook_deliveries WHERE id = $1 AND tenant_id = $2 FOR UPDATE`,
			id, tenantID).Scan(&state)
		if errors.Is(err, pgx.ErrNoRows) {
			return notFound("delivery")
		}
		if err != nil {
			return err
		}
		if linkforge.DeliveryState(state) != linkforge.DeliveryDead {
			return linkforge.Errorf(linkforge.EConflict,
				"delivery %d is %s, not dead: only a dead delivery can be retried", id, state)
		}
		rows, err := tx.Query(ctx, `UPDATE webhook_deliveries d SET state = 'pending', attempts = 0,
			next_attempt_at = $1, updated_at = $1 WHERE d.id = $2 RETURNING `+deliveryColumns,
			now.UTC().Truncate(time.Microsecond), id)
		if err != nil {
			return err
		}
		ds, err := scanDeliveries(rows, false)
		if err != nil {
			return err
		}
		if len(ds) != 1 {
			return fmt.Errorf("read back %d rows", len(ds))
		}
		out = ds[0]
		return nil
	})
	if err != nil {
		return linkforge.Delivery{}, wrap("retry delivery", err)
	}
	db.notify.tell(now)
	return out, nil
}

// ClaimDeliveries claims due deliveries for owner in one statement: the
// CTEs lock candidates with FOR UPDATE SKIP LOCKED, as ClaimAlarms, so
// nodes claiming at once skip each other's rows, and READ COMMITTED
// re-checks a row changed since the snapshot once it is locked. The two
// candidate sets (unclaimed due, expired leases) each use their partial
// index.
func (db *DB) ClaimDeliveries(ctx context.Context, owner string, now time.Time, lease time.Duration, limit int, skip []string) ([]linkforge.Delivery, error) {
	if owner == "" || limit <= 0 || lease <= 0 {
		return nil, fmt.Errorf("postgres: claim deliveries: owner %q, lease %v, limit %d: need an owner and positive lease and limit", owner, lease, limit)
	}
	if skip == nil {
		skip = []string{}
	}
	now = now.UTC().Truncate(time.Microsecond)
	rows, err := db.pool.Query(ctx,
		`WITH due AS (
			SELECT id, next_attempt_at AS t FROM webhook_deliveries
			WHERE state IN ('pending', 'retrying') AND lease_owner IS NULL AND next_attempt_at <= $1
			  AND NOT (webhook_id = ANY($5))
			ORDER BY next_attempt_at, id LIMIT $2 FOR UPDATE SKIP LOCKED
		), expired AS (
			SELECT id, lease_expires_at AS t FROM webhook_deliveries
			WHERE lease_owner IS NOT NULL AND lease_expires_at <= $1 AND NOT (webhook_id = ANY($5))
			ORDER BY lease_expires_at, id LIMIT $2 FOR UPDATE SKIP LOCKED
		), pick AS (
			SELECT id FROM (SELECT id, t FROM due UNION ALL SELECT id, t FROM expired) c ORDER BY t, id LIMIT $2
		),
		upd AS (
			UPDATE webhook_deliveries d SET
				attempts = d.attempts + 1,
				lease_seq = d.lease_seq + 1,
				last_error = CASE WHEN d.lease_owner IS NOT NULL
					THEN 'lease of ' || d.lease_owner || ' expired before the attempt completed' ELSE d.last_error END,
				lease_owner = $3, lease_expires_at = $4, updated_at = $1
			FROM pick WHERE d.id = pick.id
			RETURNING `+deliveryColumns+`)
		SELECT d.*, w.url, w.secret FROM upd d JOIN webhooks w ON w.id = d.webhook_id`,
		now, limit, owner, now.Add(lease), skip)
	if err != nil {
		return nil, fmt.Errorf("postgres: claim deliveries: %w", err)
	}
	ds, err := scanDeliveries(rows, true)
	if err != nil {
		return nil, fmt.Errorf("postgres: claim deliveries: %w", err)
	}
	slices.SortFunc(ds, func(a, b linkforge.Delivery) int {
		return cmp.Or(a.NextAttemptAt.Compare(b.NextAttemptAt), cmp.Compare(a.ID, b.ID))
	})
	return ds, nil
}

// ReleaseDeliveries gives back claims that were never attempted.
func (db *DB) ReleaseDeliveries(ctx context.Context, leases []linkforge.DeliveryLease) error {
	for _, l := range leases {
		if _, err := db.pool.Exec(ctx,
			`UPDATE webhook_deliveries SET attempts = GREATEST(attempts - 1, 0), lease_owner = NULL, lease_expires_at = NULL
			 WHERE id = $1 AND lease_owner = $2 AND lease_seq = $3`, l.ID, l.Owner, l.Seq); err != nil {
			return fmt.Errorf("postgres: release delivery %d: %w", l.ID, err)
		}
	}
	return nil
}

// FinishDelivery records the outcome of an attempt under its claim.
func (db *DB) FinishDelivery(ctx context.Context, o linkforge.DeliveryOutcome) (bool, error) {
	var next *time.Time
	if o.State == linkforge.DeliveryRetrying {
		n := o.NextAttemptAt.UTC().Truncate(time.Microsecond)
		next = &n
	}
	tag, err := db.pool.Exec(ctx,
		`UPDATE webhook_deliveries SET state = $1, last_status = $2, last_error = $3,
			next_attempt_at = COALESCE($4, next_attempt_at), lease_owner = NULL, lease_expires_at = NULL, updated_at = $5
		 WHERE id = $6 AND lease_owner = $7 AND lease_seq = $8`,
		string(o.State), o.Status, truncateError(o.Error), next, o.At.UTC().Truncate(time.Microsecond),
		o.Lease.ID, o.Lease.Owner, o.Lease.Seq)
	if err != nil {
		return false, fmt.Errorf("postgres: finish delivery %d: %w", o.Lease.ID, err)
	}
	return tag.RowsAffected() == 1, nil
}

// NextDeliveryDue reads the minimum of each partial index; LEAST ignores
// NULLs.
func (db *DB) NextDeliveryDue(ctx context.Context) (time.Time, bool, error) {
	var next *time.Time
	err := db.pool.QueryRow(ctx, `SELECT LEAST(
		(SELECT min(next_attempt_at) FROM webhook_deliveries WHERE state IN ('pending', 'retrying') AND lease_owner IS NULL),
		(SELECT min(lease_expires_at) FROM webhook_deliveries WHERE lease_owner IS NOT NULL))`).Scan(&next)
	if err != nil {
		return time.Time{}, false, fmt.Errorf("postgres: next delivery due: %w", err)
	}
	if next == nil {
		return time.Time{}, false, nil
	}
	return next.UTC(), true, nil
}

func scanDeliveries(rows pgx.Rows, withWebhook bool) ([]linkforge.Delivery, error) {
	defer rows.Close()
	out := []linkforge.Delivery{}
	for rows.Next() {
		var (
			d     linkforge.Delivery
			body  string
			state string
			owner *string
		)
		dest := []any{&d.ID, &d.WebhookID, &d.TenantID, &d.EventID, &d.EventType, &body, &state, &d.Attempts,
			&d.LastStatus, &d.LastError, &d.NextAttemptAt, &owner, &d.LeaseSeq, &d.CreatedAt, &d.UpdatedAt}
		if withWebhook {
			dest = append(dest, &d.URL, &d.Secret)
		}
		if err := rows.Scan(dest...); err != nil {
			return nil, err
		}
		d.Body = []byte(body)
		d.State = linkforge.DeliveryState(state)
		d.NextAttemptAt, d.CreatedAt, d.UpdatedAt = d.NextAttemptAt.UTC(), d.CreatedAt.UTC(), d.UpdatedAt.UTC()
		if owner != nil {
			d.LeaseOwner = *owner
		}
		out = append(out, d)
	}
	return out, rows.Err()
}

func truncateError(s string) string {
	if len(s) <= 1024 {
		return s
	}
	return strings.ToValidUTF8(s[:1024], "") + "…"
}

// alarmDead is an alarm FailAlarms just left dead: its alarm.dead event.
type alarmDead struct {
	id, tenant int64
	attempts   int
	slug       string
}

func (d alarmDead) data(fs []linkforge.AlarmFailure) map[string]any {
	msg := ""
	for _, f := range fs {
		if f.Lease.AlarmID == d.id {
			msg = f.Error
		}
	}
	return map[string]any{"alarm_id": d.id, "alarm": "link_expiry", "link": d.slug, "attempts": d.attempts, "error": msg}
}
