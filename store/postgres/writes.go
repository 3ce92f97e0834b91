package postgres

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/linkforge/linkforge"
)

// writeTx is the SQL of a write's orchestration (store/internal/writes),
// in the write's transaction.
type writeTx struct{ tx execer }

func (t writeTx) DomainHost(ctx context.Context, id int64) (string, bool, error) {
	var host string
	err := t.tx.QueryRow(ctx, `SELECT host FROM domains WHERE id = $1`, id).Scan(&host)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", false, nil
	}
	return host, err == nil, err
}

func (t writeTx) InsertDeliveries(ctx context.Context, ev linkforge.Event, key string, now time.Time) (int64, error) {
	var k *string
	if key != "" {
		k = &key
	}
	tag, err := t.tx.Exec(ctx,
		`INSERT INTO webhook_deliveries (webhook_id, tenant_id, event_id, event_type, event_key, body,
			next_attempt_at, created_at, updated_at)
		 SELECT w.id, w.tenant_id, $1, $2, $3, $4, $5, $5, $5 FROM webhooks w
		 WHERE w.tenant_id = $6 AND w.state = 'active' AND $2 = ANY(w.events)
		 ON CONFLICT DO NOTHING`,
		ev.ID, ev.Type, k, string(ev.Body), now.UTC().Truncate(time.Microsecond), ev.TenantID)
	return tag.RowsAffected(), err
}

func (t writeTx) InsertAudit(ctx context.Context, tenantID int64, a linkforge.Actor, action, target string, at time.Time) error {
	var id *int64
	if a.ID != 0 {
		id = &a.ID
	}
	_, err := t.tx.Exec(ctx,
		`INSERT INTO audit_events (tenant_id, at, actor_type, actor_id, actor_name, action, target)
		 VALUES ($1, $2, $3, $4, $5, $6, $7)`,
		tenantID, at, string(a.Type), id, a.Name, action, target)
	return err
}

func (t writeTx) UserTenants(ctx context.Context, userID, also int64) ([]int64, error) {
	rows, err := t.tx.Query(ctx, `SELECT tenant_id FROM memberships WHERE user_id = $1
		UNION SELECT $2::bigint WHERE $2::bigint <> 0 ORDER BY 1`, userID, also)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, pgx.RowTo[int64])
}
