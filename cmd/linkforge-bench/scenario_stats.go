package main

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/migrations"
)

// The p99 each analytics query aims at (a benchmark target, not a test;
// docs/benchmarks.md).
const targetStatsP99 = 50 * time.Millisecond

// statsNode is the node id of the bulk-loaded rows.
const statsNode = "bench-load"

// runStats bulk-loads --stats-clicks clicks over --stats-days into a fresh
// store, as minute rollup rows and click_dims rows of one node, written
// directly into the database like the other scenarios' links (COPY on
// PostgreSQL), with the aggregates backfilled once from them, then
// starts LinkForge on it and measures each analytics query over the whole
// range, one request at a time, over HTTP. Once on SQLite, once on
// PostgreSQL.
func runStats(ctx context.Context, b *bench) ([]row, error) {
	if b.cfg.target != "" {
		return []row{{scenario: "stats", target: "linkforge (--target)",
			notes: "skipped: it bulk-loads clicks into the database of a server the tool starts"}}, nil
	}
	var (
		rows []row
		errs []error
	)
	for backend := range strings.SplitSeq(b.cfg.statsBackends, ",") {
		if backend != "sqlite" && backend != "postgres" {
			return rows, fmt.Errorf("--stats-backends: unknown store %q (sqlite or postgres)", backend)
		}
		r, err := runStatsOn(ctx, b, backend)
		rows = append(rows, r...)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", backend, err))
		}
	}
	return rows, errors.Join(errs...)
}

func runStatsOn(ctx context.Context, b *bench, backend string) ([]row, error) {
	in := &instance{b: b, backend: backend}
	var err error
	if in.dataDir, err = os.MkdirTemp(b.tmp, "data-"); err != nil {
		return nil, fmt.Errorf("create data dir: %w", err)
	}
	if backend == "postgres" {
		dbURL, skip, err := b.postgresURL(ctx)
		if err != nil {
			return nil, err
		}
		if skip != "" {
			return []row{{scenario: "stats", target: "linkforge postgres", notes: "skipped: " + skip}}, nil
		}
		in.dbURL = dbURL
	}
	links := b.newLinks(b.cfg.statsLinks)
	if backend == "postgres" {
		if err := in.importLinks(ctx, links); err != nil {
			return nil, err
		}
	}
	end := time.Now().UTC().Truncate(time.Hour).Add(time.Hour) // the end of the current hour
	gen := statsGen{clicks: b.cfg.statsClicks, links: len(links), days: b.cfg.statsDays, seed: b.cfg.seed,
		start: end.Add(-time.Duration(b.cfg.statsDays) * 24 * time.Hour), noDims: !b.cfg.statsDims}
	b.log.Info("stats: loading clicks", "backend", backend, "clicks", gen.clicks, "links", gen.links, "days", gen.days)
	start := time.Now()
	loaded, err := in.loadClicks(ctx, links, gen)
	if err != nil {
		return nil, fmt.Errorf("load clicks: %w", err)
	}
	loadTook := time.Since(start)
	b.log.Info("stats: clicks loaded", "backend", backend, "minute_rows", loaded.minutes, "dim_rows", loaded.dims, "took", loadTook.Round(time.Second))

	if in.token, err = createToken(ctx, b.bin, in.dataDir, in.dbURL, benchTenant); err != nil {
		return nil, err
	}
	// No rate limit: the requests are sequential, and the limit would time
	// the token bucket, not the query.
	if in.proc, err = startLinkForge(ctx, b.bin, in.dataDir, in.dbURL, b.cfg.flushEvery, b.cfg.journalSync, "--rate-limit", "0"); err != nil {
		return nil, err
	}
	in.base = "http://" + in.proc.addr
	defer in.close()

	queries, rangeQuery := statsQueries(gen, end, links[loaded.hottest].slug)
	check, err := in.checkStats(ctx, gen, queries[0].path, rangeQuery)
	if err != nil {
		return nil, err
	}

	how := fmt.Sprintf("COPY batches of 100,000 rows, then one backfill of the aggregates in %s", loaded.migrate.Round(time.Second))
	if backend == "sqlite" {
		how = fmt.Sprintf("then migrations 00006-00008 backfilled the aggregates in %s", loaded.migrate.Round(time.Second))
	}
	rows := []row{{scenario: "stats", target: "linkforge " + backend + " bulk load", thr: -1,
		notes: fmt.Sprintf("%d clicks on %d links over %d days: %d minute rows, %d click_dims rows, loaded in %s, %s; %s",
			gen.clicks, gen.links, gen.days, loaded.minutes, loaded.dims, loadTook.Round(time.Second), how, check)}}
	for _, q := range queries {
		b.log.Info("stats: query", "backend", backend, "query", q.name)
		lat, errCount, err := in.timeGets(ctx, q.path, b.cfg.statsRequests)
		if err != nil {
			return rows, err
		}
		p50, p99 := percentile(lat, 0.50), percentile(lat, 0.99)
		rows = append(rows, row{scenario: "stats", target: "linkforge " + backend + " " + q.name,
			rate: "sequential", measured: true, thr: -1, p50: p50, p99: p99,
			requests: uint64(len(lat)) + errCount, errors: errCount,
			notes: fmt.Sprintf("p99 target ≤ %s: %s", targetStatsP99, metOrMissed(p99 <= targetStatsP99 && errCount == 0))})
	}
	return rows, nil
}

