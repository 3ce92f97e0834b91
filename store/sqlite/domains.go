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

const domainColumns = `id, tenant_id, host, state, is_default, root_url, not_found_url, created_at,
	verified_at, verify_attempts, verify_due_at, verify_error, verify_token,
	apple_app_site_association, asset_links`

// domainSlug names a link by its identity for a JSON parameter of a query.
type domainSlug struct {
	Domain int64  `json:"d"`
	Slug   string `json:"s"`
}

// CreateDomain stores d; a host in use by any tenant answers EConflict.
func (db *DB) CreateDomain(ctx context.Context, d linkforge.Domain) (linkforge.Domain, error) {
	return db.CreateDomainBounded(ctx, d, 0)
}

// CreateDomainBounded is CreateDomain refused with EQuotaExceeded when the
// tenant has max domains (max > 0). The count shares the insert's write
// transaction, and SQLite has one writer: no other create comes between.
func (db *DB) CreateDomainBounded(ctx context.Context, d linkforge.Domain, max int) (linkforge.Domain, error) {
	d = linkforge.NormalizeDomain(d)
	d.CreatedAt = now()
	tx, err := db.writer.BeginTx(ctx, nil)
	if err != nil {
		return linkforge.Domain{}, fmt.Errorf("sqlite: create domain: %w", err)
	}
	defer tx.Rollback()
	if max > 0 {
		var n int
		if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM domains WHERE tenant_id = ?`, d.TenantID).Scan(&n); err != nil {
			return linkforge.Domain{}, fmt.Errorf("sqlite: create domain: %w", err)
		}
		if n >= max {
			return linkforge.Domain{}, linkforge.DomainQuotaExceeded(max)
		}
	}
	if d.Default {
		if err := clearDefault(ctx, tx, d.TenantID); err != nil {
			return linkforge.Domain{}, fmt.Errorf("sqlite: create domain: %w", err)
		}
	}
	err = tx.QueryRowContext(ctx,
		`INSERT INTO domains (tenant_id, host, state, is_default, root_url, not_found_url, created_at,
		 verified_at, verify_attempts, verify_due_at, verify_error, verify_token,
		 apple_app_site_association, asset_links)
		 VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id`,
		d.TenantID, d.Host, string(d.State), d.Default, d.RootURL, d.NotFoundURL, toMicros(d.CreatedAt),
		nullMicros(d.VerifiedAt), d.VerifyAttempts, nullMicros(d.VerifyDueAt), d.VerifyError, d.VerifyToken,
		string(d.AppleAppSiteAssociation), string(d.AssetLinks)).Scan(&d.ID)
	switch {
	case isUnique(err):
		return linkforge.Domain{}, &linkforge.Error{Code: linkforge.EConflict, Message: "host already registered", Err: err}
	case isForeignKey(err):
		return linkforge.Domain{}, &linkforge.Error{Code: linkforge.ENotFound, Message: "tenant not found", Err: err}
	case err != nil:
		return linkforge.Domain{}, fmt.Errorf("sqlite: create domain: %w", err)
	}
	if err := db.writes.Begin().DomainCreated(ctx, writeTx{tx}, d); err != nil {
		return linkforge.Domain{}, fmt.Errorf("sqlite: create domain: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return linkforge.Domain{}, fmt.Errorf("sqlite: create domain: %w", err)
	}
	return d, nil
}

// TenantDomains returns the tenant's domains by host.
func (db *DB) TenantDomains(ctx context.Context, tenantID int64) ([]linkforge.Domain, error) {
	ds, err := query(ctx, db.reader, scanDomain,
		`SELECT `+domainColumns+` FROM domains WHERE tenant_id = ? ORDER BY host`, tenantID)
	if err != nil {
		return nil, fmt.Errorf("sqlite: tenant domains: %w", err)
	}
	return ds, nil
}

// AllDomains returns every domain, by id.
func (db *DB) AllDomains(ctx context.Context) ([]linkforge.Domain, error) {
	ds, err := query(ctx, db.reader, scanDomain, `SELECT `+domainColumns+` FROM domains ORDER BY id`)
	if err != nil {
		return nil, fmt.Errorf("sqlite: all domains: %w", err)
	}
	return ds, nil
}

// DomainByID returns the domain of that id, by primary key.
func (db *DB) DomainByID(ctx context.Context, id int64) (linkforge.Domain, error) {
	d, err := scanDomain(db.reader.QueryRowContext(ctx, domainByIDQuery, id))
	if errors.Is(err, sql.ErrNoRows) {
		return linkforge.Domain{}, notFound("domain")
	}
	if err != nil {
		return linkforge.Domain{}, fmt.Errorf("sqlite: domain by id: %w", err)
	}
	return d, nil
}

// domainByIDQuery reads one domain by its primary key (the test of its
// plan runs it as it is).
const domainByIDQuery = `SELECT ` + domainColumns + ` FROM domains WHERE id = ?`

// TenantDomain returns the tenant's domain of that host.
func (db *DB) TenantDomain(ctx context.Context, tenantID int64, host string) (linkforge.Domain, error) {
	d, err := tenantDomain(ctx, db.reader, tenantID, host)
	if err != nil {
		return linkforge.Domain{}, wrapRead("tenant domain", err)
	}
	return d, nil
}

func tenantDomain(ctx context.Context, q querier, tenantID int64, host string) (linkforge.Domain, error) {
	d, err := scanDomain(q.QueryRowContext(ctx,
		`SELECT `+domainColumns+` FROM domains WHERE tenant_id = ? AND host = ?`, tenantID, host))
	if errors.Is(err, sql.ErrNoRows) {
		return linkforge.Domain{}, notFound("domain")
	}
	return d, err
}

// UpdateDomain reads the tenant's domain, lets fn change it and writes it
// back in one write transaction.
func (db *DB) UpdateDomain(ctx context.Context, tenantID int64, host string, fn func(*linkforge.Domain) error) (linkforge.Domain, error) {
	tx, err := db.writer.BeginTx(ctx, nil)
	if err != nil {
		return linkforge.Domain{}, fmt.Errorf("sqlite: update domain: %w", err)
	}
	defer tx.Rollback()
	old, err := tenantDomain(ctx, tx, tenantID, host)
	if err != nil {
		return linkforge.Domain{}, wrapRead("update domain", err)
	}
	d, err := linkforge.ApplyDomainUpdate(old, fn)
	if err != nil {
		return linkforge.Domain{}, err
	}
	if d.Default && !old.Default {
		if err := clearDefault(ctx, tx, tenantID); err != nil {
			return linkforge.Domain{}, fmt.Errorf("sqlite: update domain: %w", err)
		}
	}
	if _, err := tx.ExecContext(ctx,
		`UPDATE domains SET state = ?, is_default = ?, root_url = ?, not_found_url = ?, verified_at = ?,
		 verify_attempts = ?, verify_due_at = ?, verify_error = ?,
		 apple_app_site_association = ?, asset_links = ? WHERE id = ?`,
		string(d.State), d.Default, d.RootURL, d.NotFoundURL, nullMicros(d.VerifiedAt),
		d.VerifyAttempts, nullMicros(d.VerifyDueAt), d.VerifyError,
		string(d.AppleAppSiteAssociation), string(d.AssetLinks), d.ID); err != nil {
		return linkforge.Domain{}, fmt.Errorf("sqlite: update domain: %w", err)
	}
	if err := db.writes.Begin().DomainUpdated(ctx, writeTx{tx}, tenantID, d.Host, now()); err != nil {
		return linkforge.Domain{}, fmt.Errorf("sqlite: update domain: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return linkforge.Domain{}, fmt.Errorf("sqlite: update domain: %w", err)
	}
	return d, nil
}

// DeleteDomain deletes the tenant's domain unless links are on it. The
// check and the delete share the write transaction, and SQLite has one
// writer, so no link can be created on the domain in between.
func (db *DB) DeleteDomain(ctx context.Context, tenantID int64, host string) (linkforge.Domain, error) {
	tx, err := db.writer.BeginTx(ctx, nil)
	if err != nil {
		return linkforge.Domain{}, fmt.Errorf("sqlite: delete domain: %w", err)
	}
	defer tx.Rollback()
	d, err := tenantDomain(ctx, tx, tenantID, host)
	if err != nil {
		return linkforge.Domain{}, wrapRead("delete domain", err)
	}
	var used bool
	if err := tx.QueryRowContext(ctx,
		`SELECT EXISTS (SELECT 1 FROM links WHERE domain_id = ?)`, d.ID).Scan(&used); err != nil {
		return linkforge.Domain{}, fmt.Errorf("sqlite: delete domain: %w", err)
	}
	if used {
		return linkforge.Domain{}, linkforge.ErrDomainInUse(d.Host)
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM domains WHERE id = ?`, d.ID); err != nil {
		return linkforge.Domain{}, fmt.Errorf("sqlite: delete domain: %w", err)
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM qr_settings WHERE domain_id = ?`, d.ID); err != nil {
		return linkforge.Domain{}, fmt.Errorf("sqlite: delete domain: %w", err)
	}
	if err := db.writes.Begin().DomainDeleted(ctx, writeTx{tx}, tenantID, d.Host, now()); err != nil {
		return linkforge.Domain{}, fmt.Errorf("sqlite: delete domain: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return linkforge.Domain{}, fmt.Errorf("sqlite: delete domain: %w", err)
	}
	return d, nil
}

// NextDomainVerification returns the earliest due verification.
func (db *DB) NextDomainVerification(ctx context.Context) (time.Time, bool, error) {
	var due sql.NullInt64
	if err := db.reader.QueryRowContext(ctx,
		`SELECT min(verify_due_at) FROM domains WHERE state = 'pending' AND verify_due_at IS NOT NULL`).Scan(&due); err != nil {
		return time.Time{}, false, fmt.Errorf("sqlite: next domain verification: %w", err)
	}
	if !due.Valid {
		return time.Time{}, false, nil
	}
	return fromMicros(due.Int64), true, nil
}

// ClaimDomainVerifications claims the due verifications by moving their
// due time past the lease, in one statement.
func (db *DB) ClaimDomainVerifications(ctx context.Context, now time.Time, lease time.Duration, limit int) ([]linkforge.Domain, error) {
	ds, err := query(ctx, db.writer, scanDomain,
		`UPDATE domains SET verify_due_at = ?1
		 WHERE id IN (SELECT id FROM domains WHERE state = 'pending' AND verify_due_at <= ?2
		              ORDER BY verify_due_at LIMIT ?3)
		 RETURNING `+domainColumns, toMicros(now.Add(lease)), toMicros(now), limit)
	if err != nil {
		return nil, fmt.Errorf("sqlite: claim domain verifications: %w", err)
	}
	return ds, nil
}

// linkDomainOf checks, in a link write's transaction, that l's domain is
// one of its tenant's: ENotFound otherwise.
func linkDomainOf(ctx context.Context, q querier, l linkforge.Link) error {
	if l.DomainID == linkforge.PublicDomainID {
		return nil
	}
	var tenant int64
	err := q.QueryRowContext(ctx, `SELECT tenant_id FROM domains WHERE id = ?`, l.DomainID).Scan(&tenant)
	if errors.Is(err, sql.ErrNoRows) || (err == nil && tenant != l.TenantID) {
		return notFound("domain")
	}
	return err
}

// importDomainsOf checks, in an import's write transaction, that every
// custom domain of links is its tenant's: SQLite's one writer then keeps
// a DeleteDomain from passing between the check and the insert.
func importDomainsOf(ctx context.Context, q querier, links []linkforge.Link) error {
	seen := map[int64]bool{}
	for _, l := range links {
		if l.DomainID == linkforge.PublicDomainID || seen[l.DomainID] {
			continue
		}
		seen[l.DomainID] = true
		if err := linkDomainOf(ctx, q, l); err != nil {
			return err
		}
	}
	return nil
}

func clearDefault(ctx context.Context, tx execer, tenantID int64) error {
	_, err := tx.ExecContext(ctx, `UPDATE domains SET is_default = 0 WHERE tenant_id = ? AND is_default = 1`, tenantID)
	return err
}

func scanDomain(row scanner) (linkforge.Domain, error) {
	var (
		d                   linkforge.Domain
		state               string
		created             int64
		verified, verifyDue sql.NullInt64
		aasa, assetLinks    string
	)
	if err := row.Scan(&d.ID, &d.TenantID, &d.Host, &state, &d.Default, &d.RootURL, &d.NotFoundURL,
		&created, &verified, &d.VerifyAttempts, &verifyDue, &d.VerifyError, &d.VerifyToken,
		&aasa, &assetLinks); err != nil {
		return linkforge.Domain{}, err
	}
	d.State = linkforge.DomainState(state)
	d.CreatedAt = fromMicros(created)
	d.VerifiedAt = timePtr(verified)
	d.VerifyDueAt = timePtr(verifyDue)
	d.AppleAppSiteAssociation, d.AssetLinks = documentBytes(aasa), documentBytes(assetLinks)
	return d, nil
}

// documentBytes is a stored app-link document; nil when unset.
func documentBytes(s string) []byte {
	if s == "" {
		return nil
	}
	return []byte(s)
}

// DomainSlugs returns which of slugs are in use on the domain, in one
// query (the slugs travel as one JSON array).
func (db *DB) DomainSlugs(ctx context.Context, domainID int64, slugs []string) (map[string]bool, error) {
	taken := make(map[string]bool, len(slugs))
	if len(slugs) == 0 {
		return taken, nil
	}
	list, err := json.Marshal(slugs)
	if err != nil {
		return nil, fmt.Errorf("sqlite: domain slugs: %w", err)
	}
	rows, err := db.reader.QueryContext(ctx,
		`SELECT slug FROM links WHERE domain_id = ?1 AND slug IN (SELECT value FROM json_each(?2))
		 UNION ALL SELECT slug FROM link_aliases WHERE domain_id = ?1 AND slug IN (SELECT value FROM json_each(?2))`, domainID, string(list))
	if err != nil {
		return nil, fmt.Errorf("sqlite: domain slugs: %w", err)
	}
	var slug string
	if err := forEach(rows, []any{&slug}, func() error {
		taken[slug] = true
		return nil
	}); err != nil {
		return nil, fmt.Errorf("sqlite: domain slugs: %w", err)
	}
	return taken, nil
}
