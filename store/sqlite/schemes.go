package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
)

// TargetSchemes returns the tenant's allowlist of extra target schemes.
func (db *DB) TargetSchemes(ctx context.Context, tenantID int64) ([]string, error) {
	var s string
	err := db.reader.QueryRowContext(ctx, `SELECT target_schemes FROM tenants WHERE id = ?`, tenantID).Scan(&s)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, notFound("tenant")
	}
	if err != nil {
		return nil, fmt.Errorf("sqlite: target schemes: %w", err)
	}
	return strings.Fields(s), nil
}

// SetTargetSchemes replaces the tenant's allowlist, audited in the same
// transaction.
func (db *DB) SetTargetSchemes(ctx context.Context, tenantID int64, schemes []string) error {
	list := strings.Join(schemes, " ")
	err := db.inWriteTx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE tenants SET target_schemes = ? WHERE id = ?`, list, tenantID)
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil {
			return err
		} else if n == 0 {
			return notFound("tenant")
		}
		return db.writes.Begin().TargetSchemesSet(ctx, writeTx{tx}, tenantID, list, now())
	})
	return wrapWrite("set target schemes", err)
}
