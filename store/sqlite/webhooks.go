package sqlite

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/linkforge/linkforge"
)

// deliveryNotify holds the function told, after a commit, that deliveries
// became due: the node's scheduler wakes at once instead of at its next
// re-read.
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

// outbox collects the events of one write transaction; the caller tells
// notify after the commit if any delivery was written.
type outbox struct{ added bool }

// enqueue writes one delivery of ev per webhook of its tenant subscribed to
// its type, in tx: one statement, which inserts nothing (and costs an index
// probe) when the tenant has no such webhook. key, when set, makes the
// event once per webhook (ON CONFLICT DO NOTHING on (webhook_id, event_key)).
func (o *outbox) enqueue(ctx context.Context, tx execer, ev linkforge.Event, now time.Time, key string) error {
	ts := toMicros(now)
	var k any
	if key != "" {
		k = key
	}
	res, err := tx.ExecContext(ctx,
		`INSERT INTO webhook_deliveries (webhook_id, tenant_id, event_id, event_type, event_key, body,
			next_attempt_at, created_at, updated_at)
		 SELECT w.id, w.tenant_id, ?1, ?2, ?3, ?4, ?5, ?5, ?5 FROM webhooks w
		 WHERE w.tenant_id = ?6 AND w.state = 'active' AND EXISTS (SELECT 1 FROM json_each(w.events) WHERE value = ?2)
		 ON CONFLICT DO NOTHING`,
		ev.ID, ev.Type, k, string(ev.Body), ts, ev.TenantID)
	if err != nil {
		return fmt.Errorf("enqueue %s: %w", ev.Type, err)
	}
	if n, _ := res.RowsAffected(); n > 0 {
		o.added = true
	}
	return nil
}

// linkEvent enqueues a link.* event of l.
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

