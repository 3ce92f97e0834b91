package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/linkforge/linkforge"
)

// writeTx is the SQL of a write's orchestration (store/internal/writes),
// in the write's transaction.
type writeTx struct{ tx txQuerier }

func (t writeTx) DomainHost(ctx context.Context, id int64) (string, bool, error) {
	var host string
	err := t.tx.QueryRowContext(ctx, `SELECT host FROM domains WHERE id = ?`, id).Scan(&host)
	if errors.Is(err, sql.ErrNoRows) {
		return "", false, nil
	}
	return host, err == nil, err
}

func (t writeTx) InsertDeliveries(ctx context.Context, ev linkforge.Event, key string, now time.Time) (int64, error) {
	ts := toMicros(now)
	var k any
	if key != "" {
		k = key
	}
	res, err := t.tx.ExecContext(ctx,
		`INSERT INTO webhook_deliveries (webhook_id, tenant_id, event_id, event_type, event_key, body,
			next_attempt_at, created_at, updated_at)
		 SELECT w.id, w.tenant_id, ?1, ?2, ?3, ?4, ?5, ?5, ?5 FROM webhooks w
		 WHERE w.tenant_id = ?6 AND w.state = 'active' AND EXISTS (SELECT 1 FROM json_each(w.events) WHERE value = ?2)
		 ON CONFLICT DO NOTHING`,
		ev.ID, ev.Type, k, string(ev.Body), ts, ev.TenantID)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

func (t writeTx) InsertAudit(ctx context.Context, tenantID int64, a linkforge.Actor, action, target string, at time.Time) error {
	var id any
	if a.ID != 0 {
		id = a.ID
	}
	_, err := t.tx.ExecContext(ctx,
		`INSERT INTO audit_events (tenant_id, at, actor_type, actor_id, actor_name, action, target)
		 VALUES (?, ?, ?, ?, ?, ?, ?)`,
		tenantID, toMicros(at), string(a.Type), id, a.Name, action, target)
	return err
}

func (t writeTx) UserTenants(ctx context.Context, userID, also int64) ([]int64, error) {
	return query(ctx, t.tx, func(r scanner) (int64, error) {
		var id int64
		err := r.Scan(&id)
		return id, err
	}, `SELECT tenant_id FROM memberships WHERE user_id = ?1 UNION SELECT ?2 WHERE ?2 <> 0 ORDER BY 1`, userID, also)
}
