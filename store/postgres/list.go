package postgres

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"

	"github.com/linkforge/linkforge"
)

// totalClicks is a link's Clicks from its own columns: the rollup total the
// click_rollup trigger keeps (migration 00007) plus the imported clicks.
// It is the expression of the links_tenant_clicks index.
const totalClicks = `(l.rollup_clicks + l.imported_clicks)`

// searchText is the text q is searched in; it must be the expression of
// the links_search trigram index (migrations 00007 and 00048), or that index is not
// used. The newline cannot occur in a slug or URL, and a search term with
// control characters is refused, so no match spans two fields.
const searchText = `(l.slug || E'\n' || l.url || E'\n' || l.title || E'\n' || l.notes)`

// minTrigramQuery is the shortest search term pg_trgm can use its index
// for.
const minTrigramQuery = 3

// QueryLinks returns one page of the tenant's links that match q, in q's
// order, after q's cursor (see linkforge.LinkLister). Each order is a range
// of one index (migration 00007) read from the cursor on, so a page costs
// the same wherever it starts. The cursor is keyset: (key, id) of the last
// link returned, so that links with equal keys are neither repeated nor
// skipped across pages.
func (db *DB) QueryLinks(ctx context.Context, q linkforge.ListQuery) (linkforge.LinkPage, error) {
	q, cur, err := q.Normalize(now())
	if err != nil {
		return linkforge.LinkPage{}, err
	}
	var (
		where []string
		args  []any
	)
	arg := func(v any) string {
		args = append(args, v)
		return "$" + strconv.Itoa(len(args))
	}
	where = append(where, "l.tenant_id = "+arg(q.TenantID))
	if q.Q != "" {
		p := arg(linkforge.LikePattern(q.Q))
		if utf8.RuneCountInString(q.Q) >= minTrigramQuery {
			// The expression of the pg_trgm index.
			where = append(where, searchText+` ILIKE `+p+` ESCAPE '\'`)
		} else {
			// A shorter term has no trigram: the index would be read
			// whole (a second for a million links). Without it, the
			// planner walks the sort's index and stops after a page.
			where = append(where, `(l.slug ILIKE `+p+` ESCAPE '\' OR l.url ILIKE `+p+` ESCAPE '\' OR l.title ILIKE `+p+` ESCAPE '\' OR l.notes ILIKE `+p+` ESCAPE '\')`)
		}
	}
	if q.Domain != nil {
		where = append(where, "l.domain_id = "+arg(*q.Domain))
	}
	if len(q.Tags) > 0 {
		where = append(where, "l.tags @> "+arg(q.Tags)+"::text[]")
	}
	switch q.Archived {
	case linkforge.ArchivedFalse:
		where = append(where, "NOT l.archived")
	case linkforge.ArchivedTrue:
		where = append(where, "l.archived")
	}
	switch q.State {
	case linkforge.StateActive:
		n := arg(q.Now)
		where = append(where, `(l.expires_at IS NULL OR l.expires_at > `+n+`) AND (l.max_clicks IS NULL OR `+totalClicks+` < l.max_clicks)
			AND NOT l.disabled AND l.blocked_reason IS NULL AND l.unsafe_reason IS NULL`)
	case linkforge.StateDisabled:
		where = append(where, `l.disabled AND l.blocked_reason IS NULL AND l.unsafe_reason IS NULL`)
	case linkforge.StateBlocked:
		where = append(where, `l.blocked_reason IS NOT NULL`)
	case linkforge.StateUnsafe:
		where = append(where, `l.blocked_reason IS NULL AND l.unsafe_reason IS NOT NULL`)
	case linkforge.StateExpired:
		n := arg(q.Now)
		where = append(where, `((l.expires_at IS NOT NULL AND l.expires_at <= `+n+`) OR (l.max_clicks IS NOT NULL AND `+totalClicks+` >= l.max_clicks))`)
	}
	switch q.Health {
	case linkforge.HealthUnchecked:
		where = append(where, `l.health_state IS NULL`)
	case linkforge.HealthOK, linkforge.HealthBroken:
		where = append(where, `l.health_state = `+arg(q.Health))
	}

	var key string
	switch q.Sort {
	case linkforge.SortCreated, linkforge.SortCreatedDesc:
		key = "l.created_at"
	case linkforge.SortClicks, linkforge.SortClicksDesc:
		key = totalClicks
	case linkforge.SortSlug:
		// Byte order, as on SQLite; links_tenant_slug has this collation.
		key = `l.slug COLLATE "C"`
	}
	cmp, dir := ">", "ASC"
	if q.Sort.Desc() {
		cmp, dir = "<", "DESC"
	}
	// A slug repeats on a tenant's other domains, so every order ends with
	// the id.
	order := key + " " + dir + ", l.id " + dir
	if q.Cursor != "" {
		switch q.Sort {
		case linkforge.SortSlug:
			where = append(where, "("+key+", l.id) "+cmp+" ("+arg(cur.Slug)+"::text COLLATE \"C\", "+arg(cur.ID)+"::bigint)")
		case linkforge.SortClicks, linkforge.SortClicksDesc:
			where = append(where, "("+key+", l.id) "+cmp+" ("+arg(cur.Clicks)+"::bigint, "+arg(cur.ID)+"::bigint)")
		default:
			where = append(where, "("+key+", l.id) "+cmp+" ("+arg(cur.CreatedAt)+"::timestamptz, "+arg(cur.ID)+"::bigint)")
		}
	}
	// One row more than asked tells whether there is a next page.
	limit := arg(q.Limit + 1)
	links, err := query(ctx, db.pool, linkScan(true),
		`SELECT `+linkColumns+`, `+totalClicks+` FROM links l WHERE `+strings.Join(where, " AND ")+
			` ORDER BY `+order+` LIMIT `+limit, args...)
	if err != nil {
		return linkforge.LinkPage{}, fmt.Errorf("postgres: query links: %w", err)
	}
	return linkforge.TrimPage(links, q.Limit, func(l linkforge.Link) string { return linkforge.EncodeListCursor(q.Sort, l) }), nil
}

