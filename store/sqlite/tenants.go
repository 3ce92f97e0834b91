package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/linkforge/linkforge"
)

// EnsureTenant returns the tenant called name, creating it if needed. Two
// callers racing on a new name get the same tenant: the insert yields to the
// existing row instead of failing.
func (db *DB) EnsureTenant(ctx context.Context, name string) (linkforge.Tenant, error) {
	tx, err := db.writer.BeginTx(ctx, nil)
	if err != nil {
		return linkforge.Tenant{}, fmt.Errorf("sqlite: ensure tenant: %w", err)
	}
	defer tx.Rollback()

	if _, err := tx.ExecContext(ctx,
		`INSERT INTO tenants (name, created_at) VALUES (?, ?) ON CONFLICT (name) DO NOTHING`,
		name, toMicros(now())); err != nil {
		return linkforge.Tenant{}, fmt.Errorf("sqlite: ensure tenant: %w", err)
	}
	t, err := scanTenant(tx.QueryRowContext(ctx,
		`SELECT id, name, created_at FROM tenants WHERE name = ?`, name))
	if err != nil {
		return linkforge.Tenant{}, fmt.Errorf("sqlite: ensure tenant: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return linkforge.Tenant{}, fmt.Errorf("sqlite: ensure tenant: %w", err)
	}
	return t, nil
}

// TenantByName returns the tenant called name, or ENotFound.
func (db *DB) TenantByName(ctx context.Context, name string) (linkforge.Tenant, error) {
	t, err := scanTenant(db.reader.QueryRowContext(ctx,
		`SELECT id, name, created_at FROM tenants WHERE name = ?`, name))
	if errors.Is(err, sql.ErrNoRows) {
		return linkforge.Tenant{}, notFound("tenant")
	}
	if err != nil {
		return linkforge.Tenant{}, fmt.Errorf("sqlite: tenant by name: %w", err)
	}
	return t, nil
}

func scanTenant(row scanner) (linkforge.Tenant, error) {
	var (
		t       linkforge.Tenant
		created int64
	)
	if err := row.Scan(&t.ID, &t.Name, &created); err != nil {
		return linkforge.Tenant{}, err
	}
	t.CreatedAt = fromMicros(created)
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
	if t.RevokedAt != nil {
		r := t.RevokedAt.UTC().Truncate(time.Microsecond)
		t.RevokedAt = &r
	}
	err := db.inWriteTx(ctx, func(tx *sql.Tx) error {
		if err := tx.QueryRowContext(ctx,
			`INSERT INTO tokens (tenant_id, name, hash, display, created_at, revoked_at, role)
			 VALUES (?, ?, ?, ?, ?, ?, ?) RETURNING id`,
			t.TenantID, t.Name, t.Hash, t.Display, toMicros(t.CreatedAt), nullMicros(t.RevokedAt), string(t.Role),
		).Scan(&t.ID); err != nil {
			return err
		}
		return db.writes.Begin().TokenCreated(ctx, writeTx{tx}, t.TenantID, t.ID, t.CreatedAt)
	})
	switch {
	case isUnique(err):
		return linkforge.Token{}, &linkforge.Error{Code: linkforge.EConflict, Message: "token hash already in use", Err: err}
	case isForeignKey(err):
		return linkforge.Token{}, &linkforge.Error{Code: linkforge.ENotFound, Message: "tenant not found", Err: err}
	case err != nil:
		return linkforge.Token{}, fmt.Errorf("sqlite: create token: %w", err)
	}
	return t, nil
}

// TokenByHash returns the unrevoked token with that hash, or ENotFound.
func (db *DB) TokenByHash(ctx context.Context, hash []byte) (linkforge.Token, error) {
	var tokenSuspended bool
	t, err := scanTokenWith(db.reader.QueryRowContext(ctx,
		`SELECT `+tokenColumns+`, (SELECT t.suspended_at IS NOT NULL FROM tenants t WHERE t.id = tokens.tenant_id)
		 FROM tokens WHERE hash = ? AND revoked_at IS NULL`, hash), &tokenSuspended)
	if errors.Is(err, sql.ErrNoRows) {
		return linkforge.Token{}, notFound("token")
	}
	if err != nil {
		return linkforge.Token{}, fmt.Errorf("sqlite: token by hash: %w", err)
	}
	t.TenantSuspended = tokenSuspended
	return t, nil
}

// ListTokens returns the tenant's tokens, revoked ones included, oldest first.
func (db *DB) ListTokens(ctx context.Context, tenantID int64) ([]linkforge.Token, error) {
	tokens, err := query(ctx, db.reader, scanToken,
		`SELECT `+tokenColumns+` FROM tokens WHERE tenant_id = ? ORDER BY id`, tenantID)
	if err != nil {
		return nil, fmt.Errorf("sqlite: list tokens: %w", err)
	}
	return tokens, nil
}

// RevokeToken marks the token revoked. Revoking it again keeps the first
// revocation time and succeeds; an unknown id answers ENotFound.
func (db *DB) RevokeToken(ctx context.Context, id int64) error {
	return db.revokeToken(ctx, `id = ?`, id)
}

// ActiveTokens returns those of ids that name an unrevoked token, in one
// statement: the ids travel as one JSON array.
func (db *DB) ActiveTokens(ctx context.Context, ids []int64) ([]int64, error) {
	if len(ids) == 0 {
		return []int64{}, nil
	}
	list, err := json.Marshal(ids)
	if err != nil {
		return nil, fmt.Errorf("sqlite: active tokens: %w", err)
	}
	rows, err := db.reader.QueryContext(ctx,
		`SELECT id FROM tokens WHERE id IN (SELECT value FROM json_each(?)) AND revoked_at IS NULL
		 AND NOT EXISTS (SELECT 1 FROM tenants t WHERE t.id = tokens.tenant_id AND t.suspended_at IS NOT NULL)`, string(list))
	if err != nil {
		return nil, fmt.Errorf("sqlite: active tokens: %w", err)
	}
	active, err := collect(rows, func(r scanner) (int64, error) {
		var id int64
		err := r.Scan(&id)
		return id, err
	})
	if err != nil {
		return nil, fmt.Errorf("sqlite: active tokens: %w", err)
	}
	return active, nil
}

func scanToken(row scanner) (linkforge.Token, error) { return scanTokenWith(row) }

// scanTokenWith is scanToken of a row with the columns extra after
// tokenColumns.
func scanTokenWith(row scanner, extra ...any) (linkforge.Token, error) {
	var (
		t       linkforge.Token
		created int64
		revoked sql.NullInt64
	)
	if err := row.Scan(append([]any{&t.ID, &t.TenantID, &t.Name, &t.Hash, &t.Display, &created, &revoked, &t.Role}, extra...)...); err != nil {
		return linkforge.Token{}, err
	}
	t.CreatedAt = fromMicros(created)
	t.RevokedAt = timePtr(revoked)
	return t, nil
}
