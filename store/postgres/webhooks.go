package postgres

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/store/internal/writes"
)

// OnDeliveries sets the function the store's hook tells after a committed
// write added webhook deliveries, with their due time. It is for a caller
// that builds its scheduler after the store without a shared hook (tests);
// a server passes WithWake at Open and schedule.Config.Wake instead.
func (db *DB) OnDeliveries(f func(due time.Time)) { db.writes.OnDeliveries(f) }

// execer is what a write's orchestration needs of a pgx.Tx.
type execer interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// SetShortBase sets how the events of later writes name their link's
// domain and short URL: the server's public URL (linkforge.ShortBase).
func (db *DB) SetShortBase(b linkforge.ShortBase) { db.writes.SetShortBase(b) }

// clickSubscribers reports whether any webhook takes link.clicks or
// link.limit_reached: without one, a flush stays the one statement it was.
func clickSubscribers(ctx context.Context, q execer) (bool, error) {
	var ok bool
	err := q.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM webhooks
		WHERE events && ARRAY['link.clicks', 'link.limit_reached'])`).Scan(&ok)
	return ok, err
}

// clickEventsSQL reads, for the flushed (link, minute) pairs of $1 and $2,
// the linkforge.ClickRows of the links whose tenant has an active webhook
// for the click events: one statement for the whole flush, whatever the
// number of links.
const clickEventsSQL = `WITH f AS (
		SELECT DISTINCT link_id, bucket FROM unnest($1::bigint[], $2::timestamptz[]) AS f (link_id, bucket)
	), t AS MATERIALIZED (
		SELECT l.id, l.tenant_id, l.slug, l.domain_id, (SELECT d.host FROM domains d WHERE d.id = l.domain_id) AS host, l.max_clicks,
			(SELECT COALESCE(SUM(r.count), 0)::bigint FROM click_rollup r WHERE r.link_id = l.id)
			+ (SELECT COALESCE(SUM(p.count), 0)::bigint FROM click_rollup_pruned p WHERE p.link_id = l.id) AS total
		FROM links l
		WHERE l.id IN (SELECT link_id FROM f) AND EXISTS (SELECT 1 FROM webhooks w WHERE w.tenant_id = l.tenant_id
			AND w.state = 'active' AND w.events && ARRAY['link.clicks', 'link.limit_reached'])
	), b AS (
		SELECT r.link_id, r.bucket, SUM(r.count)::bigint AS count FROM click_rollup r
		JOIN f ON f.link_id = r.link_id AND f.bucket = r.bucket
		WHERE r.link_id IN (SELECT id FROM t)
		GROUP BY r.link_id, r.bucket
	)
	SELECT t.id, t.tenant_id, t.slug, t.domain_id, COALESCE(t.host, ''), t.max_clicks, t.total, b.bucket, COALESCE(b.count, 0)
	FROM t LEFT JOIN b ON b.link_id = t.id
	ORDER BY t.id, b.bucket`

// clickEvents enqueues, in the flush's transaction, the events of the
// flushed (link, minute) pairs (writes.ClickEvents).
func clickEvents(ctx context.Context, tx execer, w *writes.Write, ids []int64, buckets []time.Time, now time.Time) error {
	rows, err := tx.Query(ctx, clickEventsSQL, ids, buckets)
	if err != nil {
		return fmt.Errorf("click events: %w", err)
	}
	crs, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (linkforge.ClickRow, error) {
		var r linkforge.ClickRow
		err := row.Scan(&r.LinkID, &r.TenantID, &r.Slug, &r.DomainID, &r.Host, &r.MaxClicks, &r.Total, &r.Bucket, &r.Count)
		return r, err
	})
	if err != nil {
		return fmt.Errorf("click events: %w", err)
	}
	if err := variantHours(ctx, tx, crs, ids, buckets); err != nil {
		return fmt.Errorf("click events: %w", err)
	}
	return w.ClickEvents(ctx, writeTx{tx}, crs, now)
}

// CreateWebhook stores w (its ID and Secret chosen by the caller), unless
// the tenant has MaxWebhooksPerTenant already. The tenant's row is locked
// first, so that concurrent creates of one tenant (on any node) count one
// after the other.
func (db *DB) CreateWebhook(ctx context.Context, w linkforge.Webhook) (linkforge.Webhook, error) {
	w = w.ForCreate(now())
	err := pgx.BeginFunc(ctx, db.pool, func(tx pgx.Tx) error {
		// The count is a statement of its own: under READ COMMITTED it
		// then sees every create committed while this one waited for
		// the lock.
		var one, n int
		err := tx.QueryRow(ctx, `SELECT 1 FROM tenants WHERE id = $1 FOR UPDATE`, w.TenantID).Scan(&one)
		if errors.Is(err, pgx.ErrNoRows) {
			return notFound("tenant")
		}
		if err != nil {
			return err
		}
		if err := tx.QueryRow(ctx, `SELECT count(*) FROM webhooks WHERE tenant_id = $1`, w.TenantID).Scan(&n); err != nil {
			return err
		}
		if n >= linkforge.MaxWebhooksPerTenant {
			return linkforge.WebhookQuotaExceeded()
		}
		_, err = tx.Exec(ctx,
			`INSERT INTO webhooks (id, tenant_id, url, events, secret, created_at) VALUES ($1, $2, $3, $4, $5, $6)`,
			w.ID, w.TenantID, w.URL, w.Events, w.Secret, w.CreatedAt)
		if err != nil {
			return err
		}
		return db.writes.Begin().WebhookCreated(ctx, writeTx{tx}, w)
	})
	if err != nil {
		return linkforge.Webhook{}, wrap("create webhook", err)
	}
	return w, nil
}

// ListWebhooks returns the tenant's webhooks, oldest first, without secrets.
func (db *DB) ListWebhooks(ctx context.Context, tenantID int64) ([]linkforge.Webhook, error) {
	out, err := query(ctx, db.pool, webhookScan(),
		`SELECT `+webhookColumns+` FROM webhooks WHERE tenant_id = $1 ORDER BY created_at, id`, tenantID)
	if err != nil {
		return nil, fmt.Errorf("postgres: list webhooks: %w", err)
	}
	return out, nil
}

const webhookColumns = `id, tenant_id, url, events, state, created_at`

func webhookScan() func(pgx.Row) (linkforge.Webhook, error) {
	return func(row pgx.Row) (linkforge.Webhook, error) {
		var w linkforge.Webhook
		var state string
		err := row.Scan(&w.ID, &w.TenantID, &w.URL, &w.Events, &state, &w.CreatedAt)
		w.State = linkforge.WebhookState(state)
		w.CreatedAt = w.CreatedAt.UTC()
		return w, err
	}
}

// SetWebhookState enables or disables the tenant's webhook; disabling
// stops its deliveries not in flight, in the same transaction.
func (db *DB) SetWebhookState(ctx context.Context, tenantID int64, id string, state linkforge.WebhookState, at time.Time) (linkforge.Webhook, error) {
	if !state.Valid() {
		return linkforge.Webhook{}, linkforge.InvalidField("state", fmt.Sprintf("unknown webhook state %q", state))
	}
	var out linkforge.Webhook
	err := pgx.BeginFunc(ctx, db.pool, func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, `UPDATE webhooks SET state = $1 WHERE id = $2 AND tenant_id = $3 RETURNING `+webhookColumns,
			string(state), id, tenantID)
		if err != nil {
			return err
		}
		ws, err := collect(rows, webhookScan())
		if err != nil {
			return err
		}
		if len(ws) == 0 {
			return notFound("webhook")
		}
		out = ws[0]
		if state == linkforge.WebhookDisabled {
			if err := stopDeliveries(ctx, tx, id, linkforge.StoppedDisabled, at); err != nil {
				return err
			}
		}
		return db.writes.Begin().WebhookStateSet(ctx, writeTx{tx}, tenantID, id, state, at)
	})
	if err != nil {
		return linkforge.Webhook{}, wrap("set webhook state", err)
	}
	return out, nil
}

// stopDeliveries leaves the webhook's deliveries that wait for an attempt
// dead, with why as their error: a disabled webhook gets nothing more, and
// nothing of it stays due (the schedulers would wake for it forever). One
// in flight is finished by its attempt (FinishDelivery).
func stopDeliveries(ctx context.Context, tx execer, webhookID, why string, at time.Time) error {
	if _, err := tx.Exec(ctx, `UPDATE webhook_deliveries SET state = 'dead', last_error = $1, updated_at = $2
		WHERE webhook_id = $3 AND state IN ('pending', 'retrying') AND lease_owner IS NULL`,
		why, at.UTC().Truncate(time.Microsecond), webhookID); err != nil {
		return fmt.Errorf("stop deliveries of %s: %w", webhookID, err)
	}
	return nil
}

// DeleteWebhook deletes the tenant's webhook; its deliveries go with it.
func (db *DB) DeleteWebhook(ctx context.Context, tenantID int64, id string) error {
	err := pgx.BeginFunc(ctx, db.pool, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `DELETE FROM webhooks WHERE id = $1 AND tenant_id = $2`, id, tenantID)
		if err != nil {
			return err
		}
		if tag.RowsAffected() == 0 {
			return notFound("webhook")
		}
		return db.writes.Begin().WebhookDeleted(ctx, writeTx{tx}, tenantID, id, now())
	})
	if err != nil {
		return wrap("delete webhook", err)
	}
	return nil
}

const deliveryColumns = `d.id, d.webhook_id, d.tenant_id, d.event_id, d.event_type, d.body, d.state, d.attempts,
	d.last_status, d.last_error, d.next_attempt_at, d.lease_owner, d.lease_seq, d.created_at, d.updated_at`

// ListDeliveries returns the webhook's deliveries in state, newest first.
func (db *DB) ListDeliveries(ctx context.Context, tenantID int64, webhookID string, state linkforge.DeliveryState, limit int) ([]linkforge.Delivery, error) {
	if err := linkforge.CheckDeliveryFilter(state); err != nil {
		return nil, err
	}
	limit = linkforge.PageLimit(limit, linkforge.DefaultAlarmPage, linkforge.MaxAlarmPage)
	var one int
	err := db.pool.QueryRow(ctx, `SELECT 1 FROM webhooks WHERE id = $1 AND tenant_id = $2`, webhookID, tenantID).Scan(&one)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, notFound("webhook")
	}
	if err != nil {
		return nil, fmt.Errorf("postgres: list deliveries: %w", err)
	}
	ds, err := query(ctx, db.pool, deliveryScan(false), `SELECT `+deliveryColumns+` FROM webhook_deliveries d
		WHERE d.webhook_id = $1 AND ($2 = '' OR d.state = $2) ORDER BY d.id DESC LIMIT $3`,
		webhookID, string(state), limit)
	if err != nil {
		return nil, fmt.Errorf("postgres: list deliveries: %w", err)
	}
	return ds, nil
}

// RetryDelivery replays the tenant's dead delivery.
func (db *DB) RetryDelivery(ctx context.Context, tenantID, id int64, now time.Time) (linkforge.Delivery, error) {
	var out linkforge.Delivery
	w := db.writes.Begin()
	err := pgx.BeginFunc(ctx, db.pool, func(tx pgx.Tx) error {
		var state, whState string
		err := tx.QueryRow(ctx, `SELECT d.state, w.state FROM webhook_deliveries d JOIN webhooks w ON w.id = d.webhook_id
			WHERE d.id = $1 AND d.tenant_id = $2 FOR UPDATE OF d`, id, tenantID).Scan(&state, &whState)
		if errors.Is(err, pgx.ErrNoRows) {
			return notFound("delivery")
		}
		if err != nil {
			return err
		}
		if err := linkforge.CheckDeliveryRetry(id, linkforge.DeliveryState(state), linkforge.WebhookState(whState)); err != nil {
			return err
		}
		out, err = oneDelivery(ctx, tx, `UPDATE webhook_deliveries d SET state = 'pending', attempts = 0,
			next_attempt_at = $1, updated_at = $1 WHERE d.id = $2 RETURNING `+deliveryColumns,
			now.UTC().Truncate(time.Microsecond), id)
		if err != nil {
			return err
		}
		return w.DeliveryRetried(ctx, writeTx{tx}, tenantID, id, now)
	})
	if err != nil {
		return linkforge.Delivery{}, wrap("retry delivery", err)
	}
	w.Committed()
	return out, nil
}

// ClaimDeliveries claims due deliveries in one statement. The candidates
// (unclaimed due, and expired leases, each from its partial index) are
// ranked within their tenant by due time and picked by rank first: round
// robin across tenants. A window cannot be locked, so the picked rows are
// then locked with FOR UPDATE SKIP LOCKED, as ClaimAlarms: nodes claiming
// at once skip each other's rows, and READ COMMITTED re-checks the due
// condition on a row changed since the snapshot once it is locked.
func (db *DB) ClaimDeliveries(ctx context.Context, c linkforge.DeliveryClaim) ([]linkforge.Delivery, error) {
	c, err := c.Normalized()
	if err != nil {
		return nil, fmt.Errorf("postgres: claim deliveries: %w", err)
	}
	now := c.Now
	ds, err := query(ctx, db.pool, deliveryScan(true),
		`WITH cand AS (
			SELECT id, tenant_id, next_attempt_at AS t FROM webhook_deliveries
			WHERE state IN ('pending', 'retrying') AND lease_owner IS NULL AND next_attempt_at <= $1
			  AND NOT (webhook_id = ANY($5)) AND NOT (tenant_id = ANY($6))
			UNION ALL
			SELECT id, tenant_id, lease_expires_at FROM webhook_deliveries
			WHERE lease_owner IS NOT NULL AND lease_expires_at <= $1
			  AND NOT (webhook_id = ANY($5)) AND NOT (tenant_id = ANY($6))
		), turns AS (
			SELECT id, t, turn FROM (
				SELECT id, t, row_number() OVER (PARTITION BY tenant_id ORDER BY t, id) AS turn FROM cand) r
			ORDER BY turn, t, id LIMIT 2 * $2
		), pick AS (
			-- Twice the limit are candidates: rows another node locked
			-- are skipped, and the next ones in turn taken instead.
			SELECT d.id FROM webhook_deliveries d JOIN turns USING (id)
			WHERE (d.state IN ('pending', 'retrying') AND d.lease_owner IS NULL AND d.next_attempt_at <= $1)
			   OR (d.lease_owner IS NOT NULL AND d.lease_expires_at <= $1)
			ORDER BY turns.turn, turns.t, turns.id LIMIT $2
			FOR UPDATE OF d SKIP LOCKED
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
		SELECT d.*, w.url, w.secret, w.state = 'disabled' FROM upd d JOIN webhooks w ON w.id = d.webhook_id`,
		now, c.Limit, c.Owner, now.Add(c.Lease), c.SkipWebhooks, c.SkipTenants)
	if err != nil {
		return nil, fmt.Errorf("postgres: claim deliveries: %w", err)
	}
	slices.SortFunc(ds, linkforge.CompareDeliveriesDue)
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

// FinishDelivery records the outcome of an attempt under its claim. A
// failure of a delivery whose webhook is disabled is final (dead): nothing
// of a disabled webhook stays due. With o.DisableWebhook the webhook is
// disabled and its waiting deliveries stopped, in the same transaction.
func (db *DB) FinishDelivery(ctx context.Context, o linkforge.DeliveryOutcome) (bool, error) {
	var next *time.Time
	if o.State == linkforge.DeliveryRetrying {
		n := o.NextAttemptAt.UTC().Truncate(time.Microsecond)
		next = &n
	}
	at := o.At.UTC().Truncate(time.Microsecond)
	found := false
	err := pgx.BeginFunc(ctx, db.pool, func(tx pgx.Tx) error {
		var webhookID string
		err := tx.QueryRow(ctx,
			`UPDATE webhook_deliveries d SET
				state = CASE WHEN $1 = 'retrying' AND (SELECT w.state FROM webhooks w WHERE w.id = d.webhook_id) = 'disabled'
					THEN 'dead' ELSE $1 END,
				last_status = $2, last_error = $3,
				next_attempt_at = COALESCE($4, d.next_attempt_at), lease_owner = NULL, lease_expires_at = NULL, updated_at = $5
			 WHERE d.id = $6 AND d.lease_owner = $7 AND d.lease_seq = $8 RETURNING d.webhook_id`,
			string(o.State), o.Status, linkforge.TruncateError(o.Error), next, at, o.Lease.ID, o.Lease.Owner, o.Lease.Seq).Scan(&webhookID)
		if errors.Is(err, pgx.ErrNoRows) {
			return nil
		}
		if err != nil {
			return err
		}
		found = true
		if !o.DisableWebhook {
			return nil
		}
		if _, err := tx.Exec(ctx, `UPDATE webhooks SET state = 'disabled' WHERE id = $1`, webhookID); err != nil {
			return fmt.Errorf("disable webhook %s: %w", webhookID, err)
		}
		return stopDeliveries(ctx, tx, webhookID, linkforge.StoppedGone, at)
	})
	if err != nil {
		return false, fmt.Errorf("postgres: finish delivery %d: %w", o.Lease.ID, err)
	}
	return found, nil
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

func deliveryScan(withWebhook bool) func(pgx.Row) (linkforge.Delivery, error) {
	return func(row pgx.Row) (linkforge.Delivery, error) {
		var (
			d     linkforge.Delivery
			body  string
			state string
			owner *string
		)
		dest := []any{&d.ID, &d.WebhookID, &d.TenantID, &d.EventID, &d.EventType, &body, &state, &d.Attempts,
			&d.LastStatus, &d.LastError, &d.NextAttemptAt, &owner, &d.LeaseSeq, &d.CreatedAt, &d.UpdatedAt}
		if withWebhook {
			dest = append(dest, &d.URL, &d.Secret, &d.WebhookDisabled)
		}
		if err := row.Scan(dest...); err != nil {
			return d, err
		}
		d.Body = []byte(body)
		d.State = linkforge.DeliveryState(state)
		d.NextAttemptAt, d.CreatedAt, d.UpdatedAt = d.NextAttemptAt.UTC(), d.CreatedAt.UTC(), d.UpdatedAt.UTC()
		if owner != nil {
			d.LeaseOwner = *owner
		}
		return d, nil
	}
}

// EnqueueDelivery writes ev as one delivery of the tenant's webhook. The
// webhook row is locked FOR SHARE while the delivery is inserted: a
// concurrent disable (an UPDATE of that row) waits for the commit, and
// then stops this delivery with the others, or runs first and this
// answers the conflict.
func (db *DB) EnqueueDelivery(ctx context.Context, tenantID int64, webhookID string, ev linkforge.Event, now time.Time) (linkforge.Delivery, error) {
	var out linkforge.Delivery
	w := db.writes.Begin()
	err := pgx.BeginFunc(ctx, db.pool, func(tx pgx.Tx) error {
		var state string
		err := tx.QueryRow(ctx, `SELECT state FROM webhooks WHERE id = $1 AND tenant_id = $2 FOR SHARE`,
			webhookID, tenantID).Scan(&state)
		if errors.Is(err, pgx.ErrNoRows) {
			return notFound("webhook")
		}
		if err != nil {
			return err
		}
		if linkforge.WebhookState(state) == linkforge.WebhookDisabled {
			return linkforge.Errorf(linkforge.EConflict, "webhook %s is disabled: enable it first", webhookID)
		}
		out, err = oneDelivery(ctx, tx, `INSERT INTO webhook_deliveries AS d (webhook_id, tenant_id, event_id, event_type, body,
				next_attempt_at, created_at, updated_at)
			 VALUES ($1, $2, $3, $4, $5, $6, $6, $6) RETURNING `+deliveryColumns,
			webhookID, tenantID, ev.ID, ev.Type, string(ev.Body), now.UTC().Truncate(time.Microsecond))
		if err != nil {
			return err
		}
		return w.WebhookTested(ctx, writeTx{tx}, tenantID, webhookID, now)
	})
	if err != nil {
		return linkforge.Delivery{}, wrap("enqueue delivery", err)
	}
	w.Committed()
	return out, nil
}

// oneDelivery runs a statement that writes one delivery and returns it
// (RETURNING deliveryColumns).
func oneDelivery(ctx context.Context, tx pgx.Tx, sql string, args ...any) (linkforge.Delivery, error) {
	rows, err := tx.Query(ctx, sql, args...)
	if err != nil {
		return linkforge.Delivery{}, err
	}
	ds, err := collect(rows, deliveryScan(false))
	if err != nil {
		return linkforge.Delivery{}, err
	}
	if len(ds) != 1 {
		return linkforge.Delivery{}, fmt.Errorf("read back %d rows", len(ds))
	}
	return ds[0], nil
}
