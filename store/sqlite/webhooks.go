package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/store/internal/writes"
)

// OnDeliveries sets the function the store's hook tells after a committed
// write added webhook deliveries, with their due time. It is for a caller
// that builds its scheduler after the store without a shared hook (tests);
// a server passes WithWake at Open and schedule.Config.Wake instead.
func (db *DB) OnDeliveries(f func(due time.Time)) { db.writes.OnDeliveries(f) }

// SetShortBase sets how the events of later writes name their link's
// domain and short URL: the server's public URL (linkforge.ShortBase).
func (db *DB) SetShortBase(b linkforge.ShortBase) { db.writes.SetShortBase(b) }

// txQuerier is what the click events need of a *sql.Tx.
type txQuerier interface {
	execer
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// clickEventsSQL reads, for the flushed (link, minute) pairs of ?1 (a JSON
// array of [link id, unix minute]), the linkforge.ClickRows of the links
// whose tenant has an active webhook for the click events: one statement
// for the whole flush.
const clickEventsSQL = `WITH f AS (
		SELECT DISTINCT value ->> 0 AS link_id, value ->> 1 AS bucket FROM json_each(?1)
	), t AS MATERIALIZED (
		SELECT l.id, l.tenant_id, l.slug, l.domain_id, (SELECT d.host FROM domains d WHERE d.id = l.domain_id) AS host, l.max_clicks,
			(SELECT COALESCE(SUM(r.count), 0) FROM click_rollup r WHERE r.link_id = l.id)
			+ (SELECT COALESCE(SUM(p.count), 0) FROM click_rollup_pruned p WHERE p.link_id = l.id) AS total
		FROM links l
		WHERE l.id IN (SELECT link_id FROM f) AND EXISTS (
			SELECT 1 FROM webhooks w, json_each(w.events) e
			WHERE w.tenant_id = l.tenant_id AND w.state = 'active' AND e.value IN ('link.clicks', 'link.limit_reached'))
	), b AS (
		SELECT r.link_id, r.bucket, SUM(r.count) AS count FROM click_rollup r
		JOIN f ON f.link_id = r.link_id AND f.bucket = r.bucket
		WHERE r.link_id IN (SELECT id FROM t)
		GROUP BY r.link_id, r.bucket
	)
	SELECT t.id, t.tenant_id, t.slug, t.domain_id, COALESCE(t.host, ''), t.max_clicks, t.total, b.bucket, b.count
	FROM t LEFT JOIN b ON b.link_id = t.id
	ORDER BY t.id, b.bucket`

// clickEvents enqueues, in the flush's transaction, the events of the
// flushed rows (writes.ClickEvents). Without any webhook for these events
// it costs one probe of the (small) webhooks table.
func clickEvents(ctx context.Context, tx txQuerier, w *writes.Write, rows []linkforge.RollupRow, now time.Time) error {
	if len(rows) == 0 {
		return nil
	}
	var any int
	err := tx.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM webhooks w, json_each(w.events) e
		WHERE e.value IN ('link.clicks', 'link.limit_reached'))`).Scan(&any)
	if err != nil || any == 0 {
		return err
	}
	pairs := make([][2]int64, len(rows))
	for i, r := range rows {
		pairs[i] = [2]int64{r.LinkID, r.Bucket.Unix()}
	}
	js, err := json.Marshal(pairs)
	if err != nil {
		return fmt.Errorf("click events: %w", err)
	}
	q, err := tx.QueryContext(ctx, clickEventsSQL, string(js))
	if err != nil {
		return fmt.Errorf("click events: %w", err)
	}
	crs, err := collect(q, func(q scanner) (linkforge.ClickRow, error) {
		var (
			r                  linkforge.ClickRow
			max, bucket, count sql.NullInt64
		)
		if err := q.Scan(&r.LinkID, &r.TenantID, &r.Slug, &r.DomainID, &r.Host, &max, &r.Total, &bucket, &count); err != nil {
			return r, err
		}
		r.MaxClicks, r.Count = intPtr(max), count.Int64
		if bucket.Valid {
			b := time.Unix(bucket.Int64, 0).UTC()
			r.Bucket = &b
		}
		return r, nil
	})
	if err != nil {
		return fmt.Errorf("click events: %w", err)
	}
	if err := variantHours(ctx, tx, crs, string(js)); err != nil {
		return fmt.Errorf("click events: %w", err)
	}
	return w.ClickEvents(ctx, writeTx{tx}, crs, now)
}

const webhookColumns = `id, tenant_id, url, events, state, created_at`

// CreateWebhook stores w (its ID and Secret chosen by the caller), unless
// the tenant has MaxWebhooksPerTenant already: the count and the insert
// are one statement on the single writer, so concurrent creates cannot
// pass the bound together.
func (db *DB) CreateWebhook(ctx context.Context, w linkforge.Webhook) (linkforge.Webhook, error) {
	w = w.ForCreate(now())
	ev, err := json.Marshal(w.Events)
	if err != nil {
		return linkforge.Webhook{}, fmt.Errorf("sqlite: create webhook: %w", err)
	}
	err = db.inWriteTx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx,
			`INSERT INTO webhooks (id, tenant_id, url, events, secret, created_at)
			 SELECT ?1, ?2, ?3, ?4, ?5, ?6 WHERE (SELECT count(*) FROM webhooks WHERE tenant_id = ?2) < ?7`,
			w.ID, w.TenantID, w.URL, string(ev), w.Secret, toMicros(w.CreatedAt), linkforge.MaxWebhooksPerTenant)
		if err != nil {
			if isForeignKey(err) {
				return notFound("tenant")
			}
			return err
		}
		if n, err := res.RowsAffected(); err != nil {
			return err
		} else if n == 0 {
			return linkforge.WebhookQuotaExceeded()
		}
		return db.writes.Begin().WebhookCreated(ctx, writeTx{tx}, w)
	})
	if err != nil {
		return linkforge.Webhook{}, wrapRead("create webhook", err)
	}
	return w, nil
}

// ListWebhooks returns the tenant's webhooks, oldest first, without secrets.
func (db *DB) ListWebhooks(ctx context.Context, tenantID int64) ([]linkforge.Webhook, error) {
	out, err := query(ctx, db.reader, webhookScan(),
		`SELECT `+webhookColumns+` FROM webhooks WHERE tenant_id = ? ORDER BY created_at, id`, tenantID)
	if err != nil {
		return nil, fmt.Errorf("sqlite: list webhooks: %w", err)
	}
	return out, nil
}

func webhookScan() func(scanner) (linkforge.Webhook, error) {
	return func(rows scanner) (linkforge.Webhook, error) {
		var w linkforge.Webhook
		var ev string
		var created int64
		if err := rows.Scan(&w.ID, &w.TenantID, &w.URL, &ev, &w.State, &created); err != nil {
			return w, err
		}
		w.CreatedAt = fromMicros(created)
		err := json.Unmarshal([]byte(ev), &w.Events)
		return w, err
	}
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
	ws, err := query(ctx, tx, webhookScan(), `UPDATE webhooks SET state = ? WHERE id = ? AND tenant_id = ? RETURNING `+webhookColumns,
		string(state), id, tenantID)
	if err != nil {
		return linkforge.Webhook{}, fmt.Errorf("sqlite: set webhook state: %w", err)
	}
	if len(ws) == 0 {
		return linkforge.Webhook{}, notFound("webhook")
	}
	if state == linkforge.WebhookDisabled {
		if err := stopDeliveries(ctx, tx, id, linkforge.StoppedDisabled, at); err != nil {
			return linkforge.Webhook{}, err
		}
	}
	if err := db.writes.Begin().WebhookStateSet(ctx, writeTx{tx}, tenantID, id, state, at); err != nil {
		return linkforge.Webhook{}, fmt.Errorf("sqlite: set webhook state: %w", err)
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
	err := db.inWriteTx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `DELETE FROM webhooks WHERE id = ? AND tenant_id = ?`, id, tenantID)
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil {
			return err
		} else if n == 0 {
			return notFound("webhook")
		}
		return db.writes.Begin().WebhookDeleted(ctx, writeTx{tx}, tenantID, id, now())
	})
	return wrapWrite("delete webhook", err)
}

const deliveryColumns = `id, webhook_id, tenant_id, event_id, event_type, body, state, attempts,
	last_status, last_error, next_attempt_at, lease_owner, lease_seq, created_at, updated_at`

// ListDeliveries returns the webhook's deliveries in state, newest first.
func (db *DB) ListDeliveries(ctx context.Context, tenantID int64, webhookID string, state linkforge.DeliveryState, limit int) ([]linkforge.Delivery, error) {
	if err := linkforge.CheckDeliveryFilter(state); err != nil {
		return nil, err
	}
	limit = linkforge.PageLimit(limit, linkforge.DefaultAlarmPage, linkforge.MaxAlarmPage)
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
	ds, err := query(ctx, db.reader, deliveryScan(false), q, args...)
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
	if err := linkforge.CheckDeliveryRetry(id, linkforge.DeliveryState(state), linkforge.WebhookState(whState)); err != nil {
		return linkforge.Delivery{}, err
	}
	ts := toMicros(now)
	rows, err := tx.QueryContext(ctx, `UPDATE webhook_deliveries SET state = 'pending', attempts = 0,
		next_attempt_at = ?, updated_at = ? WHERE id = ? RETURNING `+deliveryColumns, ts, ts, id)
	if err != nil {
		return linkforge.Delivery{}, fmt.Errorf("sqlite: retry delivery: %w", err)
	}
	ds, err := collect(rows, deliveryScan(false))
	if err != nil || len(ds) != 1 {
		return linkforge.Delivery{}, fmt.Errorf("sqlite: retry delivery %d: %d rows: %w", id, len(ds), err)
	}
	w := db.writes.Begin()
	if err := w.DeliveryRetried(ctx, writeTx{tx}, tenantID, id, now); err != nil {
		return linkforge.Delivery{}, fmt.Errorf("sqlite: retry delivery: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return linkforge.Delivery{}, fmt.Errorf("sqlite: retry delivery: %w", err)
	}
	w.Committed()
	return ds[0], nil
}

// ClaimDeliveries claims due deliveries in one UPDATE ... RETURNING on
// the single writer connection (atomic against every other claim, as
// ClaimAlarms). The candidates are ranked within their tenant by due
// time, and picked by rank first: round robin across tenants.
func (db *DB) ClaimDeliveries(ctx context.Context, c linkforge.DeliveryClaim) ([]linkforge.Delivery, error) {
	c, err := c.Normalized()
	if err != nil {
		return nil, fmt.Errorf("sqlite: claim deliveries: %w", err)
	}
	skipW, err := json.Marshal(c.SkipWebhooks)
	if err != nil {
		return nil, fmt.Errorf("sqlite: claim deliveries: %w", err)
	}
	skipT, err := json.Marshal(c.SkipTenants)
	if err != nil {
		return nil, fmt.Errorf("sqlite: claim deliveries: %w", err)
	}
	now := c.Now
	ds, err := query(ctx, db.writer, deliveryScan(true),
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
	slices.SortFunc(ds, linkforge.CompareDeliveriesDue)
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
		string(o.State), o.Status, linkforge.TruncateError(o.Error), next, toMicros(o.At), o.Lease.ID, o.Lease.Owner, o.Lease.Seq).Scan(&webhookID)
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
		if err := stopDeliveries(ctx, tx, webhookID, linkforge.StoppedGone, o.At); err != nil {
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

func deliveryScan(withWebhook bool) func(scanner) (linkforge.Delivery, error) {
	return func(rows scanner) (linkforge.Delivery, error) {
		var (
			d                  linkforge.Delivery
			body               string
			next, created, upd int64
			owner              sql.NullString
		)
		dest := []any{&d.ID, &d.WebhookID, &d.TenantID, &d.EventID, &d.EventType, &body, &d.State, &d.Attempts,
			&d.LastStatus, &d.LastError, &next, &owner, &d.LeaseSeq, &created, &upd}
		if withWebhook {
			dest = append(dest, &d.URL, &d.Secret, &d.WebhookDisabled)
		}
		err := rows.Scan(dest...)
		d.Body = json.RawMessage(body)
		d.NextAttemptAt, d.CreatedAt, d.UpdatedAt = fromMicros(next), fromMicros(created), fromMicros(upd)
		d.LeaseOwner = owner.String
		return d, err
	}
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
	ds, err := collect(rows, deliveryScan(false))
	if err != nil {
		return linkforge.Delivery{}, fmt.Errorf("sqlite: enqueue delivery: %w", err)
	}
	if len(ds) != 1 {
		return linkforge.Delivery{}, fmt.Errorf("sqlite: enqueue delivery: read back %d rows", len(ds))
	}
	w := db.writes.Begin()
	if err := w.WebhookTested(ctx, writeTx{tx}, tenantID, webhookID, now); err != nil {
		return linkforge.Delivery{}, fmt.Errorf("sqlite: enqueue delivery: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return linkforge.Delivery{}, fmt.Errorf("sqlite: enqueue delivery: %w", err)
	}
	w.Committed()
	return ds[0], nil
}
