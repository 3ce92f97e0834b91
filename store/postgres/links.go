package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/linkforge/linkforge"
)

const (
	linkColumns = `l.id, l.tenant_id, l.slug, l.url, l.expires_at, l.expired_at, l.max_clicks,
		l.fallback_url, l.tags, l.created_at, l.updated_at,
		l.title, l.password_hash, l.device_ios, l.device_android, l.device_desktop, l.imported_clicks,
		l.redirect_status, l.forward_query, l.routing, l.domain_id, l.disabled, COALESCE(l.blocked_reason, ''),
		l.notes, l.archived, l.valid_since,
		COALESCE(l.unsafe_reason, ''),
		COALESCE(l.health_state, ''), l.health_status, l.health_checked_at, l.health_error,
		l.utm_source, l.utm_medium, l.utm_campaign, l.utm_term, l.utm_content`
	// clicksColumn is the flushed total of the link: the rollup total that
	// the click_rollup trigger keeps in rollup_clicks (migration 00007),
	// plus the clicks an import brought along.
	clicksColumn = totalClicks
)

// Page size bounds of ExportLinks. The callers choose the page size;
// these guard against a bad one.
const (
	defaultPageSize = 50
	maxPageSize     = 1000
)

// insertLinkSQL inserts one link and returns its id.
const insertLinkSQL = `INSERT INTO links (tenant_id, slug, url, expires_at, expired_at, max_clicks, fallback_url,
	tags, created_at, updated_at, title, password_hash, device_ios, device_android, device_desktop, imported_clicks,
	redirect_status, forward_query, routing, domain_id, notes, archived, valid_since,
	utm_source, utm_medium, utm_campaign, utm_term, utm_content)
	VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21, $22, $23,
	$24, $25, $26, $27, $28) RETURNING id`

// insertLinkWithAlarmSQL also inserts the link's alarm ($29: its state), in
// the same statement, hence the same transaction.
const insertLinkWithAlarmSQL = `WITH l AS (` + insertLinkSQL + `, tenant_id, expires_at),
	a AS (
		INSERT INTO link_alarms (link_id, tenant_id, due_at, state, created_at, updated_at)
		SELECT id, tenant_id, expires_at, $29, $9, $9 FROM l
	)
	SELECT id FROM l`

// CreateLink stores l and returns it with ID, CreatedAt and UpdatedAt
// filled in. A slug in use, by any tenant, answers EConflict; an unknown
// tenant ENotFound. A link with an ExpiresAt gets its alarm in the same
// statement.
func (db *DB) CreateLink(ctx context.Context, l linkforge.Link) (linkforge.Link, error) {
	l = linkforge.NormalizeLink(l)
	if err := linkforge.ValidateImportedClicks(l.ImportedClicks); err != nil {
		return linkforge.Link{}, fmt.Errorf("postgres: create link: %w", err)
	}
	l.CreatedAt = now()
	l.UpdatedAt = l.CreatedAt
	l.Clicks = l.ImportedClicks
	q, args := insertLinkQuery(l)
	w := db.writes.Begin()
	err := pgx.BeginFunc(ctx, db.pool, func(tx pgx.Tx) error {
		if err := linkDomainOf(ctx, tx, l); err != nil {
			return err
		}
		if err := tx.QueryRow(ctx, q, args...).Scan(&l.ID); err != nil {
			if errors.Is(err, pgx.ErrNoRows) { // the slug is a renamed link's alias (migration 00049)
				return &linkforge.Error{Code: linkforge.EConflict, Message: "slug already in use", Err: err}
			}
			return linkWriteError("create link", err)
		}
		return w.LinkCreated(ctx, writeTx{tx}, l)
	})
	if err != nil {
		return linkforge.Link{}, wrap("create link", err)
	}
	w.Committed()
	return l, nil
}