// statsQuery is one measured query of the stats scenario: its name in the
// report, and its path and query string.
type statsQuery struct{ name, path string }

// statsQueries returns the stats scenario's queries over the loaded range
// (gen.start to end), hottest being the slug of the link with the most
// clicks, and that range as a query string.
func statsQueries(gen statsGen, end time.Time, hottest string) ([]statsQuery, string) {
	rng := url.Values{"from": {gen.start.Format(time.RFC3339)}, "to": {end.Format(time.RFC3339)}}
	with := func(extra ...string) string {
		q := url.Values{}
		for k, v := range rng {
			q[k] = v
		}
		for i := 0; i+1 < len(extra); i += 2 {
			q.Set(extra[i], extra[i+1])
		}
		return q.Encode()
	}
	days := fmt.Sprintf("%d d", gen.days)
	queries := []statsQuery{
		{"stats?interval=hour, " + days, "/api/v1/stats?" + with("interval", "hour")},
		{"stats?interval=day, " + days, "/api/v1/stats?" + with("interval", "day")},
		{"stats, defaults (last 60 min by minute)", "/api/v1/stats"},
	}
	for d := range linkforge.NumDimensions {
		if !d.Public() || gen.noDims {
			continue
		}
		queries = append(queries, statsQuery{"stats/" + d.String() + ", " + days, "/api/v1/stats/" + d.String() + "?" + with()})
	}
	queries = append(queries,
		statsQuery{"stats/links, " + days, "/api/v1/stats/links?" + with()},
		statsQuery{"stats/links, last 24 h", "/api/v1/stats/links"},
		statsQuery{"hottest link's stats?interval=hour, " + days,
			"/api/v1/links/" + hottest + "/stats?" + with("interval", "hour")},
	)
	if !gen.noDims {
		queries = append(queries, statsQuery{"hottest link's country, " + days,
			"/api/v1/links/" + hottest + "/stats/country?" + with()})
	}
	if gen.days > 7 {
		// A range inside the data, not aligned to days: top links cannot
		// lean on the range holding every click of the leaders.
		week := url.Values{"from": {end.Add(-7*24*time.Hour - 5*time.Hour).Format(time.RFC3339)}, "to": {end.Add(-5 * time.Hour).Format(time.RFC3339)}}
		queries = append(queries, statsQuery{"stats/links, 7 d ending 5 h ago", "/api/v1/stats/links?" + week.Encode()})
		if !gen.noDims {
			queries = append(queries, statsQuery{"stats/referrer, 7 d ending 5 h ago", "/api/v1/stats/referrer?" + week.Encode()})
		}
	}
	return queries, with()
}

// checkStats asks the first query (path) and the breakdowns over the loaded
// range (the query string rangeQuery), and says whether the answers hold
// every loaded click: the measured queries must be the right ones, not fast
// failures.
func (in *instance) checkStats(ctx context.Context, gen statsGen, path, rangeQuery string) (string, error) {
	var st struct {
		Total   int64
		Buckets []struct{ Count int64 }
	}
	if err := in.api(ctx, http.MethodGet, path, nil, &st); err != nil {
		return "", err
	}
	var inRange int64
	for _, bk := range st.Buckets {
		inRange += bk.Count
	}
	check := "answers hold every loaded click"
	if st.Total < gen.clicks || inRange != gen.clicks {
		check = fmt.Sprintf("MISMATCH: stats total %d, %d in range, %d loaded", st.Total, inRange, gen.clicks)
	}
	breakdowns := []string{"country", "utm_source"}
	if gen.noDims {
		breakdowns = nil
		check += "; no click_dims rows (--stats-dims=false): no breakdown queried"
	}
	for _, d := range breakdowns {
		var bd struct{ Total int64 }
		if err := in.api(ctx, http.MethodGet, "/api/v1/stats/"+d+"?"+rangeQuery, nil, &bd); err != nil {
			return "", err
		}
		if bd.Total != gen.clicks {
			check = fmt.Sprintf("MISMATCH: %s total %d, %d loaded", d, bd.Total, gen.clicks)
		}
	}
	return check, nil
}

