package postgres_test

import (
	"context"
	"database/sql"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/stdlib"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/migrations"
	"github.com/linkforge/linkforge/store/postgres"
)

// rollupView is what the conversion must keep: the raw rows, every
// aggregate and the store's answers.
type rollupView struct {
	Rollup, Dims   [2]int64 // rows, sum of count
	Aggregates     [6]int64 // tenant_hourly, link_hourly, link_daily, tenant_dims_hourly, tenant_dims_daily, link_dims_daily
	RollupClicks   int64
	Stats          linkforge.Stats
	Top            linkforge.TopLinks
	Countries      linkforge.Breakdown
	Totals, Minute []int64
}

func viewRollup(t *testing.T, db *sql.DB, s *postgres.DB, ten int64, links []linkforge.Link) rollupView {
	t.Helper()
	ctx := t.Context()
	var v rollupView
	if err := db.QueryRowContext(ctx, `SELECT
		(SELECT count(*) FROM click_rollup), (SELECT COALESCE(SUM(count), 0) FROM click_rollup),
		(SELECT count(*) FROM click_dims), (SELECT COALESCE(SUM(count), 0) FROM click_dims),
		(SELECT COALESCE(SUM(count), 0) FROM tenant_hourly), (SELECT COALESCE(SUM(count), 0) FROM link_hourly),
		(SELECT COALESCE(SUM(count), 0) FROM link_daily), (SELECT COALESCE(SUM(count), 0) FROM tenant_dims_hourly),
		(SELECT COALESCE(SUM(count), 0) FROM tenant_dims_daily), (SELECT COALESCE(SUM(count), 0) FROM link_dims_daily),
		(SELECT COALESCE(SUM(rollup_clicks), 0) FROM links)`).Scan(&v.Rollup[0], &v.Rollup[1], &v.Dims[0], &v.Dims[1],
		&v.Aggregates[0], &v.Aggregates[1], &v.Aggregates[2], &v.Aggregates[3], &v.Aggregates[4], &v.Aggregates[5],
		&v.RollupClicks); err != nil {
		t.Fatal(err)
	}
	from, to := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(2028, 1, 1, 0, 0, 0, 0, time.UTC)
	v.Stats = dayStats(t, db, ten)
	// Top links, directly: the store reads the archived column of
	// migration 00048.
	v.Top = linkforge.TopLinks{Links: []linkforge.LinkCount{}}
	if err := db.QueryRowContext(ctx, `SELECT COALESCE(SUM(count), 0) FROM tenant_hourly WHERE tenant_id = $1 AND hour >= $2 AND hour < $3`,
		ten, from, to).Scan(&v.Top.Total); err != nil {
		t.Fatal(err)
	}
	top, err := db.QueryContext(ctx, `SELECT l.id, l.slug, l.domain_id, SUM(d.count)::bigint FROM link_daily d JOIN links l ON l.id = d.link_id
		WHERE d.tenant_id = $1 AND d.day >= $2 AND d.day < $3 GROUP BY l.id HAVING SUM(d.count) > 0
		ORDER BY 4 DESC, l.slug COLLATE "C", l.domain_id LIMIT 10`, ten, from, to)
	if err != nil {
		t.Fatal(err)
	}
	defer top.Close()
	for top.Next() {
		var lc linkforge.LinkCount
		if err := top.Scan(&lc.LinkID, &lc.Slug, &lc.DomainID, &lc.Count); err != nil {
			t.Fatal(err)
		}
		v.Top.Links = append(v.Top.Links, lc)
	}
	if err := top.Err(); err != nil {
		t.Fatal(err)
	}
	// The country breakdown, directly: the store reads the traffic
	// column of migration 00029.
	rows, err := db.QueryContext(ctx, `SELECT value, SUM(count)::bigint FROM (
			SELECT value, count FROM tenant_dims_daily WHERE tenant_id = $1 AND dimension = 'country'
		) r GROUP BY value ORDER BY 2 DESC, value COLLATE "C"`, ten)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	v.Countries = linkforge.Breakdown{Values: []linkforge.ValueCount{}}
	for rows.Next() {
		var vc linkforge.ValueCount
		if err := rows.Scan(&vc.Value, &vc.Count); err != nil {
			t.Fatal(err)
		}
		v.Countries.Values = append(v.Countries.Values, vc)
		v.Countries.Total += vc.Count
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	for _, l := range links {
		n, err := s.ClickTotal(ctx, l.ID)
		if err != nil {
			t.Fatal(err)
		}
		v.Totals = append(v.Totals, n)
		// Stats by minute, directly: the store's reads the automated
		// column of migration 00028.
		var total, minutes int64
		if err := db.QueryRowContext(ctx, `SELECT (SELECT rollup_clicks FROM links WHERE id = $1),
			(SELECT count(DISTINCT bucket) FROM click_rollup WHERE link_id = $1 AND bucket >= $2 AND bucket < $3)`,
			l.ID, time.Date(2026, 10, 5, 0, 0, 0, 0, time.UTC), time.Date(2026, 10, 6, 0, 0, 0, 0, time.UTC)).Scan(&total, &minutes); err != nil {
			t.Fatal(err)
		}
		v.Minute = append(v.Minute, total, minutes)
	}
	return v
}

// dayStats reads the tenant's all-time total and day buckets from
// tenant_hourly, as Stats by day does, directly: the store's Stats by hour
// or day reads the automated column of migration 00022, and this test runs
// at versions 20 and 21.
func dayStats(t *testing.T, db *sql.DB, ten int64) linkforge.Stats {
	t.Helper()
	st := linkforge.Stats{Buckets: []linkforge.StatsBucket{}}
	rows, err := db.QueryContext(t.Context(), `SELECT date_trunc('day', hour, 'UTC'), SUM(count)::bigint FROM tenant_hourly
		WHERE tenant_id = $1 GROUP BY 1 HAVING SUM(count) <> 0 ORDER BY 1`, ten)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var b linkforge.StatsBucket
		if err := rows.Scan(&b.Start, &b.Count); err != nil {
			t.Fatal(err)
		}
		b.Start, b.Human = b.Start.UTC(), b.Count
		st.Buckets = append(st.Buckets, b)
		st.Total += b.Count
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	st.Human = st.Total
	return st
}

func relkind(t *testing.T, db *sql.DB, table string) string {
	t.Helper()
	var k string
	if err := db.QueryRowContext(t.Context(), `SELECT relkind::text FROM pg_class WHERE oid = to_regclass($1)`, table).Scan(&k); err != nil {
		t.Fatal(err)
	}
	return k
}

func partitionNames(t *testing.T, s *postgres.DB, table string) []string {
	t.Helper()
	ps, err := s.Partitions(t.Context(), table)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for n := range ps {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// TestPartitionedRollupMigration: migration 00021 converts a database with
// rows over four months in place (rows, aggregates and answers identical),
// the flush's upsert still works on the partitioned tables, a month
// beyond the partitions lands in the DEFAULT partition and moves into its
// own when EnsurePartitions makes it, retention drops whole months and
// deletes the rows of the boundary month with every total unchanged, and
// the Down converts back with the rows and answers identical.
// oldUpsertClicksSQL is the flush's statement before migration 00028.
const oldUpsertClicksSQL = `WITH minutes AS (
		INSERT INTO click_rollup (link_id, bucket, node_id, count)
		SELECT u.link_id, u.bucket, $4, u.count
		FROM unnest($1::bigint[], $2::timestamptz[], $3::bigint[]) AS u (link_id, bucket, count)
		ON CONFLICT (link_id, bucket, node_id) DO UPDATE SET count = GREATEST(click_rollup.count, excluded.count)
		WHERE click_rollup.count < excluded.count
	)
	INSERT INTO click_dims (link_id, hour, dimension, value, node_id, count)
	SELECT d.link_id, d.hour, d.dimension, d.value, $4, d.count
	FROM unnest($5::bigint[], $6::timestamptz[], $7::text[], $8::text[], $9::bigint[]) AS d (link_id, hour, dimension, value, count)
	ON CONFLICT (link_id, hour, dimension, value, node_id) DO UPDATE SET count = GREATEST(click_dims.count, excluded.count)
	WHERE click_dims.count < excluded.count`

func TestPartitionedRollupMigration(t *testing.T) {
	ctx := t.Context()
	s := mustOpen(t)
	db := stdlib.OpenDBFromPool(s.Pool())
	defer db.Close()
	p, err := migrations.Provider(db, migrations.Postgres)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.DownTo(ctx, 20); err != nil {
		t.Fatal(err)
	}
	ten, err := s.EnsureTenant(ctx, "parts")
	if err != nil {
		t.Fatal(err)
	}
	var links []linkforge.Link
	for _, slug := range []string{"p-a", "p-b"} {
		// In SQL: the store's CreateLink writes the latest schema's
		// columns (such as 00048's notes).
		l := linkforge.Link{TenantID: ten.ID, Slug: slug}
		if err := db.QueryRowContext(ctx, `INSERT INTO links (tenant_id, slug, url, created_at, updated_at)
			VALUES ($1, $2, $3, now(), now()) RETURNING id`, ten.ID, slug, "https://example.com/"+slug).Scan(&l.ID); err != nil {
			t.Fatal(err)
		}
		links = append(links, l)
	}
	upsert := func(node string, at time.Time, n int64) {
		t.Helper()
		h := at.Truncate(time.Hour)
		var rows []linkforge.RollupRow
		var dims []linkforge.DimRow
		for i, l := range links {
			rows = append(rows, linkforge.RollupRow{LinkID: l.ID, Bucket: at, Count: n + int64(i)})
			dims = append(dims, linkforge.DimRow{LinkID: l.ID, Hour: h, Dim: linkforge.DimCountry, Value: "DE", Count: n + int64(i)})
		}
		// The flush's statement of those schemas (before 00028's
		// automated column): the store's own writes the latest schema.
		var ids, dimIDs, counts, dimCounts []int64
		var buckets, hours []time.Time
		var names, values []string
		for i := range rows {
			ids, buckets, counts = append(ids, rows[i].LinkID), append(buckets, rows[i].Bucket), append(counts, rows[i].Count)
			d := dims[i]
			dimIDs, hours, names, values, dimCounts = append(dimIDs, d.LinkID), append(hours, d.Hour), append(names, d.Dim.String()),
				append(values, d.Value), append(dimCounts, d.Count)
		}
		if _, err := s.Pool().Exec(ctx, oldUpsertClicksSQL, ids, buckets, counts, node, dimIDs, hours, names, values, dimCounts); err != nil {
			t.Fatal(err)
		}
	}
	months := []time.Time{
		time.Date(2026, 8, 15, 10, 3, 0, 0, time.UTC), time.Date(2026, 9, 20, 23, 59, 0, 0, time.UTC),
		time.Date(2026, 10, 5, 0, 0, 0, 0, time.UTC), time.Date(2026, 11, 28, 12, 30, 0, 0, time.UTC),
	}
	for i, m := range months {
		upsert("n1", m, int64(10*(i+1)))
		upsert("n2", m, int64(i+1))
	}
	before := viewRollup(t, db, s, ten.ID, links)
	if before.Rollup != [2]int64{16, 228} || before.Stats.Total != 228 {
		t.Fatalf("seeded %v rows, stats total %d", before.Rollup, before.Stats.Total)
	}

	if _, err := p.UpTo(ctx, 21); err != nil {
		t.Fatalf("migrate up to 00021: %v", err)
	}
	for _, table := range []string{"click_rollup", "click_dims"} {
		if k := relkind(t, db, table); k != "p" {
			t.Errorf("%s has relkind %q after 00021, want p (partitioned)", table, k)
		}
		names := partitionNames(t, s, table)
		for _, m := range []string{"202608", "202609", "202610", "202611"} {
			if !slices.Contains(names, table+"_"+m) {
				t.Errorf("%s partitions %v: no %s", table, names, m)
			}
		}
		var inDefault int
		if err := db.QueryRowContext(ctx, `SELECT count(*) FROM `+table+`_default`).Scan(&inDefault); err != nil || inDefault != 0 {
			t.Errorf("%s_default holds %d rows (%v), want 0", table, inDefault, err)
		}
	}
	if got := viewRollup(t, db, s, ten.ID, links); !reflect.DeepEqual(got, before) {
		t.Errorf("after 00021:\n got  %+v\n want %+v", got, before)
	}

	// The flush's upsert on an existing row (ON CONFLICT ... DO UPDATE)
	// and a row of a month beyond the partitions (the DEFAULT one).
	upsert("n1", months[3], 15) // 40 -> 15 is stale: no change
	upsert("n1", months[3], 45) // +5 per link
	far := time.Date(2027, 6, 1, 0, 0, 0, 0, time.UTC)
	upsert("n1", far, 7)
	grown := viewRollup(t, db, s, ten.ID, links)
	if grown.Stats.Total != before.Stats.Total+10+15 || grown.RollupClicks != grown.Stats.Total {
		t.Errorf("after the upserts: stats total %d, rollup_clicks %d, want %d", grown.Stats.Total, grown.RollupClicks, before.Stats.Total+25)
	}
	var inDefault int
	if err := db.QueryRowContext(ctx, `SELECT count(*) FROM click_rollup_default`).Scan(&inDefault); err != nil || inDefault != 2 {
		t.Errorf("click_rollup_default holds %d rows (%v), want the 2 of June 2027", inDefault, err)
	}
	if err := s.EnsurePartitions(ctx, time.Date(2027, 5, 31, 0, 0, 0, 0, time.UTC)); err != nil {
		t.Fatal(err)
	}
	var inJune int
	if err := db.QueryRowContext(ctx, `SELECT (SELECT count(*) FROM click_rollup_default) + (SELECT count(*) FROM click_dims_default),
		(SELECT count(*) FROM click_rollup_202706)`).Scan(&inDefault, &inJune); err != nil || inDefault != 0 || inJune != 2 {
		t.Errorf("after EnsurePartitions: %d rows in the defaults, %d in click_rollup_202706 (%v); want 0 and 2", inDefault, inJune, err)
	}
	if got := viewRollup(t, db, s, ten.ID, links); !reflect.DeepEqual(got, grown) {
		t.Errorf("after EnsurePartitions:\n got  %+v\n want %+v", got, grown)
	}

	pruneAll := func(kind linkforge.PruneKind, bound time.Time) int64 {
		t.Helper()
		var n int64
		q := linkforge.Prune{Kind: kind, Before: bound, Limit: 1}
		for {
			res, err := s.Prune(ctx, q)
			if err != nil {
				t.Fatal(err)
			}
			n += res.Removed
			if res.Next == 0 {
				return n
			}
			q.After = res.Next
		}
	}
	// Minutes before 15 October: August and September go as partitions,
	// the 5 October rows one by one. Hours before 1 October: two months.
	if n := pruneAll(linkforge.PruneMinutes, time.Date(2026, 10, 15, 0, 0, 0, 0, time.UTC)); n != 12 {
		t.Errorf("pruned %d minute rows, want 12", n)
	}
	if n := pruneAll(linkforge.PruneLinkHours, time.Date(2026, 10, 1, 0, 0, 0, 0, time.UTC)); n != 8 {
		t.Errorf("pruned %d link hour rows, want 8", n)
	}
	for _, table := range []string{"click_rollup", "click_dims"} {
		names := partitionNames(t, s, table)
		if slices.Contains(names, table+"_202608") || slices.Contains(names, table+"_202609") || !slices.Contains(names, table+"_202610") {
			t.Errorf("%s partitions after retention: %v, want 202608 and 202609 dropped, 202610 kept", table, names)
		}
	}
	pruned := viewRollup(t, db, s, ten.ID, links)
	if pruned.Rollup[0] != 6 || pruned.Dims[0] != 10 {
		t.Errorf("after retention: %d minute rows and %d dimension rows, want 6 and 10", pruned.Rollup[0], pruned.Dims[0])
	}
	kept := func(v rollupView) rollupView {
		v.Rollup, v.Dims, v.Minute = [2]int64{}, [2]int64{}, nil
		v.Aggregates[3] = 0 // tenant_dims_hourly: PruneTenantHours was not run
		return v
	}
	if !reflect.DeepEqual(kept(pruned), kept(grown)) {
		t.Errorf("retention changed what it must keep:\n got  %+v\n want %+v", kept(pruned), kept(grown))
	}
	if grown.Minute[1] != 1 || pruned.Minute[1] != 0 {
		t.Errorf("minute buckets of 5 October: %d before retention and %d after, want 1 and 0", grown.Minute[1], pruned.Minute[1])
	}

	if _, err := p.DownTo(ctx, 20); err != nil {
		t.Fatalf("migrate down to 00020: %v", err)
	}
	for _, table := range []string{"click_rollup", "click_dims"} {
		if k := relkind(t, db, table); k != "r" {
			t.Errorf("%s has relkind %q after Down, want r", table, k)
		}
	}
	if got := viewRollup(t, db, s, ten.ID, links); !reflect.DeepEqual(got, pruned) {
		t.Errorf("after Down:\n got  %+v\n want %+v", got, pruned)
	}
	upsert("n1", far, 9) // +2 per link, through the plain tables' triggers again
	if got := viewRollup(t, db, s, ten.ID, links); got.Stats.Total != pruned.Stats.Total+4 {
		t.Errorf("upsert after Down: stats total %d, want %d", got.Stats.Total, pruned.Stats.Total+4)
	}
	if _, err := p.Up(context.WithoutCancel(ctx)); err != nil {
		t.Fatalf("migrate up again: %v", err)
	}
}
