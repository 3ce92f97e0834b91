package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/linkforge/linkforge"
)

// totalClicks is a link's Clicks from its own columns: the rollup total the
// click_rollup triggers keep (migration 00007) plus the imported clicks.
// It is the expression of the links_tenant_clicks index.
const totalClicks = `(l.rollup_clicks + l.imported_clicks)`

// minTrigramQuery is the shortest search the trigram index can answer: a
// shorter one has no trigram and is a scan of the tenant's links.
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
		from     = "links l"
		fromArgs []any
		where    = []string{"l.tenant_id = ?"}
		args     = []any{q.TenantID}
	)
	if q.Q != "" {
		f, fa, w, wa, err := db.searchFilter(ctx, q.Q)
		if err != nil {
			return linkforge.LinkPage{}, err
		}
		if f != "" {
			from, fromArgs = f, fa
		}
		if w != "" {
			where, args = append(where, w), append(args, wa...)
		}
	}
	if q.Domain != nil {
		where = append(where, "l.domain_id = ?")
		args = append(args, *q.Domain)
	}
	for _, t := range q.Tags {
		where = append(where, `EXISTS (SELECT 1 FROM json_each(l.tags) WHERE value = ?)`)
		args = append(args, t)
	}
	switch q.Archived {
	case linkforge.ArchivedFalse:
		where = append(where, "l.archived = 0")
	case linkforge.ArchivedTrue:
		where = append(where, "l.archived = 1")
	}
	nowUS := toMicros(q.Now)
	switch q.State {
	case linkforge.StateActive:
		where = append(where, `(l.expires_at IS NULL OR l.expires_at > ?) AND (l.max_clicks IS NULL OR `+totalClicks+` < l.max_clicks)
			AND l.disabled = 0 AND l.blocked_reason IS NULL AND l.unsafe_reason IS NULL`)
		args = append(args, nowUS)
	case linkforge.StateDisabled:
		where = append(where, `l.disabled = 1 AND l.blocked_reason IS NULL AND l.unsafe_reason IS NULL`)
	case linkforge.StateBlocked:
		where = append(where, `l.blocked_reason IS NOT NULL`)
	case linkforge.StateUnsafe:
		where = append(where, `l.blocked_reason IS NULL AND l.unsafe_reason IS NOT NULL`)
	case linkforge.StateExpired:
		where = append(where, `((l.expires_at IS NOT NULL AND l.expires_at <= ?) OR (l.max_clicks IS NOT NULL AND `+totalClicks+` >= l.max_clicks))`)
		args = append(args, nowUS)
	}

	switch q.Health {
	case linkforge.HealthUnchecked:
		where = append(where, `l.health_state IS NULL`)
	case linkforge.HealthOK, linkforge.HealthBroken:
		where = append(where, `l.health_state = ?`)
		args = append(args, q.Health)
	}

	var key string
	switch q.Sort {
	case linkforge.SortCreated, linkforge.SortCreatedDesc:
		key = "l.created_at"
	case linkforge.SortClicks, linkforge.SortClicksDesc:
		key = totalClicks
	case linkforge.SortSlug:
		key = "l.slug"
	}
	cmp, dir := ">", "ASC"
	if q.Sort.Desc() {
		cmp, dir = "<", "DESC"
	}
	// A slug repeats on a tenant's other domains, so every order ends with
	// the id; links_tenant_slug holds the rowid after the slug.
	order := key + " " + dir + ", l.id " + dir
	if q.Cursor != "" {
		switch q.Sort {
		case linkforge.SortSlug:
			where = append(where, "("+key+", l.id) "+cmp+" (?, ?)")
			args = append(args, cur.Slug, cur.ID)
		case linkforge.SortClicks, linkforge.SortClicksDesc:
			where = append(where, "("+key+", l.id) "+cmp+" (?, ?)")
			args = append(args, cur.Clicks, cur.ID)
		default:
			where = append(where, "("+key+", l.id) "+cmp+" (?, ?)")
			args = append(args, toMicros(cur.CreatedAt), cur.ID)
		}
	}
	// One row more than asked tells whether there is a next page.
	args = append(args, q.Limit+1)
	links, err := query(ctx, db.reader, linkScan(true),
		`SELECT `+linkColumns+`, `+totalClicks+` FROM `+from+` WHERE `+strings.Join(where, " AND ")+
			` ORDER BY `+order+` LIMIT ?`, append(fromArgs, args...)...)
	if err != nil {
		return linkforge.LinkPage{}, fmt.Errorf("sqlite: query links: %w", err)
	}
	return linkforge.TrimPage(links, q.Limit, func(l linkforge.Link) string { return linkforge.EncodeListCursor(q.Sort, l) }), nil
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// searchDriveLimit is the number of search matches (over all tenants) up
// to which QueryLinks reads the matches by id and sorts them, rather than
// walking the sort's index: sorting a few thousand rows costs a few
// milliseconds, and more matches are dense enough for the walk to stop
// early.
var searchDriveLimit = 5000

// searchIDs returns the ids of the links matching phrase as a JSON array,
// or "" when there are more than searchDriveLimit of them.
func (db *DB) searchIDs(ctx context.Context, phrase string) (string, error) {
	rows, err := db.reader.QueryContext(ctx,
		`SELECT rowid FROM links_search WHERE links_search MATCH ? LIMIT ?`, phrase, searchDriveLimit+1)
	if err != nil {
		return "", fmt.Errorf("sqlite: search links: %w", err)
	}
	defer rows.Close()
	ids := make([]byte, 0, 256)
	ids = append(ids, '[')
	n := 0
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			return "", fmt.Errorf("sqlite: search links: %w", err)
		}
		if n++; n > searchDriveLimit {
			return "", nil
		}
		if n > 1 {
			ids = append(ids, ',')
		}
		ids = strconv.AppendInt(ids, id, 10)
	}
	if err := rows.Err(); err != nil {
		return "", fmt.Errorf("sqlite: search links: %w", err)
	}
	return string(append(ids, ']')), nil
}