// timeGets sends n GET requests to path one after the other, after 3
// unreported ones, and returns the latencies of the 200 answers and the
// count of the others.
func (in *instance) timeGets(ctx context.Context, path string, n int) ([]time.Duration, uint64, error) {
	var (
		lat  []time.Duration
		errs uint64
	)
	for i := range n + 3 {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, in.base+path, nil)
		if err != nil {
			return nil, 0, err
		}
		req.Header.Set("Authorization", "Bearer "+in.token)
		t0 := time.Now()
		resp, err := in.b.client.Do(req)
		if err != nil {
			return nil, 0, fmt.Errorf("GET %s: %w", path, err)
		}
		_, err = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		took := time.Since(t0)
		if i < 3 {
			continue
		}
		if err != nil || resp.StatusCode != http.StatusOK {
			errs++
			continue
		}
		lat = append(lat, took)
	}
	return lat, errs, nil
}

// percentile returns the p-th latency (nearest rank); 0 for none.
func percentile(lat []time.Duration, p float64) time.Duration {
	if len(lat) == 0 {
		return 0
	}
	s := slices.Clone(lat)
	slices.Sort(s)
	i := int(p*float64(len(s))+0.999999) - 1
	return s[max(0, min(i, len(s)-1))]
}

// loadResult says what loadClicks wrote.
type loadResult struct {
	minutes, dims int64
	migrate       time.Duration // the backfill of the aggregates (SQLite: migration 00006's) of what was loaded
	hottest       int           // index of the link with the most clicks
}

// loadBatch is the rows of one COPY or one SQLite transaction.
const loadBatch = 100_000

// loadClicks writes gen's rows into the instance's database and the
// aggregates that sum them, as the counter's flushes would leave them.
func (in *instance) loadClicks(ctx context.Context, links []benchLink, gen statsGen) (loadResult, error) {
	if in.dbURL != "" {
		return in.loadClicksPostgres(ctx, links, gen)
	}
	return in.loadClicksSQLite(ctx, links, gen)
}

// linkIDs maps the links' index to their ids.
func linkIDs(slugs map[string]int64, links []benchLink) ([]int64, error) {
	ids := make([]int64, len(links))
	for i, l := range links {
		id, ok := slugs[l.slug]
		if !ok {
			return nil, fmt.Errorf("link %s was not imported", l.slug)
		}
		ids[i] = id
	}
	return ids, nil
}

// analyticsMigration is the migration that adds the aggregates; the SQLite
// load writes the raw rows under the schema before it.
const analyticsMigration = 6