// importColumns are the columns ImportLinks copies, in the order of
// importRow.
var importColumns = []string{"tenant_id", "slug", "url", "expires_at", "expired_at", "max_clicks",
	"fallback_url", "tags", "created_at", "updated_at",
	"title", "password_hash", "device_ios", "device_android", "device_desktop", "imported_clicks",
	"redirect_status", "forward_query", "routing", "domain_id", "notes", "archived", "valid_since",
	"utm_source", "utm_medium", "utm_campaign", "utm_term", "utm_content"}

// ImportLinks inserts links with one COPY, the bulk loader of benchmarks and
// imports: a million links load in seconds where single INSERTs would take
// minutes. The import is one transaction: a slug in use answers EConflict
// and nothing is inserted. Zero CreatedAt or UpdatedAt are set to now; IDs
// are assigned by the database and not returned. The alarms of the links
// with an ExpiresAt are inserted in the same transaction, by one INSERT ...
// SELECT over their slugs.
func (db *DB) ImportLinks(ctx context.Context, links []linkforge.Link) error {
	if len(links) == 0 {
		return nil
	}
	// The bound keeps every sum of rollup and imported clicks (and the
	// index over it) inside an int64, whatever a file said.
	for i := range links {
		if err := linkforge.ValidateImportedClicks(links[i].ImportedClicks); err != nil {
			return fmt.Errorf("postgres: import links: %w", err)
		}
	}
	ts := now()
	var (
		expiring []string
		domains  []int64
	)
	for _, l := range links {
		if l.ExpiresAt != nil {
			expiring = append(expiring, l.Slug)
			domains = append(domains, l.DomainID)
		}
	}
	tx, err := db.pool.Begin(ctx)
	if err != nil {
		return fmt.Errorf("postgres: import links: %w", err)
	}
	defer rollback(ctx, tx)
	if err := importDomainsOf(ctx, tx, links); err != nil {
		return wrap("import links", err)
	}
	_, err = tx.CopyFrom(ctx, pgx.Identifier{"links"}, importColumns,
		pgx.CopyFromSlice(len(links), func(i int) ([]any, error) {
			l := linkforge.NormalizeLink(links[i])
			if l.CreatedAt.IsZero() {
				l.CreatedAt = ts
			}
			if l.UpdatedAt.IsZero() {
				l.UpdatedAt = l.CreatedAt
			}
			utm := l.UTMs()
			return []any{l.TenantID, l.Slug, l.URL, l.ExpiresAt, l.ExpiredAt, l.MaxClicks,
				l.FallbackURL, l.Tags, l.CreatedAt, l.UpdatedAt,
				l.Title, l.PasswordHash, l.DeviceURLs.IOS, l.DeviceURLs.Android, l.DeviceURLs.Desktop,
				l.ImportedClicks, l.RedirectCode(), l.Routes().ForwardQuery, linkforge.EncodeRouting(&l), l.DomainID,
				l.Notes, l.Archived, l.ValidSince,
				utm.Source, utm.Medium, utm.Campaign, utm.Term, utm.Content}, nil
		}))
	if err != nil {
		return linkWriteError("import links", err)
	}
	if len(expiring) > 0 {
		// The state rule is linkforge.AlarmStateFor's.
		if _, err := tx.Exec(ctx,
			`INSERT INTO link_alarms (link_id, tenant_id, due_at, state, created_at, updated_at)
			 SELECT id, tenant_id, expires_at,
			        CASE WHEN expired_at IS NOT NULL AND expired_at >= expires_at THEN 'done' ELSE 'scheduled' END,
			        $2, $2
			 FROM links WHERE (domain_id, slug) IN (SELECT * FROM unnest($3::bigint[], $1::text[]))`,
			expiring, ts, domains); err != nil {
			return fmt.Errorf("postgres: import links: alarms: %w", err)
		}
	}
	// One event per batch: an import of a million links is one write.
	if err := db.writes.Begin().LinksImported(ctx, writeTx{tx}, links[0].TenantID, len(links), ts); err != nil {
		return fmt.Errorf("postgres: import links: %w", err)
	}
	if err := tx.Commit(ctx); err != nil {
		return fmt.Errorf("postgres: import links: %w", err)
	}
	return nil
}

