package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/linkforge/linkforge"
)

// ListAudit returns the tenant's events newest first (see
// linkforge.AuditStore).
func (db *DB) ListAudit(ctx context.Context, tenantID int64, limit int, before int64) ([]linkforge.AuditEvent, error) {
	if limit < 1 || limit > 1000 {
		return nil, linkforge.InvalidField("limit", "must be 1..1000")
	}
	rows, err := db.pool.Query(ctx,
		`SELECT id, tenant_id, at, actor_type, actor_id, actor_name, action, target
		 FROM audit_events WHERE tenant_id = $1 AND ($2 = 0 OR id < $2)
		 ORDER BY id DESC LIMIT $3`, tenantID, before, limit)
	if err != nil {
		return nil, fmt.Errorf("postgres: list audit: %w", err)
	}
	events, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (linkforge.AuditEvent, error) {
		var (
			e     linkforge.AuditEvent
			actor *int64
		)
		err := r.Scan(&e.ID, &e.TenantID, &e.At, &e.Actor.Type, &actor, &e.Actor.Name, &e.Action, &e.Target)
		if actor != nil {
			e.Actor.ID = *actor
		}
		e.At = e.At.UTC()
		return e, err
	})
	if err != nil {
		return nil, fmt.Errorf("postgres: list audit: %w", err)
	}
	if events == nil {
		events = []linkforge.AuditEvent{}
	}
	return events, nil
}
