package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

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
	// the click_rollup triggers keep in rollup_clicks (migration 00007),
	// plus the clicks an import brought along.
	clicksColumn = totalClicks

	insertLinkSQL = `INSERT INTO links (tenant_id, slug, url, expires_at, expired_at, max_clicks,
		fallback_url, tags, created_at, updated_at,
		title, password_hash, device_ios, device_android, device_desktop, imported_clicks,
		redirect_status, forward_query, routing, domain_id, notes, archived, valid_since,
		utm_source, utm_medium, utm_campaign, utm_term, utm_content)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`
)

// Page size bounds of ExportLinks. The callers choose the page size;
// these guard against a bad one.
const (
	defaultPageSize = 50
	maxPageSize     = 1000
)

// CreateLink stores l and returns it with ID, CreatedAt and UpdatedAt
// filled in. A slug in use, by any tenant, answers EConflict. A link with an
// ExpiresAt gets its alarm in the same transaction.
func (db *DB) CreateLink(ctx context.Context, l linkforge.Link) (linkforge.Link, error) {
	l = linkforge.NormalizeLink(l)
	if err := linkforge.ValidateImportedClicks(l.ImportedClicks); err != nil {
		return linkforge.Link{}, fmt.Errorf("sqlite: create link: %w", err)
	}
	l.CreatedAt = now()
	l.UpdatedAt = l.CreatedAt
	l.Clicks = l.ImportedClicks
	args, err := insertArgs(l)
	if err != nil {
		return linkforge.Link{}, fmt.Errorf("sqlite: create link: %w", err)
	}
	tx, err := db.writer.BeginTx(ctx, nil)
	if err != nil {
		return linkforge.Link{}, fmt.Errorf("sqlite: create link: %w", err)
	}
	defer tx.Rollback()
	if err := linkDomainOf(ctx, tx, l); err != nil {
		return linkforge.Link{}, wrapRead("create link", err)
	}
	if err := tx.QueryRowContext(ctx, insertLinkSQL+` RETURNING id`, args...).Scan(&l.ID); err != nil {
		if errors.Is(err, sql.ErrNoRows) { // the slug is a renamed link's alias (migration 00049)
			return linkforge.Link{}, &linkforge.Error{Code: linkforge.EConflict, Message: "slug already in use", Err: err}
		}
		return linkforge.Link{}, linkWriteError("create link", err)
	}
	if l.ExpiresAt != nil {
		if err := scheduleAlarm(ctx, tx, l, l.CreatedAt); err != nil {
			return linkforge.Link{}, fmt.Errorf("sqlite: create link: %w", err)
		}
	}
	w := db.writes.Begin()
	if err := w.LinkCreated(ctx, writeTx{tx}, l); err != nil {
		return linkforge.Link{}, fmt.Errorf("sqlite: create link: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return linkforge.Link{}, fmt.Errorf("sqlite: create link: %w", err)
	}
	w.Committed()
	return l, nil
}

// ImportLinks inserts links in one transaction through one prepared
// statement: the bulk loader of benchmarks and imports (a million links in
// seconds). Zero CreatedAt or UpdatedAt are set to now. IDs are assigned by
// the database, in the slug order of links, and not returned. A slug in use
// answers EConflict and nothing is inserted. Links with an ExpiresAt get
// their alarms in the same transaction, by one INSERT ... SELECT over their
// slugs.
func (db *DB) ImportLinks(ctx context.Context, links []linkforge.Link) error {
	if len(links) == 0 {
		return nil
	}
	// The bound keeps every sum of rollup and imported clicks (and the
	// index over it) inside an int64, whatever a file said.
	for i := range links {
		if err := linkforge.ValidateImportedClicks(links[i].ImportedClicks); err != nil {
			return fmt.Errorf("sqlite: import links: %w", err)
		}
	}
	// Inserting in slug order appends to the slug index instead of touching
	// random pages of it: with random slugs and a million rows, random
	// inserts overflow the page cache and spill to the WAL, which doubles
	// the time.
	order := make([]int, len(links))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int { return strings.Compare(links[a].Slug, links[b].Slug) })

	tx, err := db.writer.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("sqlite: import links: %w", err)
	}
	defer tx.Rollback()
	if err := importDomainsOf(ctx, tx, links); err != nil {
		return fmt.Errorf("sqlite: import links: %w", err)
	}
	stmt, err := tx.PrepareContext(ctx, insertLinkSQL)
	if err != nil {
		return fmt.Errorf("sqlite: import links: %w", err)
	}
	defer stmt.Close()

	// The driver watches a cancellable context with one goroutine per
	// statement, which costs as much as the insert itself; the loop checks
	// ctx every few thousand rows instead.
	execCtx := context.WithoutCancel(ctx)
	ts := now()
	var expiring []domainSlug
	for n, i := range order {
		if n%4096 == 0 {
			if err := ctx.Err(); err != nil {
				return fmt.Errorf("sqlite: import links: %w", err)
			}
		}
		l := linkforge.NormalizeLink(links[i])
		if l.CreatedAt.IsZero() {
			l.CreatedAt = ts
		}
		if l.UpdatedAt.IsZero() {
			l.UpdatedAt = l.CreatedAt
		}
		args, err := insertArgs(l)
		if err != nil {
			return fmt.Errorf("sqlite: import links: slug %q: %w", l.Slug, err)
		}
		if _, err := stmt.ExecContext(execCtx, args...); err != nil {
			return linkWriteError("import links", err)
		}
		if l.ExpiresAt != nil {
			expiring = append(expiring, domainSlug{l.DomainID, l.Slug})
		}
	}
	if len(expiring) > 0 {
		// One statement for every alarm, not one per link: a statement
		// costs more than the row it inserts. The state rule is
		// linkforge.AlarmStateFor's.
		slugs, err := json.Marshal(expiring)
		if err != nil {
			return fmt.Errorf("sqlite: import links: %w", err)
		}
		if _, err := tx.ExecContext(ctx,
			`INSERT INTO link_alarms (link_id, tenant_id, due_at, state, created_at, updated_at)
			 SELECT id, tenant_id, expires_at,
			        CASE WHEN expired_at IS NOT NULL AND expired_at >= expires_at THEN 'done' ELSE 'scheduled' END,
			        ?1, ?1
			 FROM links WHERE (domain_id, slug) IN
			     (SELECT value ->> '$.d', value ->> '$.s' FROM json_each(?2))`, toMicros(ts), string(slugs)); err != nil {
			return fmt.Errorf("sqlite: import links: alarms: %w", err)
		}
	}
	// One event per batch: an import of a million links is one write.
	if err := db.writes.Begin().LinksImported(ctx, writeTx{tx}, links[0].TenantID, len(links), ts); err != nil {
		return fmt.Errorf("sqlite: import links: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("sqlite: import links: %w", err)
	}
	return nil
}

