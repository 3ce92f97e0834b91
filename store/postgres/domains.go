package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/linkforge/linkforge"
)

const domainColumns = `id, tenant_id, host, state, is_default, root_url, not_found_url, created_at,
	verified_at, verify_attempts, verify_due_at, verify_error, verify_token,
	apple_app_site_association, asset_links`

// CreateDomain stores d; a host in use by any tenant answers EConflict.
func (db *DB) CreateDomain(ctx context.Context, d linkforge.Domain) (linkforge.Domain, error) {
	return db.CreateDomainBounded(ctx, d, 0)
}

// CreateDomainBounded is CreateDomain refused with EQuotaExceeded when the
// tenant has max domains (max > 0). The tenant's row is locked first, so
// that concurrent creates of one tenant (on any node) count one after the
// other, as CreateWebhook's do.
func (db *DB) CreateDomainBounded(ctx context.Context, d linkforge.Domain, max int) (linkforge.Domain, error) {
	d = linkforge.NormalizeDomain(d)
	d.CreatedAt = now()
	err := pgx.BeginFunc(ctx, db.pool, func(tx pgx.Tx) error {
		if max > 0 {
			// The count is a statement of its own: under READ COMMITTED
			// it then sees every create committed while this one waited
			// for the lock.
			var one, n int
			err := tx.QueryRow(ctx, `SELECT 1 FROM tenants WHERE id = $1 FOR UPDATE`, d.TenantID).Scan(&one)
			if errors.Is(err, pgx.ErrNoRows) {
				return notFound("tenant")
			}
			if err != nil {
				return err
			}
			if err := tx.QueryRow(ctx, `SELECT count(*) FROM domains WHERE tenant_id = $1`, d.TenantID).Scan(&n); err != nil {
				return err
			}
			if n >= max {
				return linkforge.DomainQuotaExceeded(max)
			}
		}
		if d.Default {
			if err := clearDefault(ctx, tx, d.TenantID); err != nil {
				return err
			}
		}
		err := tx.QueryRow(ctx,
			`INSERT INTO domains (tenant_id, host, state, is_default, root_url, not_found_url, created_at,
			 verified_at, verify_attempts, verify_due_at, verify_error, verify_token,
			 apple_app_site_association, asset_links)
			 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14) RETURNING id`,
			d.TenantID, d.Host, string(d.State), d.Default, d.RootURL, d.NotFoundURL, d.CreatedAt,
			d.VerifiedAt, d.VerifyAttempts, d.VerifyDueAt, d.VerifyError, d.VerifyToken,
			string(d.AppleAppSiteAssociation), string(d.AssetLinks)).Scan(&d.ID)
		switch pgCode(err) {
		case uniqueViolation:
			return &linkforge.Error{Code: linkforge.EConflict, Message: "host already registered", Err: err}
		case foreignKeyViolation:
			return &linkforge.Error{Code: linkforge.ENotFound, Message: "tenant not found", Err: err}
		}
		if err != nil {
			return err
		}
		return db.writes.Begin().DomainCreated(ctx, writeTx{tx}, d)
	})
	if err != nil {
		return linkforge.Domain{}, wrap("create domain", err)
	}
	return d, nil
}

// TenantDomains returns the tenant's domains by host.
func (db *DB) TenantDomains(ctx context.Context, tenantID int64) ([]linkforge.Domain, error) {
	ds, err := query(ctx, db.pool, scanDomain,
		`SELECT `+domainColumns+` FROM domains WHERE tenant_id = $1 ORDER BY host COLLATE "C"`, tenantID)
	if err != nil {
		return nil, fmt.Errorf("postgres: tenant domains: %w", err)
	}
	return ds, nil
}

// AllDomains returns every domain, by id.
func (db *DB) AllDomains(ctx context.Context) ([]linkforge.Domain, error) {
	ds, err := query(ctx, db.pool, scanDomain, `SELECT `+domainColumns+` FROM domains ORDER BY id`)
	if err != nil {
		return nil, fmt.Errorf("postgres: all domains: %w", err)
	}
	return ds, nil
}

// DomainByID returns the domain of that id, by primary key.
func (db *DB) DomainByID(ctx context.Context, id int64) (linkforge.Domain, error) {
	d, err := scanDomain(db.pool.QueryRow(ctx, domainByIDQuery, id))
	if errors.Is(err, pgx.ErrNoRows) {
		return linkforge.Domain{}, notFound("domain")
	}
	if err != nil {
		return linkforge.Domain{}, fmt.Errorf("postgres: domain by id: %w", err)
	}
	return d, nil
}

// domainByIDQuery reads one domain by its primary key (the test of its
// plan runs it as it is).
const domainByIDQuery = `SELECT ` + domainColumns + ` FROM domains WHERE id = $1`

