package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/linkforge/linkforge"
)

// TenantByID returns the tenant with that id, or ENotFound.
func (db *DB) TenantByID(ctx context.Context, id int64) (linkforge.Tenant, error) {
	t, err := scanTenant(db.reader.QueryRowContext(ctx,
		`SELECT id, name, created_at FROM tenants WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return linkforge.Tenant{}, notFound("tenant")
	}
	if err != nil {
		return linkforge.Tenant{}, fmt.Errorf("sqlite: tenant by id: %w", err)
	}
	return t, nil
}

// RevokeTenantToken revokes a token of tenantID; another tenant's or an
// unknown id answers ENotFound. Revoking twice keeps the first time.
func (db *DB) RevokeTenantToken(ctx context.Context, tenantID, id int64) error {
	return db.revokeToken(ctx, `id = ? AND tenant_id = ?`, id, tenantID)
}

// revokeToken revokes the token where matches, with its audit event. The
// row counts as changed even when COALESCE keeps the old time, so no row
// means no such token.
func (db *DB) revokeToken(ctx context.Context, where string, args ...any) error {
	ts := now()
	err := db.inWriteTx(ctx, func(tx *sql.Tx) error {
		var id, tenantID int64
		err := tx.QueryRowContext(ctx,
			`UPDATE tokens SET revoked_at = COALESCE(revoked_at, ?) WHERE `+where+` RETURNING id, tenant_id`,
			append([]any{toMicros(ts)}, args...)...).Scan(&id, &tenantID)
		if errors.Is(err, sql.ErrNoRows) {
			return notFound("token")
		}
		if err != nil {
			return err
		}
		return db.writes.Begin().TokenRevoked(ctx, writeTx{tx}, tenantID, id, ts)
	})
	return wrapWrite("revoke token", err)
}