// LinkBySlug returns the link with that slug on the domain, whatever its
// tenant, without Clicks: the redirect path must not pay for a sum of
// rollups.
func (db *DB) LinkBySlug(ctx context.Context, domainID int64, slug string) (linkforge.Link, error) {
	l, err := scanLinkWith(db.reader.QueryRowContext(ctx,
		`SELECT `+linkColumns+`, `+tenantSuspended+` FROM links l WHERE l.domain_id = ? AND l.slug = ?`, domainID, slug), suspendedDest)
	if errors.Is(err, sql.ErrNoRows) {
		// A renamed link's old slug (aliases.go): a second read, on a
		// miss only, which the cache then keeps either way.
		l, err = db.aliasLink(ctx, domainID, slug)
	}
	if errors.Is(err, sql.ErrNoRows) {
		return linkforge.Link{}, notFound("link")
	}
	if err != nil {
		return linkforge.Link{}, fmt.Errorf("sqlite: link by slug: %w", err)
	}
	return l, nil
}

// TenantLink returns the tenant's link of the slug on the domain, with its
// Clicks; another tenant's slug answers ENotFound.
func (db *DB) TenantLink(ctx context.Context, tenantID, domainID int64, slug string) (linkforge.Link, error) {
	l, err := tenantLink(ctx, db.reader, tenantID, domainID, slug)
	if err != nil {
		return linkforge.Link{}, wrapRead("tenant link", err)
	}
	return l, nil
}

// querier is what tenantLink needs of a *sql.DB or a *sql.Tx.
type querier interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

func tenantLink(ctx context.Context, q querier, tenantID, domainID int64, slug string) (linkforge.Link, error) {
	l, err := scanLink(q.QueryRowContext(ctx,
		`SELECT `+linkColumns+`, `+clicksColumn+` FROM links l WHERE l.domain_id = ? AND l.slug = ? AND l.tenant_id = ?`,
		domainID, slug, tenantID), true)
	if errors.Is(err, sql.ErrNoRows) {
		return linkforge.Link{}, notFound("link")
	}
	return l, err
}

// wrapRead passes application errors through and wraps the others with the
// operation.
func wrapRead(op string, err error) error {
	var e *linkforge.Error
	if errors.As(err, &e) {
		return err
	}
	return fmt.Errorf("sqlite: %s: %w", op, err)
}