// LinkBySlug returns the link with that slug on the domain, whatever its
// tenant, without Clicks: the redirect path must not pay for a sum of
// rollups.
func (db *DB) LinkBySlug(ctx context.Context, domainID int64, slug string) (linkforge.Link, error) {
	l, err := scanLinkWith(db.pool.QueryRow(ctx,
		`SELECT `+linkColumns+`, `+tenantSuspended+` FROM links l WHERE l.domain_id = $1 AND l.slug = $2`, domainID, slug), suspendedDest)
	if errors.Is(err, pgx.ErrNoRows) {
		// A renamed link's old slug (aliases.go): a second read, on a
		// miss only, which the cache then keeps either way.
		l, err = db.aliasLink(ctx, domainID, slug)
	}
	if errors.Is(err, pgx.ErrNoRows) {
		return linkforge.Link{}, notFound("link")
	}
	if err != nil {
		return linkforge.Link{}, fmt.Errorf("postgres: link by slug: %w", err)
	}
	return l, nil
}

// TenantLink returns the tenant's link of the slug on the domain, with its
// Clicks; another tenant's slug answers ENotFound.
func (db *DB) TenantLink(ctx context.Context, tenantID, domainID int64, slug string) (linkforge.Link, error) {
	l, err := scanLink(db.pool.QueryRow(ctx,
		`SELECT `+linkColumns+`, `+clicksColumn+` FROM links l WHERE l.slug = $1 AND l.tenant_id = $2 AND l.domain_id = $3`,
		slug, tenantID, domainID), true)
	if errors.Is(err, pgx.ErrNoRows) {
		return linkforge.Link{}, notFound("link")
	}
	if err != nil {
		return linkforge.Link{}, fmt.Errorf("postgres: tenant link: %w", err)
	}
	return l, nil
}

// UpdateLink reads the tenant's link with SELECT ... FOR UPDATE, lets fn
// change it and writes it back, in one transaction, so that concurrent
// updates of one link (from any node) serialize instead of overwriting each
// other. fn's error aborts the update and is returned unchanged. A changed
// ExpiresAt moves or deletes the link's alarm in the same transaction (see
// linkforge.LinkStore).
func (db *DB) UpdateLink(ctx context.Context, tenantID, domainID int64, slug string, fn func(*linkforge.Link) error) (linkforge.Link, error) {
	tx, err := db.pool.Begin(ctx)
	if err != nil {
		return linkforge.Link{}, fmt.Errorf("postgres: update link: %w", err)
	}
	defer rollback(ctx, tx)

	old, err := scanLink(tx.QueryRow(ctx,
		`SELECT `+linkColumns+`, `+clicksColumn+` FROM links l
		 WHERE l.slug = $1 AND l.tenant_id = $2 AND l.domain_id = $3 FOR UPDATE OF l`, slug, tenantID, domainID), true)
	if errors.Is(err, pgx.ErrNoRows) {
		return linkforge.Link{}, notFound("link")
	}
	if err != nil {
		return linkforge.Link{}, fmt.Errorf("postgres: update link: %w", err)
	}
	up, err := linkforge.ApplyLinkUpdate(old, now(), fn)
	if err != nil {
		return linkforge.Link{}, err
	}
	l := up.Link
	utm := l.UTMs()
	if _, err := tx.Exec(ctx,
		`UPDATE links SET url = $1, expires_at = $2, expired_at = $3, max_clicks = $4, fallback_url = $5,
		 tags = $6, updated_at = $7, title = $9, password_hash = $10, device_ios = $11,
		 device_android = $12, device_desktop = $13, imported_clicks = $14,
		 redirect_status = $15, forward_query = $16, routing = $17, disabled = $18,
		 notes = $19, archived = $20, valid_since = $21,
		 utm_source = $22, utm_medium = $23, utm_campaign = $24, utm_term = $25, utm_content = $26 WHERE id = $8`,
		l.URL, l.ExpiresAt, l.ExpiredAt, l.MaxClicks, l.FallbackURL, l.Tags, l.UpdatedAt, l.ID,
		l.Title, l.PasswordHash, l.DeviceURLs.IOS, l.DeviceURLs.Android, l.DeviceURLs.Desktop,
		l.ImportedClicks, l.RedirectCode(), l.Routes().ForwardQuery, linkforge.EncodeRouting(&l), l.Disabled,
		l.Notes, l.Archived, l.ValidSince, utm.Source, utm.Medium, utm.Campaign, utm.Term, utm.Content); err != nil {
		return linkforge.Link{}, linkWriteError("update link", err)
	}
	switch up.Alarm {
	case linkforge.AlarmDeleted:
		if _, err := tx.Exec(ctx, `DELETE FROM link_alarms WHERE link_id = $1`, l.ID); err != nil {
			return linkforge.Link{}, fmt.Errorf("postgres: update link: delete alarm: %w", err)
		}
	case linkforge.AlarmRescheduled:
		if _, err := tx.Exec(ctx, scheduleAlarmSQL, l.ID, l.TenantID, *l.ExpiresAt,
			string(linkforge.AlarmStateFor(&l)), l.UpdatedAt); err != nil {
			return linkforge.Link{}, fmt.Errorf("postgres: update link: schedule alarm: %w", err)
		}
	}
	w := db.writes.Begin()
	if err := w.LinkUpdated(ctx, writeTx{tx}, up); err != nil {
		return linkforge.Link{}, fmt.Errorf("postgres: update link: %w", err)
	}
	if err := tx.Commit(ctx); err != nil {
		return linkforge.Link{}, fmt.Errorf("postgres: update link: %w", err)
	}
	w.Committed()
	return l, nil
}