// txQuerier is what the click events need of a *sql.Tx.
type txQuerier interface {
	execer
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// clickEvents enqueues, in the flush's transaction, one link.clicks event
// per flushed link whose tenant subscribed to it, with the absolute counts
// of the flushed minutes summed over nodes and the link's total, and
// link.limit_reached once per link whose total reached its max_clicks.
// Without any webhook for these events it costs one probe of the (small)
// webhooks table.
func (o *outbox) clickEvents(ctx context.Context, tx txQuerier, rows []linkforge.RollupRow, now time.Time) error {
	if len(rows) == 0 {
		return nil
	}
	var any int
	err := tx.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM webhooks w, json_each(w.events) e
		WHERE e.value IN ('link.clicks', 'link.limit_reached'))`).Scan(&any)
	if err != nil || any == 0 {
		return err
	}
	minutes := map[int64][]int64{}
	for _, r := range rows {
		minutes[r.LinkID] = append(minutes[r.LinkID], r.Bucket.Unix())
	}
	ids := make([]int64, 0, len(minutes))
	for id := range minutes {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	js, _ := json.Marshal(ids)
	type target struct {
		id, tenant int64
		slug       string
		max        sql.NullInt64
	}
	q, err := tx.QueryContext(ctx, `SELECT l.id, l.tenant_id, l.slug, l.max_clicks FROM links l
		WHERE l.id IN (SELECT value FROM json_each(?)) AND EXISTS (
			SELECT 1 FROM webhooks w, json_each(w.events) e
			WHERE w.tenant_id = l.tenant_id AND w.state = 'active' AND e.value IN ('link.clicks', 'link.limit_reached'))
		ORDER BY l.id`, string(js))
	if err != nil {
		return fmt.Errorf("click events: %w", err)
	}
	var targets []target
	for q.Next() {
		var t target
		if err := q.Scan(&t.id, &t.tenant, &t.slug, &t.max); err != nil {
			q.Close() //nolint:sqlclosecheck // closed on every path, before the next query
			return fmt.Errorf("click events: %w", err)
		}
		targets = append(targets, t)
	}
	q.Close()
	if err := q.Err(); err != nil {
		return fmt.Errorf("click events: %w", err)
	}
	for _, t := range targets {
		ms := minutes[t.id]
		slices.Sort(ms)
		ms = slices.Compact(ms)
		mjs, _ := json.Marshal(ms)
		data := linkforge.ClicksData{Link: t.slug, Buckets: []linkforge.ClicksBucket{}}
		br, err := tx.QueryContext(ctx, `SELECT bucket, SUM(count) FROM click_rollup
			WHERE link_id = ? AND bucket IN (SELECT value FROM json_each(?)) GROUP BY bucket ORDER BY bucket`,
			t.id, string(mjs))
		if err != nil {
			return fmt.Errorf("click events: %w", err)
		}
		for br.Next() {
			var b int64
			var c linkforge.ClicksBucket
			if err := br.Scan(&b, &c.Count); err != nil {
				br.Close() //nolint:sqlclosecheck // closed on every path, before the next query
				return fmt.Errorf("click events: %w", err)
			}
			c.Start = time.Unix(b, 0).UTC()
			data.Buckets = append(data.Buckets, c)
		}
		br.Close()
		if err := br.Err(); err != nil {
			return fmt.Errorf("click events: %w", err)
		}
		if err := tx.QueryRowContext(ctx, `SELECT COALESCE(SUM(count), 0) FROM click_rollup WHERE link_id = ?`,
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
		if t.max.Valid && data.Total >= t.max.Int64 {
			ev, err := linkforge.NewEvent(t.tenant, linkforge.EventLinkLimitReached,
				linkforge.LimitData{Link: t.slug, MaxClicks: t.max.Int64, Total: data.Total}, now)
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

const webhookColumns = `id, tenant_id, url, events, state, created_at`

// CreateWebhook stores w (its ID and Secret chosen by the caller), unless
// the tenant has MaxWebhooksPerTenant already: the count and the insert
// are one statement on the single writer, so concurrent creates cannot
// pass the bound together.
func (db *DB) CreateWebhook(ctx context.Context, w linkforge.Webhook) (linkforge.Webhook, error) {
	if w.CreatedAt.IsZero() {
		w.CreatedAt = now()
	}
	w.CreatedAt = w.CreatedAt.UTC().Truncate(time.Microsecond)
	w.State = linkforge.WebhookActive
	ev, err := json.Marshal(w.Events)
	if err != nil {
		return linkforge.Webhook{}, fmt.Errorf("sqlite: create webhook: %w", err)
	}
	res, err := db.writer.ExecContext(ctx,
		`INSERT INTO webhooks (id, tenant_id, url, events, secret, created_at)
		 SELECT ?1, ?2, ?3, ?4, ?5, ?6 WHERE (SELECT count(*) FROM webhooks WHERE tenant_id = ?2) < ?7`,
		w.ID, w.TenantID, w.URL, string(ev), w.Secret, toMicros(w.CreatedAt), linkforge.MaxWebhooksPerTenant)
	if err != nil {
		if isForeignKey(err) {
			return linkforge.Webhook{}, notFound("tenant")
		}
		return linkforge.Webhook{}, fmt.Errorf("sqlite: create webhook: %w", err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return linkforge.Webhook{}, fmt.Errorf("sqlite: create webhook: %w", err)
	} else if n == 0 {
		return linkforge.Webhook{}, linkforge.WebhookQuotaExceeded()
	}
	return w, nil
}

// ListWebhooks returns the tenant's webhooks, oldest first, without secrets.
func (db *DB) ListWebhooks(ctx context.Context, tenantID int64) ([]linkforge.Webhook, error) {
	rows, err := db.reader.QueryContext(ctx,
		`SELECT `+webhookColumns+` FROM webhooks WHERE tenant_id = ? ORDER BY created_at, id`, tenantID)
	if err != nil {
		return nil, fmt.Errorf("sqlite: list webhooks: %w", err)
	}
	out, err := scanWebhooks(rows)
	if err != nil {
		return nil, fmt.Errorf("sqlite: list webhooks: %w", err)
	}
	return out, nil
}

func scanWebhooks(rows *sql.Rows) ([]linkforge.Webhook, error) {
	defer rows.Close()
	out := []linkforge.Webhook{}
	for rows.Next() {
		var w linkforge.Webhook
		var ev, state string
		var created int64
		if err := rows.Scan(&w.ID, &w.TenantID, &w.URL, &ev, &state, &created); err != nil {
			return nil, err
		}
		if err := json.Unmarshal([]byte(ev), &w.Events); err != nil {
			return nil, err
		}
		w.State = linkforge.WebhookState(state)
		w.CreatedAt = fromMicros(created)
		out = append(out, w)
	}
	return out, rows.Err()
}

// SetWebhookState enables or disables the tenant's webhook; disabling
// stops its deliveries not in flight, in the same transaction.
func (db *DB) SetWebhookState(ctx context.Context, tenantID int64, id string, state linkforge.WebhookState, at time.Time) (linkforge.Webhook, error) {
	if !state.Valid() {
		return linkforge.Webhook{}, linkforge.InvalidField("state", fmt.Sprintf("unknown webhook state %q", state))
	}
	tx, err := db.writer.BeginTx(ctx, nil)
	if err != nil {
		return linkforge.Webhook{}, fmt.Errorf("sqlite: set webhook state: %w", err)
	}
	defer tx.Rollback()
	rows, err := tx.QueryContext(ctx, `UPDATE webhooks SET state = ? WHERE id = ? AND tenant_id = ? RETURNING `+webhookColumns,
		string(state), id, tenantID)
	if err != nil {
		return linkforge.Webhook{}, fmt.Errorf("sqlite: set webhook state: %w", err)
	}
	ws, err := scanWebhooks(rows)
	if err != nil {
		return linkforge.Webhook{}, fmt.Errorf("sqlite: set webhook state: %w", err)
	}
	if len(ws) == 0 {
		return linkforge.Webhook{}, notFound("webhook")
	}
	if state == linkforge.WebhookDisabled {
		if err := stopDeliveries(ctx, tx, id, "webhook disabled", at); err != nil {
			return linkforge.Webhook{}, err
		}
	}
	if err := tx.Commit(); err != nil {
		return linkforge.Webhook{}, fmt.Errorf("sqlite: set webhook state: %w", err)
	}
	return ws[0], nil
}

// stopDeliveries leaves the webhook's deliveries that wait for an attempt
// dead, with why as their error: a disabled webhook gets nothing more, and
// nothing of it stays due (the scheduler would wake for it forever). One
// in flight is finished by its attempt (FinishDelivery).
func stopDeliveries(ctx context.Context, tx execer, webhookID, why string, at time.Time) error {
	if _, err := tx.ExecContext(ctx, `UPDATE webhook_deliveries SET state = 'dead', last_error = ?, updated_at = ?
		WHERE webhook_id = ? AND state IN ('pending', 'retrying') AND lease_owner IS NULL`,
		why, toMicros(at), webhookID); err != nil {
		return fmt.Errorf("sqlite: stop deliveries of %s: %w", webhookID, err)
	}
	return nil
}

// DeleteWebhook deletes the tenant's webhook; its deliveries go with it.
func (db *DB) DeleteWebhook(ctx context.Context, tenantID int64, id string) error {
	res, err := db.writer.ExecContext(ctx, `DELETE FROM webhooks WHERE id = ? AND tenant_id = ?`, id, tenantID)
	if err != nil {
		return fmt.Errorf("sqlite: delete webhook: %w", err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return fmt.Errorf("sqlite: delete webhook: %w", err)
	} else if n == 0 {
		return notFound("webhook")
	}
	return nil
}

const deliveryColumns = `id, webhook_id, tenant_id, event_id, event_type, body, state, attempts,
	last_status, last_error, next_attempt_at, lease_owner, lease_seq, created_at, updated_at`

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
	err := db.reader.QueryRowContext(ctx, `SELECT 1 FROM webhooks WHERE id = ? AND tenant_id = ?`,
		webhookID, tenantID).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, notFound("webhook")
	}
	if err != nil {
		return nil, fmt.Errorf("sqlite: list deliveries: %w", err)
	}
	q := `SELECT ` + deliveryColumns + ` FROM webhook_deliveries WHERE webhook_id = ?`
	args := []any{webhookID}
	if state != "" {
		q += ` AND state = ?`
		args = append(args, string(state))
	}
	q += ` ORDER BY id DESC LIMIT ?`
	args = append(args, limit)
	rows, err := db.reader.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("sqlite: list deliveries: %w", err)
	}
	ds, err := scanDeliveries(rows, false)
	if err != nil {
		return nil, fmt.Errorf("sqlite: list deliveries: %w", err)
	}
	return ds, nil
}

// RetryDelivery replays the tenant's dead delivery.
func (db *DB) RetryDelivery(ctx context.Context, tenantID, id int64, now time.Time) (linkforge.Delivery, error) {
	tx, err := db.writer.BeginTx(ctx, nil)
	if err != nil {
		return linkforge.Delivery{}, fmt.Errorf("sqlite: retry delivery: %w", err)
	}
	defer tx.Rollback()
	var state, whState string
	err = tx.QueryRowContext(ctx, `SELECT d.state, w.state FROM webhook_deliveries d JOIN webhooks w ON w.id = d.webhook_id
		WHERE d.id = ? AND d.tenant_id = ?`, id, tenantID).Scan(&state, &whState)
	if errors.Is(err, sql.ErrNoRows) {
		return linkforge.Delivery{}, notFound("delivery")
	}
	if err != nil {
		return linkforge.Delivery{}, fmt.Errorf("sqlite: retry delivery: %w", err)
	}
	if linkforge.DeliveryState(state) != linkforge.DeliveryDead {
		return linkforge.Delivery{}, linkforge.Errorf(linkforge.EConflict,
			"delivery %d is %s, not dead: only a dead delivery can be retried", id, state)
	}
	if linkforge.WebhookState(whState) == linkforge.WebhookDisabled {
		return linkforge.Delivery{}, linkforge.Errorf(linkforge.EConflict,
			"the webhook of delivery %d is disabled: enable it first", id)
	}
	ts := toMicros(now)
	rows, err := tx.QueryContext(ctx, `UPDATE webhook_deliveries SET state = 'pending', attempts = 0,
		next_attempt_at = ?, updated_at = ? WHERE id = ? RETURNING `+deliveryColumns, ts, ts, id)
	if err != nil {
		return linkforge.Delivery{}, fmt.Errorf("sqlite: retry delivery: %w", err)
	}
	ds, err := scanDeliveries(rows, false)
	if err != nil || len(ds) != 1 {
		return linkforge.Delivery{}, fmt.Errorf("sqlite: retry delivery %d: %d rows: %w", id, len(ds), err)
	}
	if err := tx.Commit(); err != nil {
		return linkforge.Delivery{}, fmt.Errorf("sqlite: retry delivery: %w", err)
	}
	db.notify.tell(now)
	return ds[0], nil
}

// ClaimDeliveries claims due deliveries in one UPDATE ... RETURNING on
// the single writer connection (atomic against every other claim, as
// ClaimAlarms). The candidates are ranked within their tenant by due
// time, and picked by rank first: round robin across tenants.
func (db *DB) ClaimDeliveries(ctx context.Context, c linkforge.DeliveryClaim) ([]linkforge.Delivery, error) {
	if c.Owner == "" || c.Limit <= 0 || c.Lease <= 0 {
		return nil, fmt.Errorf("sqlite: claim deliveries: owner %q, lease %v, limit %d: need an owner and positive lease and limit", c.Owner, c.Lease, c.Limit)
	}
	// json_each of "null" is one NULL, which NOT IN never passes: nil
	// slices are written as [].
	if c.SkipWebhooks == nil {
		c.SkipWebhooks = []string{}
	}
	if c.SkipTenants == nil {
		c.SkipTenants = []int64{}
	}
	skipW, err := json.Marshal(c.SkipWebhooks)
	if err != nil {
		return nil, fmt.Errorf("sqlite: claim deliveries: %w", err)
	}
	skipT, err := json.Marshal(c.SkipTenants)
	if err != nil {
		return nil, fmt.Errorf("sqlite: claim deliveries: %w", err)
	}
	now := c.Now.UTC().Truncate(time.Microsecond)
	rows, err := db.writer.QueryContext(ctx,
		`UPDATE webhook_deliveries SET
			attempts = attempts + 1,
			lease_seq = lease_seq + 1,
			last_error = CASE WHEN lease_owner IS NOT NULL
				THEN 'lease of ' || lease_owner || ' expired before the attempt completed' ELSE last_error END,
			lease_owner = ?1,
			lease_expires_at = ?2,
			updated_at = ?3
		 WHERE id IN (
			SELECT id FROM (
				SELECT id, t, row_number() OVER (PARTITION BY tenant_id ORDER BY t, id) AS turn FROM (
					SELECT id, tenant_id, webhook_id, next_attempt_at AS t FROM webhook_deliveries
					WHERE state IN ('pending', 'retrying') AND lease_owner IS NULL AND next_attempt_at <= ?3
					UNION ALL
					SELECT id, tenant_id, webhook_id, lease_expires_at FROM webhook_deliveries
					WHERE lease_owner IS NOT NULL AND lease_expires_at <= ?3)
				WHERE webhook_id NOT IN (SELECT value FROM json_each(?4))
				  AND tenant_id NOT IN (SELECT value FROM json_each(?6)))
			ORDER BY turn, t, id LIMIT ?5)
		 RETURNING `+deliveryColumns+`,
			(SELECT url FROM webhooks w WHERE w.id = webhook_id),
			(SELECT secret FROM webhooks w WHERE w.id = webhook_id),
			(SELECT state = 'disabled' FROM webhooks w WHERE w.id = webhook_id)`,
		c.Owner, toMicros(now.Add(c.Lease)), toMicros(now), string(skipW), c.Limit, string(skipT))
	if err != nil {
		return nil, fmt.Errorf("sqlite: claim deliveries: %w", err)
	}
	ds, err := scanDeliveries(rows, true)
	if err != nil {
		return nil, fmt.Errorf("sqlite: claim deliveries: %w", err)
	}
	slices.SortFunc(ds, func(a, b linkforge.Delivery) int {
		return cmp.Or(a.NextAttemptAt.Compare(b.NextAttemptAt), cmp.Compare(a.ID, b.ID))
	})
	return ds, nil
}

// ReleaseDeliveries gives back claims that were never attempted.
func (db *DB) ReleaseDeliveries(ctx context.Context, leases []linkforge.DeliveryLease) error {
	for _, l := range leases {
		if _, err := db.writer.ExecContext(ctx,
			`UPDATE webhook_deliveries SET attempts = max(attempts - 1, 0), lease_owner = NULL, lease_expires_at = NULL
			 WHERE id = ? AND lease_owner = ? AND lease_seq = ?`, l.ID, l.Owner, l.Seq); err != nil {
			return fmt.Errorf("sqlite: release delivery %d: %w", l.ID, err)
		}
	}
	return nil
}

// FinishDelivery records the outcome of an attempt under its claim. A
// failure of a delivery whose webhook is disabled is final (dead): nothing
// of a disabled webhook stays due. With o.DisableWebhook the webhook is
// disabled and its waiting deliveries stopped, in the same transaction.
func (db *DB) FinishDelivery(ctx context.Context, o linkforge.DeliveryOutcome) (bool, error) {
	next := any(nil)
	if o.State == linkforge.DeliveryRetrying {
		next = toMicros(o.NextAttemptAt)
	}
	tx, err := db.writer.BeginTx(ctx, nil)
	if err != nil {
		return false, fmt.Errorf("sqlite: finish delivery %d: %w", o.Lease.ID, err)
	}
	defer tx.Rollback()
	var webhookID string
	err = tx.QueryRowContext(ctx,
		`UPDATE webhook_deliveries SET
			state = CASE WHEN ?1 = 'retrying' AND (SELECT state FROM webhooks w WHERE w.id = webhook_id) = 'disabled'
				THEN 'dead' ELSE ?1 END,
			last_status = ?2, last_error = ?3,
			next_attempt_at = COALESCE(?4, next_attempt_at), lease_owner = NULL, lease_expires_at = NULL, updated_at = ?5
		 WHERE id = ?6 AND lease_owner = ?7 AND lease_seq = ?8 RETURNING webhook_id`,
		string(o.State), o.Status, truncateError(o.Error), next, toMicros(o.At), o.Lease.ID, o.Lease.Owner, o.Lease.Seq).Scan(&webhookID)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("sqlite: finish delivery %d: %w", o.Lease.ID, err)
	}
	if o.DisableWebhook {
		if _, err := tx.ExecContext(ctx, `UPDATE webhooks SET state = 'disabled' WHERE id = ?`, webhookID); err != nil {
			return false, fmt.Errorf("sqlite: disable webhook %s: %w", webhookID, err)
		}
		if err := stopDeliveries(ctx, tx, webhookID, "webhook disabled: the receiver answered 410 Gone", o.At); err != nil {
			return false, err
		}
	}
	if err := tx.Commit(); err != nil {
		return false, fmt.Errorf("sqlite: finish delivery %d: %w", o.Lease.ID, err)
	}
	return true, nil
}

// NextDeliveryDue reads the minimum of each partial index.
func (db *DB) NextDeliveryDue(ctx context.Context) (time.Time, bool, error) {
	var next sql.NullInt64
	err := db.reader.QueryRowContext(ctx,
		`SELECT min(t) FROM (
			SELECT min(next_attempt_at) AS t FROM webhook_deliveries
			WHERE state IN ('pending', 'retrying') AND lease_owner IS NULL
			UNION ALL
			SELECT min(lease_expires_at) FROM webhook_deliveries WHERE lease_owner IS NOT NULL)`).Scan(&next)
	if err != nil {
		return time.Time{}, false, fmt.Errorf("sqlite: next delivery due: %w", err)
	}
	if !next.Valid {
		return time.Time{}, false, nil
	}
	return fromMicros(next.Int64), true, nil
}

func scanDeliveries(rows *sql.Rows, withWebhook bool) ([]linkforge.Delivery, error) {
	defer rows.Close()
	out := []linkforge.Delivery{}
	for rows.Next() {
		var (
			d                  linkforge.Delivery
			body, state        string
			next, created, upd int64
			owner              sql.NullString
		)
		dest := []any{&d.ID, &d.WebhookID, &d.TenantID, &d.EventID, &d.EventType, &body, &state, &d.Attempts,
			&d.LastStatus, &d.LastError, &next, &owner, &d.LeaseSeq, &created, &upd}
		if withWebhook {
			dest = append(dest, &d.URL, &d.Secret, &d.WebhookDisabled)
		}
		if err := rows.Scan(dest...); err != nil {
			return nil, err
		}
		d.Body = json.RawMessage(body)
		d.State = linkforge.DeliveryState(state)
		d.NextAttemptAt, d.CreatedAt, d.UpdatedAt = fromMicros(next), fromMicros(created), fromMicros(upd)
		d.LeaseOwner = owner.String
		out = append(out, d)
	}
	return out, rows.Err()
}

// truncateError bounds a stored error message.
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

// EnqueueDelivery writes ev as one delivery of the tenant's webhook. The
// state check and the insert share a transaction on the single writer, so
// a concurrent disable cannot slip between them.
func (db *DB) EnqueueDelivery(ctx context.Context, tenantID int64, webhookID string, ev linkforge.Event, now time.Time) (linkforge.Delivery, error) {
	tx, err := db.writer.BeginTx(ctx, nil)
	if err != nil {
		return linkforge.Delivery{}, fmt.Errorf("sqlite: enqueue delivery: %w", err)
	}
	defer tx.Rollback()
	var state string
	err = tx.QueryRowContext(ctx, `SELECT state FROM webhooks WHERE id = ? AND tenant_id = ?`, webhookID, tenantID).Scan(&state)
	if errors.Is(err, sql.ErrNoRows) {
		return linkforge.Delivery{}, notFound("webhook")
	}
	if err != nil {
		return linkforge.Delivery{}, fmt.Errorf("sqlite: enqueue delivery: %w", err)
	}
	if linkforge.WebhookState(state) == linkforge.WebhookDisabled {
		return linkforge.Delivery{}, linkforge.Errorf(linkforge.EConflict, "webhook %s is disabled: enable it first", webhookID)
	}
	ts := toMicros(now)
	rows, err := tx.QueryContext(ctx, `INSERT INTO webhook_deliveries (webhook_id, tenant_id, event_id, event_type, body,
			next_attempt_at, created_at, updated_at)
		 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?6, ?6) RETURNING `+deliveryColumns,
		webhookID, tenantID, ev.ID, ev.Type, string(ev.Body), ts)
	if err != nil {
		return linkforge.Delivery{}, fmt.Errorf("sqlite: enqueue delivery: %w", err)
	}
	ds, err := scanDeliveries(rows, false)
	if err != nil || len(ds) != 1 {
		return linkforge.Delivery{}, fmt.Errorf("sqlite: enqueue delivery: %d rows: %w", len(ds), err)
	}
	if err := tx.Commit(); err != nil {
		return linkforge.Delivery{}, fmt.Errorf("sqlite: enqueue delivery: %w", err)
	}
	db.notify.tell(now)
	return ds[0], nil
}