// TagCounts returns the tenant's tags with their link counts, by count
// descending, then tag. It reads link_tag_counts, which triggers keep
// (migration 00007): a row per tag, whatever the number of links.
func (db *DB) TagCounts(ctx context.Context, tenantID int64) ([]linkforge.TagCount, error) {
	tags, err := query(ctx, db.reader, scanTagCount,
		`SELECT tag, links FROM link_tag_counts WHERE tenant_id = ? AND links > 0
		 ORDER BY links DESC, tag`, tenantID)
	if err != nil {
		return nil, fmt.Errorf("sqlite: tag counts: %w", err)
	}
	return tags, nil
}

func scanTagCount(r scanner) (linkforge.TagCount, error) {
	var tc linkforge.TagCount
	err := r.Scan(&tc.Tag, &tc.Links)
	return tc, err
}

// CreateLinks stores links in one write transaction through one prepared
// INSERT ... ON CONFLICT (domain_id, slug) DO NOTHING: a taken slug inserts nothing
// and answers no id, which is its EConflict, and the others go on. The
// alarms of the created links with an ExpiresAt are written in the same
// transaction.
func (db *DB) CreateLinks(ctx context.Context, links []linkforge.Link) ([]linkforge.BulkResult, error) {
	results := make([]linkforge.BulkResult, len(links))
	if len(links) == 0 {
		return results, nil
	}
	tx, err := db.writer.BeginTx(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("sqlite: create links: %w", err)
	}
	defer tx.Rollback()
	stmt, err := tx.PrepareContext(ctx, insertLinkSQL+` ON CONFLICT (domain_id, slug) DO NOTHING RETURNING id`)
	if err != nil {
		return nil, fmt.Errorf("sqlite: create links: %w", err)
	}
	defer stmt.Close()
	ts := now()
	w := db.writes.Begin()
	for i, in := range links {
		l := linkforge.NormalizeLink(in)
		l.CreatedAt, l.UpdatedAt, l.Clicks = ts, ts, l.ImportedClicks
		args, err := insertArgs(l)
		if err != nil {
			return nil, fmt.Errorf("sqlite: create links: slug %q: %w", l.Slug, err)
		}
		if err := linkDomainOf(ctx, tx, l); err != nil {
			if linkforge.ErrorCode(err) != linkforge.ENotFound {
				return nil, fmt.Errorf("sqlite: create links: %w", err)
			}
			results[i].Err = err
			continue
		}
		err = stmt.QueryRowContext(ctx, args...).Scan(&l.ID)
		switch {
		case errors.Is(err, sql.ErrNoRows):
			results[i].Err = &linkforge.Error{Code: linkforge.EConflict, Message: "slug already in use"}
			continue
		case isQuotaExceeded(err): // the trigger undid this insert only
			results[i].Err = quotaError(err)
			continue
		case err != nil:
			return nil, linkWriteError("create links", err)
		}
		if l.ExpiresAt != nil {
			if err := scheduleAlarm(ctx, tx, l, ts); err != nil {
				return nil, fmt.Errorf("sqlite: create links: %w", err)
			}
		}
		if err := w.LinkCreated(ctx, writeTx{tx}, l); err != nil {
			return nil, fmt.Errorf("sqlite: create links: %w", err)
		}
		results[i].Link = l
	}
	if err := tx.Commit(); err != nil {
		return nil, fmt.Errorf("sqlite: create links: %w", err)
	}
	w.Committed()
	return results, nil
}

// searchFilter is QueryLinks' filter for the search text text: either a
// from clause over the few matching ids (from non-empty), or a condition
// on each link of the sort's walk (where non-empty), with their arguments.
func (db *DB) searchFilter(ctx context.Context, text string) (from string, fromArgs []any, where string, args []any, err error) {
	likeAll := `(l.slug LIKE ? ESCAPE '\' OR l.url LIKE ? ESCAPE '\' OR l.title LIKE ? ESCAPE '\' OR l.notes LIKE ? ESCAPE '\')`
	if utf8.RuneCountInString(text) < minTrigramQuery {
		// LIKE folds ASCII letters only. No index: the walk of the
		// sort's index stops after a page of matches.
		p := linkforge.LikePattern(text)
		return "", nil, likeAll, []any{p, p, p, p}, nil
	}
	// A phrase of the trigram tokenizer matches exactly the texts holding
	// text, case-insensitively (Unicode).
	phrase := `"` + strings.ReplaceAll(text, `"`, `""`) + `"`
	ids, err := db.searchIDs(ctx, phrase)
	if err != nil {
		return "", nil, "", nil, err
	}
	switch {
	case ids != "":
		// Few matches: read them by id and sort them; no walk of the
		// tenant's links.
		return "json_each(?) j CROSS JOIN links l ON l.id = j.value", []any{ids}, "", nil, nil
	case isASCII(text):
		// Many matches: walk the sort's index and test each link;
		// matches are dense enough that a page comes after few tests.
		// LIKE folds ASCII as the trigram index does, and costs a
		// microsecond a link.
		p := linkforge.LikePattern(text)
		return "", nil, likeAll, []any{p, p, p, p}, nil
	default:
		// The same walk, with a test that folds non-ASCII letters as the
		// index does: a probe of the index by rowid (milliseconds each).
		return "", nil, `EXISTS (SELECT 1 FROM links_search WHERE links_search MATCH ? AND rowid = l.id)`, []any{phrase}, nil
	}
}