// UpdateLink reads the tenant's link, lets fn change it and writes it back,
// in one write transaction, so that concurrent updates of one link
// serialize instead of overwriting each other. fn's error aborts the update
// and is returned unchanged. A changed ExpiresAt moves or deletes the
// link's alarm in the same transaction (see linkforge.LinkStore).
func (db *DB) UpdateLink(ctx context.Context, tenantID, domainID int64, slug string, fn func(*linkforge.Link) error) (linkforge.Link, error) {
	tx, err := db.writer.BeginTx(ctx, nil)
	if err != nil {
		return linkforge.Link{}, fmt.Errorf("sqlite: update link: %w", err)
	}
	defer tx.Rollback()

	old, err := tenantLink(ctx, tx, tenantID, domainID, slug)
	if err != nil {
		return linkforge.Link{}, wrapRead("update link", err)
	}
	up, err := linkforge.ApplyLinkUpdate(old, now(), fn)
	if err != nil {
		return linkforge.Link{}, err
	}
	l := up.Link

	tags, err := encodeTags(l.Tags)
	if err != nil {
		return linkforge.Link{}, fmt.Errorf("sqlite: update link: %w", err)
	}
	routing, utm := linkforge.EncodeRouting(&l), l.UTMs()
	if _, err := tx.ExecContext(ctx,
		`UPDATE links SET url = ?, expires_at = ?, expired_at = ?, max_clicks = ?, fallback_url = ?,
		 tags = ?, updated_at = ?, title = ?, password_hash = ?, device_ios = ?, device_android = ?,
		 device_desktop = ?, imported_clicks = ?, redirect_status = ?, forward_query = ?, routing = ?,
		 disabled = ?, notes = ?, archived = ?, valid_since = ?,
		 utm_source = ?, utm_medium = ?, utm_campaign = ?, utm_term = ?, utm_content = ? WHERE id = ?`,
		l.URL, nullMicros(l.ExpiresAt), nullMicros(l.ExpiredAt), nullInt(l.MaxClicks), l.FallbackURL,
		tags, toMicros(l.UpdatedAt), l.Title, l.PasswordHash, l.DeviceURLs.IOS, l.DeviceURLs.Android,
		l.DeviceURLs.Desktop, l.ImportedClicks, l.RedirectCode(), l.Routes().ForwardQuery, routing, l.Disabled,
		l.Notes, l.Archived, nullMicros(l.ValidSince),
		utm.Source, utm.Medium, utm.Campaign, utm.Term, utm.Content, l.ID); err != nil {
		return linkforge.Link{}, linkWriteError("update link", err)
	}
	if err := updateAlarm(ctx, tx, l, up.Alarm); err != nil {
		return linkforge.Link{}, fmt.Errorf("sqlite: update link: %w", err)
	}
	w := db.writes.Begin()
	if err := w.LinkUpdated(ctx, writeTx{tx}, up); err != nil {
		return linkforge.Link{}, fmt.Errorf("sqlite: update link: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return linkforge.Link{}, fmt.Errorf("sqlite: update link: %w", err)
	}
	w.Committed()
	return l, nil
}

// DeleteLink deletes the tenant's link and its rollup rows in one
// transaction and returns the link as it was. Its alarm goes with it, by
// the foreign key's ON DELETE CASCADE, in the same transaction.
func (db *DB) DeleteLink(ctx context.Context, tenantID, domainID int64, slug string) (linkforge.Link, error) {
	tx, err := db.writer.BeginTx(ctx, nil)
	if err != nil {
		return linkforge.Link{}, fmt.Errorf("sqlite: delete link: %w", err)
	}
	defer tx.Rollback()

	l, err := tenantLink(ctx, tx, tenantID, domainID, slug)
	if err != nil {
		return linkforge.Link{}, wrapRead("delete link", err)
	}
	if err := forgetLink(ctx, tx, tenantID, l.ID); err != nil {
		return linkforge.Link{}, fmt.Errorf("sqlite: delete link: %w", err)
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM links WHERE id = ?`, l.ID); err != nil {
		return linkforge.Link{}, fmt.Errorf("sqlite: delete link: %w", err)
	}
	w := db.writes.Begin()
	ts := now()
	if err := w.LinkDeleted(ctx, writeTx{tx}, l, ts); err != nil {
		return linkforge.Link{}, fmt.Errorf("sqlite: delete link: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return linkforge.Link{}, fmt.Errorf("sqlite: delete link: %w", err)
	}
	w.Committed()
	return l, nil
}

// updateAlarm does to the alarm of l, just written by UpdateLink, what
// the update decided.
func updateAlarm(ctx context.Context, tx execer, l linkforge.Link, change linkforge.AlarmChange) error {
	switch change {
	case linkforge.AlarmDeleted:
		if _, err := tx.ExecContext(ctx, `DELETE FROM link_alarms WHERE link_id = ?`, l.ID); err != nil {
			return fmt.Errorf("delete alarm of link %d: %w", l.ID, err)
		}
	case linkforge.AlarmRescheduled:
		return scheduleAlarm(ctx, tx, l, l.UpdatedAt)
	}
	return nil
}

func insertArgs(l linkforge.Link) ([]any, error) {
	tags, err := encodeTags(l.Tags)
	if err != nil {
		return nil, err
	}
	routing, utm := linkforge.EncodeRouting(&l), l.UTMs()
	return []any{l.TenantID, l.Slug, l.URL, nullMicros(l.ExpiresAt), nullMicros(l.ExpiredAt),
		nullInt(l.MaxClicks), l.FallbackURL, tags, toMicros(l.CreatedAt), toMicros(l.UpdatedAt),
		l.Title, l.PasswordHash, l.DeviceURLs.IOS, l.DeviceURLs.Android, l.DeviceURLs.Desktop, l.ImportedClicks,
		l.RedirectCode(), l.Routes().ForwardQuery, routing, l.DomainID, l.Notes, l.Archived, nullMicros(l.ValidSince),
		utm.Source, utm.Medium, utm.Campaign, utm.Term, utm.Content}, nil
}

func encodeTags(tags []string) (string, error) {
	if len(tags) == 0 {
		return "[]", nil // also keeps nil from becoming JSON null
	}
	b, err := json.Marshal(tags)
	if err != nil {
		return "", fmt.Errorf("encode tags: %w", err)
	}
	return string(b), nil
}

// linkWriteError maps the constraint errors of a links write to application
// errors.
func linkWriteError(op string, err error) error {
	switch {
	case isQuotaExceeded(err):
		return quotaError(err)
	case isUnique(err):
		return &linkforge.Error{Code: linkforge.EConflict, Message: "slug already in use", Err: err}
	case isForeignKey(err):
		return &linkforge.Error{Code: linkforge.ENotFound, Message: "tenant not found", Err: err}
	default:
		return fmt.Errorf("sqlite: %s: %w", op, err)
	}
}

func scanLink(row scanner, withClicks bool) (linkforge.Link, error) {
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
func scanLinkWith(row scanner, extra func(l *linkforge.Link) []any) (linkforge.Link, error) {
	var (
		l                               linkforge.Link
		expiresAt, expiredAt, maxClicks sql.NullInt64
		validSince                      sql.NullInt64
		checkedAt                       sql.NullInt64
		hs                              linkforge.LinkHealth
		tags, routing                   string
		created, updated                int64
		status                          int
		forward                         bool
		utm                             linkforge.UTM
	)
	dest := []any{&l.ID, &l.TenantID, &l.Slug, &l.URL, &expiresAt, &expiredAt, &maxClicks,
		&l.FallbackURL, &tags, &created, &updated,
		&l.Title, &l.PasswordHash, &l.DeviceURLs.IOS, &l.DeviceURLs.Android, &l.DeviceURLs.Desktop, &l.ImportedClicks,
		&status, &forward, &routing, &l.DomainID, &l.Disabled, &l.BlockedReason,
		&l.Notes, &l.Archived, &validSince,
		&l.UnsafeReason, &hs.State, &hs.Status, &checkedAt, &hs.Error,
		&utm.Source, &utm.Medium, &utm.Campaign, &utm.Term, &utm.Content}
	if extra != nil {
		dest = append(dest, extra(&l)...)
	}
	if err := row.Scan(dest...); err != nil {
		return linkforge.Link{}, err
	}
	if hs.State != "" {
		if checkedAt.Valid {
			hs.CheckedAt = fromMicros(checkedAt.Int64)
		}
		l.Health = &hs
	}
	l.ExpiresAt = timePtr(expiresAt)
	l.ExpiredAt = timePtr(expiredAt)
	l.MaxClicks = intPtr(maxClicks)
	l.ValidSince = timePtr(validSince)
	l.CreatedAt = fromMicros(created)
	l.UpdatedAt = fromMicros(updated)
	if err := json.Unmarshal([]byte(tags), &l.Tags); err != nil {
		return linkforge.Link{}, fmt.Errorf("link %d: decode tags: %w", l.ID, err)
	}
	if l.Tags == nil {
		l.Tags = []string{}
	}
	if err := linkforge.DecodeRouting(status, forward, routing, utm, &l); err != nil {
		return linkforge.Link{}, fmt.Errorf("link %d: %w", l.ID, err)
	}
	return l, nil
}
