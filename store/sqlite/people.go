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
	res, err := db.writer.ExecContext(ctx,
		`UPDATE tokens SET revoked_at = COALESCE(revoked_at, ?) WHERE id = ? AND tenant_id = ?`,
		toMicros(now()), id, tenantID)
	if err != nil {
		return fmt.Errorf("sqlite: revoke tenant token: %w", err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return fmt.Errorf("sqlite: revoke tenant token: %w", err)
	}
	if n == 0 {
		return notFound("token")
	}
	return nil
}
