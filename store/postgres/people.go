package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/linkforge/linkforge"
)

// TenantByID returns the tenant with that id, or ENotFound.
func (db *DB) TenantByID(ctx context.Context, id int64) (linkforge.Tenant, error) {
	t, err := scanTenant(db.pool.QueryRow(ctx,
		`SELECT id, name, created_at FROM tenants WHERE id = $1`, id))
	if errors.Is(err, pgx.ErrNoRows) {
		return linkforge.Tenant{}, notFound("tenant")
	}
	if err != nil {
		return linkforge.Tenant{}, fmt.Errorf("postgres: tenant by id: %w", err)
	}
	return t, nil
}

// RevokeTenantToken revokes a token of tenantID; another tenant's or an
// unknown id answers ENotFound. Revoking twice keeps the first time.
func (db *DB) RevokeTenantToken(ctx context.Context, tenantID, id int64) error {
	tag, err := db.pool.Exec(ctx,
		`UPDATE tokens SET revoked_at = COALESCE(revoked_at, $1) WHERE id = $2 AND tenant_id = $3`, now(), id, tenantID)
	if err != nil {
		return fmt.Errorf("postgres: revoke tenant token: %w", err)
	}
	if tag.RowsAffected() == 0 {
		return notFound("token")
	}
	return nil
}