// DeleteLink deletes the tenant's link and its rollup and click_dims rows and
// returns the link as it was, with its Clicks, in one transaction. It
// takes the aggregates' lock (aggLock) first, then the link's row: the
// order a flush takes them in (the lock, then the links whose totals it
// raises), so the two cannot deadlock; forgetLink then takes the link out
// of the aggregates and deletes its raw rows. The link's alarm goes by the
// foreign key's ON DELETE CASCADE. A transaction PostgreSQL aborts to
// break a deadlock is tried again, a few times (an aborted delete has
// changed nothing).
func (db *DB) DeleteLink(ctx context.Context, tenantID, domainID int64, slug string) (linkforge.Link, error) {
	for attempt := 1; ; attempt++ {
		l, err := db.deleteLinkOnce(ctx, tenantID, domainID, slug)
		if pgCode(err) != deadlockDetected || attempt == deleteLinkAttempts {
			return l, err
		}
	}
}

// deleteLinkAttempts bounds DeleteLink's retries after a deadlock.
const deleteLinkAttempts = 3

func (db *DB) deleteLinkOnce(ctx context.Context, tenantID, domainID int64, slug string) (linkforge.Link, error) {
	var l linkforge.Link
	w := db.writes.Begin()
	ts := now()
	err := pgx.BeginFunc(ctx, db.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, int64(aggLock)); err != nil {
			return err
		}
		// forgetLink lowers the aggregates and removes the link's rollup
		// and dimension rows (store/internal/aggregates); rollup_clicks
		// stays whole, as row deletes do not lower it.
		var id *int64
		if err := tx.QueryRow(ctx,
			`SELECT id FROM links WHERE slug = $1 AND tenant_id = $2 AND domain_id = $3 FOR UPDATE`,
			slug, tenantID, domainID).Scan(&id); err != nil && !errors.Is(err, pgx.ErrNoRows) {
			return err
		}
		if id == nil {
			return notFound("link")
		}
		if err := forgetLink(ctx, tx, tenantID, *id); err != nil {
			return err
		}
		var err error
		l, err = scanLink(tx.QueryRow(ctx,
			`DELETE FROM links l WHERE id = $1 RETURNING `+linkColumns+`, l.imported_clicks + l.rollup_clicks`, *id), true)
		if err != nil {
			return err
		}
		return w.LinkDeleted(ctx, writeTx{tx}, l, ts)
	})
	if err != nil {
		return linkforge.Link{}, wrap("delete link", err)
	}
	w.Committed()
	return l, nil
}

