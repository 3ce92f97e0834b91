package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/linkforge/linkforge"
)

// EnsureTenant returns the tenant called name, creating it if needed. Two
// callers racing on a new name get the same tenant: the insert yields to the
// other's row (ON CONFLICT waits for its transaction), and the SELECT that
// follows is a new statement, so in READ COMMITTED it sees that row.
func (db *DB) EnsureTenant(ctx context.Context, name string) (linkforge.Tenant, error) {
	t, err := scanTenant(db.pool.QueryRow(ctx,
		`INSERT INTO tenants (name, created_at) VALUES ($1, $2)
		 ON CONFLICT (name) DO NOTHING RETURNING id, name, created_at`, name, now()))
	if err == nil {
		return t, nil
	}
	if !errors.Is(err, pgx.ErrNoRows) {
		return linkforge.Tenant{}, fmt.Errorf("postgres: ensure tenant: %w", err)
	}
	// The name was taken: by a committed row, which this statement sees.
	t, err = scanTenant(db.pool.QueryRow(ctx,
		`SELECT id, name, created_at FROM tenants WHERE name = $1`, name))
	if err != nil {
		return linkforge.Tenant{}, fmt.Errorf("postgres: ensure tenant: %w", err)
	}
	return t, nil
}

// TenantByName returns the tenant called name, or ENotFound.
func (db *DB) TenantByName(ctx context.Context, name string) (linkforge.Tenant, error) {
	t, err := scanTenant(db.pool.QueryRow(ctx,
		`SELECT id, name, created_at FROM tenants WHERE name = $1`, name))
	if errors.Is(err, pgx.ErrNoRows) {
		return linkforge.Tenant{}, notFound("tenant")
	}
	if err != nil {
		return linkforge.Tenant{}, fmt.Errorf("postgres: tenant by name: %w", err)
	}
	return t, nil
}

func scanTenant(row pgx.Row) (linkforge.Tenant, error) {
	var t linkforge.Tenant
	if err := row.Scan(&t.ID, &t.Name, &t.CreatedAt); err != nil {
		return linkforge.Tenant{}, err
	}
	t.CreatedAt = t.CreatedAt.UTC()
	return t, nil
}

const tokenColumns = `id, tenant_id, name, hash, display, created_at, revoked_at, role` //nolint:gosec // G101: column names, no credential

// CreateToken stores t and returns it with its ID and CreatedAt. A hash
// already stored answers EConflict; an unknown tenant ENotFound; a role
// that is not one of linkforge.Roles EInvalid (empty: owner).
func (db *DB) CreateToken(ctx context.Context, t linkforge.Token) (linkforge.Token, error) {
	if t.Role == "" {
		t.Role = linkforge.RoleOwner
	}
	if !t.Role.Valid() {
		return linkforge.Token{}, linkforge.InvalidField("role", "want owner, editor or viewer")
	}
	t.CreatedAt = now()
	t.RevokedAt = linkforge.NormalizeTime(t.RevokedAt)
	err := pgx.BeginFunc(ctx, db.pool, func(tx pgx.Tx) error {
		if err := tx.QueryRow(ctx,
			`INSERT INTO tokens (tenant_id, name, hash, display, created_at, revoked_at, role)
			 VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING id`,
			t.TenantID, t.Name, t.Hash, t.Display, t.CreatedAt, t.RevokedAt, string(t.Role),
		).Scan(&t.ID); err != nil {
			return err
		}
		return db.writes.Begin().TokenCreated(ctx, writeTx{tx}, t.TenantID, t.ID, t.CreatedAt)
	})
	switch pgCode(err) {
	case "":
	case uniqueViolation:
		return linkforge.Token{}, &linkforge.Error{Code: linkforge.EConflict, Message: "token hash already in use", Err: err}
	case foreignKeyViolation:
		return linkforge.Token{}, &linkforge.Error{Code: linkforge.ENotFound, Message: "tenant not found", Err: err}
	}
	if err != nil {
		return linkforge.Token{}, fmt.Errorf("postgres: create token: %w", err)
	}
	return t, nil
}

// TokenByHash returns the unrevoked token with that hash, or ENotFound.
func (db *DB) TokenByHash(ctx context.Context, hash []byte) (linkforge.Token, error) {
	var tokenSuspended bool
	t, err := scanTokenWith(db.pool.QueryRow(ctx,
		`SELECT `+tokenColumns+`, (SELECT t.suspended_at IS NOT NULL FROM tenants t WHERE t.id = tokens.tenant_id)
		 FROM tokens WHERE hash = $1 AND revoked_at IS NULL`, hash), &tokenSuspended)
	if errors.Is(err, pgx.ErrNoRows) {
		return linkforge.Token{}, notFound("token")
	}
	if err != nil {
		return linkforge.Token{}, fmt.Errorf("postgres: token by hash: %w", err)
	}
	t.TenantSuspended = tokenSuspended
	return t, nil
}

// ListTokens returns the tenant's tokens, revoked ones included, oldest
// first (never nil).
func (db *DB) ListTokens(ctx context.Context, tenantID int64) ([]linkforge.Token, error) {
	tokens, err := query(ctx, db.pool, scanToken,
		`SELECT `+tokenColumns+` FROM tokens WHERE tenant_id = $1 ORDER BY id`, tenantID)
	if err != nil {
		return nil, fmt.Errorf("postgres: list tokens: %w", err)
	}
	return tokens, nil
}

// RevokeToken marks the token revoked. Revoking it again keeps the first
// revocation time and succeeds; an unknown id answers ENotFound.
func (db *DB) RevokeToken(ctx context.Context, id int64) error {
	return db.revokeToken(ctx, `id = $2`, id)
}

// ActiveTokens returns those of ids that name an unrevoked token, in one
// statement with an array parameter.
func (db *DB) ActiveTokens(ctx context.Context, ids []int64) ([]int64, error) {
	if len(ids) == 0 {
		return []int64{}, nil
	}
	rows, err := db.pool.Query(ctx,
		`SELECT id FROM tokens WHERE id = ANY($1) AND revoked_at IS NULL
		 AND NOT EXISTS (SELECT 1 FROM tenants t WHERE t.id = tokens.tenant_id AND t.suspended_at IS NOT NULL)`, ids)
	if err != nil {
		return nil, fmt.Errorf("postgres: active tokens: %w", err)
	}
	active, err := pgx.CollectRows(rows, pgx.RowTo[int64])
	if err != nil {
		return nil, fmt.Errorf("postgres: active tokens: %w", err)
	}
	if active == nil {
		active = []int64{}
	}
	return active, nil
}

func scanToken(row pgx.Row) (linkforge.Token, error) { return scanTokenWith(row) }

// scanTokenWith is scanToken of a row with the columns extra after
// tokenColumns.
func scanTokenWith(row pgx.Row, extra ...any) (linkforge.Token, error) {
	var t linkforge.Token
	if err := row.Scan(append([]any{&t.ID, &t.TenantID, &t.Name, &t.Hash, &t.Display, &t.CreatedAt, &t.RevokedAt, &t.Role}, extra...)...); err != nil {
		return linkforge.Token{}, err
	}
	t.CreatedAt = t.CreatedAt.UTC()
	t.RevokedAt = linkforge.NormalizeTime(t.RevokedAt)
	return t, nil
}