// TenantDomain returns the tenant's domain of that host.
func (db *DB) TenantDomain(ctx context.Context, tenantID int64, host string) (linkforge.Domain, error) {
	d, err := tenantDomain(ctx, db.pool, tenantID, host, "")
	if err != nil {
		return linkforge.Domain{}, wrap("tenant domain", err)
	}
	return d, nil
}

// rowQuerier is what tenantDomain needs of the pool or a transaction.
type rowQuerier interface {
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

func tenantDomain(ctx context.Context, q rowQuerier, tenantID int64, host, lock string) (linkforge.Domain, error) {
	d, err := scanDomain(q.QueryRow(ctx,
		`SELECT `+domainColumns+` FROM domains WHERE tenant_id = $1 AND host = $2 `+lock, tenantID, host))
	if errors.Is(err, pgx.ErrNoRows) {
		return linkforge.Domain{}, notFound("domain")
	}
	return d, err
}

// UpdateDomain reads the tenant's domain FOR UPDATE, lets fn change it and
// writes it back, in one transaction.
func (db *DB) UpdateDomain(ctx context.Context, tenantID int64, host string, fn func(*linkforge.Domain) error) (linkforge.Domain, error) {
	var d linkforge.Domain
	err := pgx.BeginFunc(ctx, db.pool, func(tx pgx.Tx) error {
		old, err := tenantDomain(ctx, tx, tenantID, host, "FOR UPDATE")
		if err != nil {
			return err
		}
		if d, err = linkforge.ApplyDomainUpdate(old, fn); err != nil {
			return err
		}
		if d.Default && !old.Default {
			if err := clearDefault(ctx, tx, tenantID); err != nil {
				return err
			}
		}
		_, err = tx.Exec(ctx,
			`UPDATE domains SET state = $1, is_default = $2, root_url = $3, not_found_url = $4, verified_at = $5,
			 verify_attempts = $6, verify_due_at = $7, verify_error = $8,
			 apple_app_site_association = $9, asset_links = $10 WHERE id = $11`,
			string(d.State), d.Default, d.RootURL, d.NotFoundURL, d.VerifiedAt,
			d.VerifyAttempts, d.VerifyDueAt, d.VerifyError,
			string(d.AppleAppSiteAssociation), string(d.AssetLinks), d.ID)
		if err != nil {
			return err
		}
		return db.writes.Begin().DomainUpdated(ctx, writeTx{tx}, tenantID, d.Host, now())
	})
	if err != nil {
		return linkforge.Domain{}, wrap("update domain", err)
	}
	return d, nil
}

// DeleteDomain deletes the tenant's domain unless links are on it. The
// domain's row is locked FOR UPDATE before the check: a link write on the
// domain holds it FOR SHARE (linkDomainOf) until its commit, so the check
// sees every link that could still be written.
func (db *DB) DeleteDomain(ctx context.Context, tenantID int64, host string) (linkforge.Domain, error) {
	var d linkforge.Domain
	err := pgx.BeginFunc(ctx, db.pool, func(tx pgx.Tx) error {
		var err error
		if d, err = tenantDomain(ctx, tx, tenantID, host, "FOR UPDATE"); err != nil {
			return err
		}
		var used bool
		if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM links WHERE domain_id = $1)`, d.ID).Scan(&used); err != nil {
			return err
		}
		if used {
			return linkforge.ErrDomainInUse(d.Host)
		}
		if _, err = tx.Exec(ctx, `DELETE FROM domains WHERE id = $1`, d.ID); err != nil {
			return err
		}
		if _, err = tx.Exec(ctx, `DELETE FROM qr_settings WHERE domain_id = $1`, d.ID); err != nil {
			return err
		}
		return db.writes.Begin().DomainDeleted(ctx, writeTx{tx}, tenantID, d.Host, now())
	})
	if err != nil {
		return linkforge.Domain{}, wrap("delete domain", err)
	}
	return d, nil
}

// NextDomainVerification returns the earliest due verification.
func (db *DB) NextDomainVerification(ctx context.Context) (time.Time, bool, error) {
	var due *time.Time
	if err := db.pool.QueryRow(ctx,
		`SELECT min(verify_due_at) FROM domains WHERE state = 'pending' AND verify_due_at IS NOT NULL`).Scan(&due); err != nil {
		return time.Time{}, false, fmt.Errorf("postgres: next domain verification: %w", err)
	}
	if due == nil {
		return time.Time{}, false, nil
	}
	return due.UTC(), true, nil
}

// ClaimDomainVerifications claims the due verifications by moving their
// due time past the lease, in one statement; SKIP LOCKED lets several
// nodes claim side by side.
func (db *DB) ClaimDomainVerifications(ctx context.Context, now time.Time, lease time.Duration, limit int) ([]linkforge.Domain, error) {
	ds, err := query(ctx, db.pool, scanDomain,
		`UPDATE domains SET verify_due_at = $1
		 WHERE id IN (SELECT id FROM domains WHERE state = 'pending' AND verify_due_at <= $2
		              ORDER BY verify_due_at LIMIT $3 FOR UPDATE SKIP LOCKED)
		 RETURNING `+domainColumns, now.Add(lease), now, limit)
	if err != nil {
		return nil, fmt.Errorf("postgres: claim domain verifications: %w", err)
	}
	return ds, nil
}

// linkDomainOf checks, in a link write's transaction, that l's domain is
// one of its tenant's (ENotFound otherwise), and holds the domain's row
// FOR SHARE until the commit so that DeleteDomain cannot miss the link.
func linkDomainOf(ctx context.Context, tx pgx.Tx, l linkforge.Link) error {
	if l.DomainID == linkforge.PublicDomainID {
		return nil
	}
	var tenant int64
	err := tx.QueryRow(ctx, `SELECT tenant_id FROM domains WHERE id = $1 FOR SHARE`, l.DomainID).Scan(&tenant)
	if errors.Is(err, pgx.ErrNoRows) || (err == nil && tenant != l.TenantID) {
		return notFound("domain")
	}
	return err
}

// domainOwners returns the tenant of each custom domain of links, each row
// held FOR SHARE as linkDomainOf does.
func domainOwners(ctx context.Context, tx pgx.Tx, links []linkforge.Link) (map[int64]int64, error) {
	var ids []int64
	for _, l := range links {
		if l.DomainID != linkforge.PublicDomainID {
			ids = append(ids, l.DomainID)
		}
	}
	owners := map[int64]int64{}
	if len(ids) == 0 {
		return owners, nil
	}
	rows, err := tx.Query(ctx, `SELECT id, tenant_id FROM domains WHERE id = ANY($1) ORDER BY id FOR SHARE`, ids)
	if err != nil {
		return nil, err
	}
	var id, tenant int64
	_, err = pgx.ForEachRow(rows, []any{&id, &tenant}, func() error {
		owners[id] = tenant
		return nil
	})
	return owners, err
}

// importDomainsOf checks, in an import's transaction, that every custom
// domain of links is its tenant's, and holds each row FOR SHARE until the
// commit: a DeleteDomain waits for the import and then sees its links, or
// wins and the import answers ENotFound. Without it a domain deleted
// between the import's resolve and its write would keep links.
func importDomainsOf(ctx context.Context, tx pgx.Tx, links []linkforge.Link) error {
	owners, err := domainOwners(ctx, tx, links)
	if err != nil {
		return err
	}
	for _, l := range links {
		if l.DomainID != linkforge.PublicDomainID && owners[l.DomainID] != l.TenantID {
			return notFound("domain")
		}
	}
	return nil
}

func clearDefault(ctx context.Context, tx pgx.Tx, tenantID int64) error {
	_, err := tx.Exec(ctx, `UPDATE domains SET is_default = false WHERE tenant_id = $1 AND is_default`, tenantID)
	return err
}

func scanDomain(row pgx.Row) (linkforge.Domain, error) {
	var (
		d                linkforge.Domain
		state            string
		aasa, assetLinks string
	)
	if err := row.Scan(&d.ID, &d.TenantID, &d.Host, &state, &d.Default, &d.RootURL, &d.NotFoundURL,
		&d.CreatedAt, &d.VerifiedAt, &d.VerifyAttempts, &d.VerifyDueAt, &d.VerifyError, &d.VerifyToken,
		&aasa, &assetLinks); err != nil {
		return linkforge.Domain{}, err
	}
	d.State = linkforge.DomainState(state)
	if aasa != "" {
		d.AppleAppSiteAssociation = []byte(aasa)
	}
	if assetLinks != "" {
		d.AssetLinks = []byte(assetLinks)
	}
	return linkforge.NormalizeDomain(d), nil
}

// DomainSlugs returns which of slugs are in use on the domain, in one
// query.
func (db *DB) DomainSlugs(ctx context.Context, domainID int64, slugs []string) (map[string]bool, error) {
	taken := make(map[string]bool, len(slugs))
	if len(slugs) == 0 {
		return taken, nil
	}
	rows, err := db.pool.Query(ctx, `SELECT slug FROM links WHERE domain_id = $1 AND slug = ANY($2)
		UNION ALL SELECT slug FROM link_aliases WHERE domain_id = $1 AND slug = ANY($2)`, domainID, slugs)
	if err != nil {
		return nil, fmt.Errorf("postgres: domain slugs: %w", err)
	}
	var slug string
	if _, err := pgx.ForEachRow(rows, []any{&slug}, func() error {
		taken[slug] = true
		return nil
	}); err != nil {
		return nil, fmt.Errorf("postgres: domain slugs: %w", err)
	}
	return taken, nil
}