// TagCounts returns the tenant's tags with their link counts, by count
// descending, then tag in byte order. It reads link_tag_counts, which
// triggers keep (migration 00007): a row per tag, whatever the number of
// links.
func (db *DB) TagCounts(ctx context.Context, tenantID int64) ([]linkforge.TagCount, error) {
	tags, err := query(ctx, db.pool, scanTagCount,
		`SELECT tag, links FROM link_tag_counts WHERE tenant_id = $1 AND links > 0
		 ORDER BY links DESC, tag COLLATE "C"`, tenantID)
	if err != nil {
		return nil, fmt.Errorf("postgres: tag counts: %w", err)
	}
	return tags, nil
}

func scanTagCount(r pgx.Row) (linkforge.TagCount, error) {
	var tc linkforge.TagCount
	err := r.Scan(&tc.Tag, &tc.Links)
	return tc, err
}

// CreateLinks stores links in one transaction and one round trip: a batch
// of INSERT ... ON CONFLICT (domain_id, slug) DO NOTHING RETURNING id, where a taken
// slug inserts nothing and answers no row (its EConflict) without
// aborting the transaction, as a unique violation would. The alarms of the
// created links with an ExpiresAt are inserted by the same statements.
//
// The statements lock the tag count rows of their links (migration 00007)
// one link after the other, so two concurrent calls whose links share
// tags in different orders can deadlock; PostgreSQL then aborts one, which
// is retried here, a few times.
func (db *DB) CreateLinks(ctx context.Context, links []linkforge.Link) ([]linkforge.BulkResult, error) {
	for attempt := 1; ; attempt++ {
		results, err := db.createLinks(ctx, links)
		if pgCode(err) != deadlockDetected || attempt == createLinksAttempts {
			return results, err
		}
	}
}