// loadClicksSQLite writes the tenant, the links and gen's rows under the
// schema before migration 00006, then migrates: SQLite's triggers run per
// row, and 10 million clicks through them would take many minutes, where
// the migration's backfill (what an existing deployment runs once) takes
// one pass. The store is not opened before: importLinks would migrate it.
func (in *instance) loadClicksSQLite(ctx context.Context, links []benchLink, gen statsGen) (loadResult, error) {
	// The store's own pragmas: WAL, one writer.
	db, err := sql.Open("sqlite", "file:"+filepath.ToSlash(filepath.Join(in.dataDir, sqliteFile))+
		"?_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)&_pragma=synchronous(NORMAL)&_pragma=foreign_keys(1)&_txlock=immediate")
	if err != nil {
		return loadResult{}, err
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	if _, err := migrations.UpTo(ctx, db, migrations.SQLite, analyticsMigration-1); err != nil {
		return loadResult{}, err
	}
	ids, err := insertLinksSQLite(ctx, db, links)
	if err != nil {
		return loadResult{}, err
	}

	var (
		res        loadResult
		tx         *sql.Tx
		minuteStmt *sql.Stmt
		dimStmt    *sql.Stmt
		inTx       int
		perLink    = make([]int64, len(links))
	)
	begin := func() error {
		var err error
		if tx, err = db.BeginTx(ctx, nil); err != nil {
			return err
		}
		if minuteStmt, err = tx.PrepareContext(ctx, `INSERT INTO click_rollup (link_id, bucket, node_id, count) VALUES (?, ?, ?, ?)`); err != nil { //nolint:sqlclosecheck // commit() closes it
			return err
		}
		dimStmt, err = tx.PrepareContext(ctx, `INSERT INTO click_dims (link_id, hour, dimension, value, node_id, count) VALUES (?, ?, ?, ?, ?, ?)`) //nolint:sqlclosecheck // commit() closes it
		return err
	}
	commit := func() error {
		minuteStmt.Close()
		dimStmt.Close()
		inTx = 0
		return tx.Commit()
	}
	if err := begin(); err != nil {
		return res, err
	}
	next := func() error {
		if inTx++; inTx < loadBatch {
			return nil
		}
		if err := commit(); err != nil {
			return err
		}
		return begin()
	}
	err = gen.run(func(link int, bucket time.Time, n int64) error {
		res.minutes++
		perLink[link] += n
		if _, err := minuteStmt.ExecContext(ctx, ids[link], bucket.Unix(), statsNode, n); err != nil {
			return err
		}
		return next()
	}, func(link int, hour time.Time, d linkforge.Dimension, value string, n int64) error {
		res.dims++
		if _, err := dimStmt.ExecContext(ctx, ids[link], hour.Unix(), d.String(), value, statsNode, n); err != nil {
			return err
		}
		return next()
	})
	if err != nil {
		tx.Rollback()
		return res, err
	}
	if err := commit(); err != nil {
		return res, err
	}
	start := time.Now()
	if _, err := migrations.Up(ctx, db, migrations.SQLite); err != nil {
		return res, err
	}
	res.migrate = time.Since(start)
	res.hottest = hottest(perLink)
	return res, nil
}

// insertLinksSQLite inserts the bench tenant and links into db, in one
// transaction, and returns the links' ids.
func insertLinksSQLite(ctx context.Context, db *sql.DB, links []benchLink) ([]int64, error) {
	ids := make([]int64, len(links))
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	now := time.Now().UnixMicro()
	var tenant int64
	if err := tx.QueryRowContext(ctx, `INSERT INTO tenants (name, created_at) VALUES (?, ?) RETURNING id`, benchTenant, now).Scan(&tenant); err != nil {
		return nil, fmt.Errorf("tenant: %w", err)
	}
	stmt, err := tx.PrepareContext(ctx, `INSERT INTO links (tenant_id, slug, url, created_at, updated_at) VALUES (?, ?, ?, ?, ?) RETURNING id`)
	if err != nil {
		return nil, err
	}
	defer stmt.Close()
	for i, l := range links {
		if err := stmt.QueryRowContext(ctx, tenant, l.slug, l.url, now, now).Scan(&ids[i]); err != nil {
			return nil, fmt.Errorf("link %s: %w", l.slug, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return nil, err
	}
	return ids, nil
}

func (in *instance) loadClicksPostgres(ctx context.Context, links []benchLink, gen statsGen) (loadResult, error) {
	conn, err := pgx.Connect(ctx, in.dbURL)
	if err != nil {
		return loadResult{}, err
	}
	defer conn.Close(context.Background())
	slugs := map[string]int64{}
	rows, err := conn.Query(ctx, `SELECT l.id, l.slug FROM links l JOIN tenants t ON t.id = l.tenant_id WHERE t.name = $1`, benchTenant)
	if err != nil {
		return loadResult{}, err
	}
	for rows.Next() {
		var (
			id   int64
			slug string
		)
		if err := rows.Scan(&id, &slug); err != nil {
			rows.Close()
			return loadResult{}, err
		}
		slugs[slug] = id
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return loadResult{}, err
	}
	ids, err := linkIDs(slugs, links)
	if err != nil {
		return loadResult{}, err
	}

	var (
		res     loadResult
		minutes [][]any
		dims    [][]any
		perLink = make([]int64, len(links))
	)
	// COPY batches of raw rows, then one backfill of the aggregates
	// (backfillPostgres): the store keeps them in Go in its own writes
	// (docs/adr/052-aggregate-upkeep.md), and a bulk load is not one.
	flushMinutes := func() error {
		if len(minutes) == 0 {
			return nil
		}
		_, err := conn.CopyFrom(ctx, pgx.Identifier{"click_rollup"}, []string{"link_id", "bucket", "node_id", "count"}, pgx.CopyFromRows(minutes))
		minutes = minutes[:0]
		return err
	}
	flushDims := func() error {
		if len(dims) == 0 {
			return nil
		}
		_, err := conn.CopyFrom(ctx, pgx.Identifier{"click_dims"}, []string{"link_id", "hour", "dimension", "value", "node_id", "count"}, pgx.CopyFromRows(dims))
		dims = dims[:0]
		return err
	}
	err = gen.run(func(link int, bucket time.Time, n int64) error {
		res.minutes++
		perLink[link] += n
		minutes = append(minutes, []any{ids[link], bucket, statsNode, n})
		if len(minutes) >= loadBatch {
			return flushMinutes()
		}
		return nil
	}, func(link int, hour time.Time, d linkforge.Dimension, value string, n int64) error {
		res.dims++
		dims = append(dims, []any{ids[link], hour, d.String(), value, statsNode, n})
		if len(dims) >= loadBatch {
			return flushDims()
		}
		return nil
	})
	if err == nil {
		err = errors.Join(flushMinutes(), flushDims())
	}
	if err != nil {
		return res, err
	}
	start := time.Now()
	if err := backfillPostgres(ctx, conn); err != nil {
		return res, fmt.Errorf("backfill: %w", err)
	}
	res.migrate = time.Since(start)
	// What autovacuum's analyze would have done by the time a real
	// database held a month of clicks.
	if _, err := conn.Exec(ctx, `ANALYZE`); err != nil {
		return res, fmt.Errorf("analyze: %w", err)
	}
	res.hottest = hottest(perLink)
	return res, nil
}

// backfillPostgres sums the raw rows of a fresh load into every
// aggregate, one GROUP BY each, as migration 00006 did for SQLite: each
// aggregate row is the sum of its raw rows.
func backfillPostgres(ctx context.Context, conn *pgx.Conn) error {
	for _, q := range []string{
		`INSERT INTO tenant_hourly (tenant_id, hour, count, automated)
		SELECT l.tenant_id, date_trunc('hour', r.bucket, 'UTC'), SUM(r.count), 0 FROM click_rollup r JOIN links l ON l.id = r.link_id GROUP BY 1, 2`,
		`INSERT INTO link_hourly (tenant_id, hour, link_id, count, automated)
		SELECT l.tenant_id, date_trunc('hour', r.bucket, 'UTC'), l.id, SUM(r.count), 0 FROM click_rollup r JOIN links l ON l.id = r.link_id GROUP BY 1, 2, 3`,
		`INSERT INTO link_daily (tenant_id, day, link_id, count)
		SELECT l.tenant_id, date_trunc('day', r.bucket, 'UTC'), l.id, SUM(r.count) FROM click_rollup r JOIN links l ON l.id = r.link_id GROUP BY 1, 2, 3`,
		`UPDATE links l SET rollup_clicks = s.n FROM (SELECT link_id, SUM(count) AS n FROM click_rollup GROUP BY 1) s WHERE l.id = s.link_id`,
		`INSERT INTO tenant_dims_hourly (tenant_id, dimension, hour, automated, value, count)
		SELECT l.tenant_id, c.dimension, c.hour, c.automated, c.value, SUM(c.count) FROM click_dims c JOIN links l ON l.id = c.link_id GROUP BY 1, 2, 3, 4, 5`,
		`INSERT INTO tenant_dims_daily (tenant_id, dimension, day, automated, value, count)
		SELECT l.tenant_id, c.dimension, date_trunc('day', c.hour, 'UTC'), c.automated, c.value, SUM(c.count) FROM click_dims c JOIN links l ON l.id = c.link_id GROUP BY 1, 2, 3, 4, 5`,
		`INSERT INTO link_dims_daily (link_id, dimension, day, automated, value, count)
		SELECT c.link_id, c.dimension, date_trunc('day', c.hour, 'UTC'), c.automated, c.value, SUM(c.count) FROM click_dims c JOIN links l ON l.id = c.link_id GROUP BY 1, 2, 3, 4, 5`,
	} {
		if _, err := conn.Exec(ctx, q); err != nil {
			return err
		}
	}
	return nil
}

func hottest(perLink []int64) int {
	best := 0
	for i, n := range perLink {
		if n > perLink[best] {
			best = i
		}
	}
	return best
}
