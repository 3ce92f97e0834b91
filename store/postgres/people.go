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
	return db.revokeToken(ctx, `id = $2 AND tenant_id = $3`, id, tenantID)
}

// revokeToken revokes the token where matches ($1 is the time), with its
// audit event. The row counts as updated even when COALESCE keeps the old
// time, so no row means no such token.
func (db *DB) revokeToken(ctx context.Context, where string, args ...any) error {
	ts := now()
	err := pgx.BeginFunc(ctx, db.pool, func(tx pgx.Tx) error {
		var id, tenantID int64
		err := tx.QueryRow(ctx,
			`UPDATE tokens SET revoked_at = COALESCE(revoked_at, $1) WHERE `+where+` RETURNING id, tenant_id`,
			append([]any{ts}, args...)...).Scan(&id, &tenantID)
		if errors.Is(err, pgx.ErrNoRows) {
			return notFound("token")
		}
		if err != nil {
			return err
		}
		return db.writes.Begin().TokenRevoked(ctx, writeTx{tx}, tenantID, id, ts)
	})
	if err != nil {
		return wrap("revoke token", err)
	}
	return nil
}