// createLinksAttempts bounds CreateLinks' retries after a deadlock.
const createLinksAttempts = 3

// deadlockDetected is PostgreSQL's SQLSTATE for a transaction aborted to
// break a deadlock.
const deadlockDetected = "40P01"

func (db *DB) createLinks(ctx context.Context, links []linkforge.Link) ([]linkforge.BulkResult, error) {
	results := make([]linkforge.BulkResult, len(links))
	if len(links) == 0 {
		return results, nil
	}
	ts := now()
	prepared := make([]linkforge.Link, len(links))
	for i, in := range links {
		l := linkforge.NormalizeLink(in)
		l.CreatedAt, l.UpdatedAt, l.Clicks = ts, ts, l.ImportedClicks
		prepared[i] = l
	}
	tx, err := db.pool.Begin(ctx)
	if err != nil {
		return nil, fmt.Errorf("postgres: create links: %w", err)
	}
	defer rollback(ctx, tx)
	owners, err := domainOwners(ctx, tx, prepared)
	if err != nil {
		return nil, fmt.Errorf("postgres: create links: %w", err)
	}
	// Quotas: the tenant's max_links admits a link at a time (quota.go).
	err = withinLinkQuota(ctx, tx, prepared, results, func(round []int) error {
		batch := &pgx.Batch{}
		var idx []int
		for _, i := range round {
			if d := prepared[i].DomainID; d != linkforge.PublicDomainID && owners[d] != prepared[i].TenantID {
				results[i].Err = notFound("domain")
				continue
			}
			idx = append(idx, i)
			q, args := insertLinkQuery(prepared[i])
			batch.Queue(strings.Replace(q, ") RETURNING id", ") ON CONFLICT (domain_id, slug) DO NOTHING RETURNING id", 1), args...)
		}
		br := tx.SendBatch(ctx, batch)
		for _, i := range idx {
			err := br.QueryRow().Scan(&prepared[i].ID)
			switch {
			case errors.Is(err, pgx.ErrNoRows):
				results[i].Err = &linkforge.Error{Code: linkforge.EConflict, Message: "slug already in use"}
			case err != nil:
				br.Close()
				return linkWriteError("create links", err)
			default:
				results[i].Link = prepared[i]
			}
		}
		if err := br.Close(); err != nil {
			return linkWriteError("create links", err)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	w := db.writes.Begin()
	for _, r := range results {
		if r.Err == nil {
			if err := w.LinkCreated(ctx, writeTx{tx}, r.Link); err != nil {
				return nil, fmt.Errorf("postgres: create links: %w", err)
			}
		}
	}
	if err := tx.Commit(ctx); err != nil {
		return nil, fmt.Errorf("postgres: create links: %w", err)
	}
	w.Committed()
	return results, nil
}

// insertLinkQuery returns CreateLink's statement for l and its arguments:
// the INSERT, with the alarm's INSERT in the same statement when l has an
// ExpiresAt.
func insertLinkQuery(l linkforge.Link) (string, []any) {
	args := []any{l.TenantID, l.Slug, l.URL, l.ExpiresAt, l.ExpiredAt, l.MaxClicks, l.FallbackURL,
		l.Tags, l.CreatedAt, l.UpdatedAt,
		l.Title, l.PasswordHash, l.DeviceURLs.IOS, l.DeviceURLs.Android, l.DeviceURLs.Desktop, l.ImportedClicks,
		l.RedirectCode(), l.Routes().ForwardQuery, linkforge.EncodeRouting(&l), l.DomainID,
		l.Notes, l.Archived, l.ValidSince}
	utm := l.UTMs()
	args = append(args, utm.Source, utm.Medium, utm.Campaign, utm.Term, utm.Content)
	if l.ExpiresAt == nil {
		return insertLinkSQL, args
	}
	return insertLinkWithAlarmSQL, append(args, string(linkforge.AlarmStateFor(&l)))
}
