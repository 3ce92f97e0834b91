package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/linkforge/linkforge"
)

// ListAudit returns the tenant's events newest first (see
// linkforge.AuditStore).
func (db *DB) ListAudit(ctx context.Context, tenantID int64, aq linkforge.AuditQuery) ([]linkforge.AuditEvent, error) {
	if aq.Limit < 1 || aq.Limit > 1000 {
		return nil, linkforge.InvalidField("limit", "must be 1..1000")
	}
	rows, err := db.pool.Query(ctx,
		`SELECT id, tenant_id, at, actor_type, actor_id, actor_name, action, target
		 FROM audit_events WHERE tenant_id = $1 AND ($2 = 0 OR id < $2)
		   AND ($3 = '' OR action LIKE $3 ESCAPE '\') AND ($4 = '' OR actor_name = $4)
		 ORDER BY id DESC LIMIT $5`, tenantID, aq.Before, aq.ActionPattern(), aq.Actor, aq.Limit)
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