// linkWriteError maps the constraint errors of a links write to application
// errors.
func linkWriteError(op string, err error) error {
	switch pgCode(err) {
	case quotaExceededCode:
		return quotaError(err)
	case uniqueViolation:
		return &linkforge.Error{Code: linkforge.EConflict, Message: "slug already in use", Err: err}
	case foreignKeyViolation:
		return &linkforge.Error{Code: linkforge.ENotFound, Message: "tenant not found", Err: err}
	default:
		return fmt.Errorf("postgres: %s: %w", op, err)
	}
}

// scanLink reads the columns of linkColumns, then Clicks if withClicks.
func scanLink(row pgx.Row, withClicks bool) (linkforge.Link, error) {
	if withClicks {
		return scanLinkWith(row, func(l *linkforge.Link) []any { return []any{&l.Clicks} })
	}
	return scanLinkWith(row, nil)
}

// suspendedDest scans tenantSuspended.
func suspendedDest(l *linkforge.Link) []any { return []any{&l.TenantSuspended} }

// tenantSuspended is the column LinkBySlug reads after linkColumns: the
// redirect path's one question about the tenant.
const tenantSuspended = `(SELECT t.suspended_at IS NOT NULL FROM tenants t WHERE t.id = l.tenant_id)`

// scanLinkWith reads the columns of linkColumns, then those extra returns
// the destinations of (nil: none).
func scanLinkWith(row pgx.Row, extra func(l *linkforge.Link) []any) (linkforge.Link, error) {
	var l linkforge.Link
	var (
		checkedAt *time.Time
		hs        linkforge.LinkHealth
		status    int16
		forward   bool
		routing   string
		utm       linkforge.UTM
	)
	dest := []any{&l.ID, &l.TenantID, &l.Slug, &l.URL, &l.ExpiresAt, &l.ExpiredAt, &l.MaxClicks,
		&l.FallbackURL, &l.Tags, &l.CreatedAt, &l.UpdatedAt,
		&l.Title, &l.PasswordHash, &l.DeviceURLs.IOS, &l.DeviceURLs.Android, &l.DeviceURLs.Desktop, &l.ImportedClicks,
		&status, &forward, &routing, &l.DomainID, &l.Disabled, &l.BlockedReason,
		&l.Notes, &l.Archived, &l.ValidSince,
		&l.UnsafeReason, &hs.State, &hs.Status, &checkedAt, &hs.Error,
		&utm.Source, &utm.Medium, &utm.Campaign, &utm.Term, &utm.Content}
	if extra != nil {
		dest = append(dest, extra(&l)...)
	}
	if err := row.Scan(dest...); err != nil {
		return linkforge.Link{}, err
	}
	if hs.State != "" {
		if checkedAt != nil {
			hs.CheckedAt = checkedAt.UTC()
		}
		l.Health = &hs
	}
	// pgx returns timestamptz in the local zone; the stores speak UTC.
	l.ExpiresAt = linkforge.NormalizeTime(l.ExpiresAt)
	l.ExpiredAt = linkforge.NormalizeTime(l.ExpiredAt)
	l.ValidSince = linkforge.NormalizeTime(l.ValidSince)
	l.CreatedAt = l.CreatedAt.UTC()
	l.UpdatedAt = l.UpdatedAt.UTC()
	if l.Tags == nil {
		l.Tags = []string{}
	}
	if err := linkforge.DecodeRouting(int(status), forward, routing, utm, &l); err != nil {
		return linkforge.Link{}, fmt.Errorf("link %d: %w", l.ID, err)
	}
	return l, nil
}
