package sqlite

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/linkforge/linkforge"
)

// ListAudit returns the tenant's events newest first (see
// linkforge.AuditStore).
func (db *DB) ListAudit(ctx context.Context, tenantID int64, aq linkforge.AuditQuery) ([]linkforge.AuditEvent, error) {
	if aq.Limit < 1 || aq.Limit > 1000 {
		return nil, linkforge.InvalidField("limit", "must be 1..1000")
	}
	q := `SELECT id, tenant_id, at, actor_type, actor_id, actor_name, action, target
	      FROM audit_events WHERE tenant_id = ?`
	args := []any{tenantID}
	if aq.Before > 0 {
		q += ` AND id < ?`
		args = append(args, aq.Before)
	}
	if p := aq.ActionPattern(); p != "" {
		q += ` AND action LIKE ? ESCAPE '\'`
		args = append(args, p)
	}
	if aq.Actor != "" {
		q += ` AND actor_name = ?`
		args = append(args, aq.Actor)
	}
	q += ` ORDER BY id DESC LIMIT ?`
	args = append(args, aq.Limit)
	events, err := query(ctx, db.reader, scanAudit, q, args...)
	if err != nil {
		return nil, fmt.Errorf("sqlite: list audit: %w", err)
	}
	return events, nil
}

func scanAudit(row scanner) (linkforge.AuditEvent, error) {
	var (
		e     linkforge.AuditEvent
		at    int64
		actor sql.NullInt64
	)
	if err := row.Scan(&e.ID, &e.TenantID, &at, &e.Actor.Type, &actor, &e.Actor.Name, &e.Action, &e.Target); err != nil {
		return linkforge.AuditEvent{}, err
	}
	e.At = fromMicros(at)
	e.Actor.ID = actor.Int64
	return e, nil
}

// inWriteTx runs fn in a transaction on the writer and commits it unless
// fn fails: for the writes of one statement that need their audit event
// beside them.
func (db *DB) inWriteTx(ctx context.Context, fn func(tx *sql.Tx) error) error {
	tx, err := db.writer.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if err := fn(tx); err != nil {
		return err
	}
	return tx.Commit()
}

// wrapWrite is wrapRead for a write's result, nil for nil.
func wrapWrite(op string, err error) error {
	if err == nil {
		return nil
	}
	return wrapRead(op, err)
}
