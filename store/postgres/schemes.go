package postgres

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"
)

// TargetSchemes returns the tenant's allowlist of extra target schemes.
func (db *DB) TargetSchemes(ctx context.Context, tenantID int64) ([]string, error) {
	var s string
	err := db.pool.QueryRow(ctx, `SELECT target_schemes FROM tenants WHERE id = $1`, tenantID).Scan(&s)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, notFound("tenant")
	}
	if err != nil {
		return nil, fmt.Errorf("postgres: target schemes: %w", err)
	}
	return strings.Fields(s), nil
}

// SetTargetSchemes replaces the tenant's allowlist, audited in the same
// transaction.
func (db *DB) SetTargetSchemes(ctx context.Context, tenantID int64, schemes []string) error {
	list := strings.Join(schemes, " ")
	err := pgx.BeginFunc(ctx, db.pool, func(tx pgx.Tx) error {
		ct, err := tx.Exec(ctx, `UPDATE tenants SET target_schemes = $1 WHERE id = $2`, list, tenantID)
		if err != nil {
			return err
		}
		if ct.RowsAffected() == 0 {
			return notFound("tenant")
		}
		return db.writes.Begin().TargetSchemesSet(ctx, writeTx{tx}, tenantID, list, now())
	})
	if err != nil {
		return wrap("set target schemes", err)
	}
	return nil
}
