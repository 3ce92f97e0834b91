package storetest

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/linkforge/linkforge"
)

// SQLReader is implemented by a backend test's store wrapper that can run
// a read-only query on its database. AggregatesAreSums uses it to compare
// every aggregate table with a GROUP BY of its raw rows; stores without it
// skip that case.
type SQLReader interface {
	// SQLDialect is "sqlite" or "postgres".
	SQLDialect() string
	// QueryKeyed runs query, whose rows are (key text, at bigint, n
	// bigint), and returns them by key.
	QueryKeyed(t *testing.T, query string) map[string]AggRow
}

// AggRow is one aggregate value: At is the start of its hour or day in
// unix seconds (0: none, a link's total), N the value.
type AggRow struct{ At, N int64 }

// The invariant, once: each aggregate row is the sum of its raw rows (of
// the links that exist). Each pair of queries names the stored aggregate
// and its raw sum under one key; {hour:c}, {day:c} and {unix:c} are the
// start of c's UTC hour, of its UTC day, and c itself in unix seconds;
// {auto:c} is c as '0' or '1'.
var aggregateSums = []struct{ table, stored, raw string }{
	{"tenant_hourly.count",
		`SELECT 't|' || CAST(tenant_id AS TEXT) || '|' || CAST({unix:hour} AS TEXT), {unix:hour}, count FROM tenant_hourly`,
		`SELECT 't|' || CAST(l.tenant_id AS TEXT) || '|' || CAST({hour:r.bucket} AS TEXT), {hour:r.bucket}, SUM(r.count)
		FROM click_rollup r JOIN links l ON l.id = r.link_id GROUP BY l.tenant_id, {hour:r.bucket}`},
	{"tenant_hourly.automated",
		`SELECT 't|' || CAST(tenant_id AS TEXT) || '|' || CAST({unix:hour} AS TEXT), {unix:hour}, automated FROM tenant_hourly`,
		`SELECT 't|' || CAST(l.tenant_id AS TEXT) || '|' || CAST({unix:c.hour} AS TEXT), {unix:c.hour}, SUM(c.count)
		FROM click_dims c JOIN links l ON l.id = c.link_id WHERE c.dimension = 'traffic' AND c.value = 'automated'
		GROUP BY l.tenant_id, c.hour`},
	{"link_hourly.count",
		`SELECT CAST(tenant_id AS TEXT) || '|' || CAST(link_id AS TEXT) || '|' || CAST({unix:hour} AS TEXT), {unix:hour}, count FROM link_hourly`,
		`SELECT CAST(l.tenant_id AS TEXT) || '|' || CAST(l.id AS TEXT) || '|' || CAST({hour:r.bucket} AS TEXT), {hour:r.bucket}, SUM(r.count)
		FROM click_rollup r JOIN links l ON l.id = r.link_id GROUP BY l.tenant_id, l.id, {hour:r.bucket}`},
	{"link_hourly.automated",
		`SELECT CAST(tenant_id AS TEXT) || '|' || CAST(link_id AS TEXT) || '|' || CAST({unix:hour} AS TEXT), {unix:hour}, automated FROM link_hourly`,
		`SELECT CAST(l.tenant_id AS TEXT) || '|' || CAST(l.id AS TEXT) || '|' || CAST({unix:c.hour} AS TEXT), {unix:c.hour}, SUM(c.count)
		FROM click_dims c JOIN links l ON l.id = c.link_id WHERE c.dimension = 'traffic' AND c.value = 'automated'
		GROUP BY l.tenant_id, l.id, c.hour`},
	{"link_daily",
		`SELECT CAST(tenant_id AS TEXT) || '|' || CAST(link_id AS TEXT) || '|' || CAST({unix:day} AS TEXT), {unix:day}, count FROM link_daily`,
		`SELECT CAST(l.tenant_id AS TEXT) || '|' || CAST(l.id AS TEXT) || '|' || CAST({day:r.bucket} AS TEXT), {day:r.bucket}, SUM(r.count)
		FROM click_rollup r JOIN links l ON l.id = r.link_id GROUP BY l.tenant_id, l.id, {day:r.bucket}`},
	// A link's total also holds the minutes retention folded into
	// click_rollup_pruned.
	{"links.rollup_clicks",
		`SELECT CAST(id AS TEXT), 0, rollup_clicks FROM links`,
		`SELECT CAST(l.id AS TEXT), 0, COALESCE((SELECT SUM(count) FROM click_rollup r WHERE r.link_id = l.id), 0)
			+ COALESCE((SELECT SUM(count) FROM click_rollup_pruned p WHERE p.link_id = l.id), 0) FROM links l`},
	{"tenant_dims_hourly",
		`SELECT CAST(tenant_id AS TEXT) || '|' || dimension || '|' || CAST({unix:hour} AS TEXT) || '|' || {auto:automated} || '|' || value,
			{unix:hour}, count FROM tenant_dims_hourly`,
		`SELECT CAST(l.tenant_id AS TEXT) || '|' || c.dimension || '|' || CAST({unix:c.hour} AS TEXT) || '|' || {auto:c.automated} || '|' || c.value,
			{unix:c.hour}, SUM(c.count)
		FROM click_dims c JOIN links l ON l.id = c.link_id GROUP BY l.tenant_id, c.dimension, c.hour, c.automated, c.value`},
	{"tenant_dims_daily",
		`SELECT CAST(tenant_id AS TEXT) || '|' || dimension || '|' || CAST({unix:day} AS TEXT) || '|' || {auto:automated} || '|' || value,
			{unix:day}, count FROM tenant_dims_daily`,
		`SELECT CAST(l.tenant_id AS TEXT) || '|' || c.dimension || '|' || CAST({day:c.hour} AS TEXT) || '|' || {auto:c.automated} || '|' || c.value,
			{day:c.hour}, SUM(c.count)
		FROM click_dims c JOIN links l ON l.id = c.link_id GROUP BY l.tenant_id, c.dimension, {day:c.hour}, c.automated, c.value`},
	{"link_dims_daily",
		`SELECT CAST(link_id AS TEXT) || '|' || dimension || '|' || CAST({unix:day} AS TEXT) || '|' || {auto:automated} || '|' || value,
			{unix:day}, count FROM link_dims_daily`,
		`SELECT CAST(l.id AS TEXT) || '|' || c.dimension || '|' || CAST({day:c.hour} AS TEXT) || '|' || {auto:c.automated} || '|' || c.value,
			{day:c.hour}, SUM(c.count)
		FROM click_dims c JOIN links l ON l.id = c.link_id GROUP BY l.id, c.dimension, {day:c.hour}, c.automated, c.value`},
}

// dialectSQL expands the macros of an aggregateSums query.
func dialectSQL(dialect, q string) string {
	macro := func(name, col string) string { return "{" + name + ":" + col + "}" }
	var pairs []string
	for _, col := range []string{"hour", "day", "bucket", "r.bucket", "c.hour", "automated", "c.automated"} {
		if dialect == "postgres" {
			pairs = append(pairs,
				macro("unix", col), "CAST(extract(epoch FROM "+col+") AS BIGINT)",
				macro("hour", col), "CAST(extract(epoch FROM date_trunc('hour', "+col+", 'UTC')) AS BIGINT)",
				macro("day", col), "CAST(extract(epoch FROM date_trunc('day', "+col+", 'UTC')) AS BIGINT)",
				macro("auto", col), "CASE WHEN "+col+" THEN '1' ELSE '0' END")
		} else {
			pairs = append(pairs,
				macro("unix", col), col,
				macro("hour", col), "("+col+" / 3600 * 3600)",
				macro("day", col), "("+col+" / 86400 * 86400)",
				macro("auto", col), "CASE WHEN "+col+" THEN '1' ELSE '0' END")
		}
	}
	return strings.NewReplacer(pairs...).Replace(q)
}

// aggregateState is every aggregate table's rows and their raw sums, by
// table and key; rows of value 0 are left out (a link's delete leaves its
// tenant's rows at 0).
type aggregateState struct{ stored, raw map[string]map[string]AggRow }

func readAggregates(t *testing.T, r SQLReader) aggregateState {
	t.Helper()
	st := aggregateState{stored: map[string]map[string]AggRow{}, raw: map[string]map[string]AggRow{}}
	nonzero := func(m map[string]AggRow) map[string]AggRow {
		maps.DeleteFunc(m, func(_ string, v AggRow) bool { return v.N == 0 })
		return m
	}
	for _, a := range aggregateSums {
		st.stored[a.table] = nonzero(r.QueryKeyed(t, dialectSQL(r.SQLDialect(), a.stored)))
		st.raw[a.table] = nonzero(r.QueryKeyed(t, dialectSQL(r.SQLDialect(), a.raw)))
	}
	return st
}

// checkSums reports every aggregate row at or after from (unix seconds)
// (or of no time: a link's total) that is not the sum of its raw rows,
// and every raw sum without its row.
func checkSums(t *testing.T, when string, st aggregateState, from int64) {
	t.Helper()
	for _, a := range aggregateSums {
		stored, raw := st.stored[a.table], st.raw[a.table]
		rows := 0
		for _, k := range slices.Sorted(maps.Keys(stored)) {
			if v := stored[k]; v.At >= from || v.At == 0 {
				rows++
				if v.N != raw[k].N {
					t.Errorf("%s: %s %s = %d, its raw rows sum to %d", when, a.table, k, v.N, raw[k].N)
				}
			}
		}
		for _, k := range slices.Sorted(maps.Keys(raw)) {
			if v := raw[k]; v.At >= from || v.At == 0 {
				if _, ok := stored[k]; !ok {
					t.Errorf("%s: %s %s missing, its raw rows sum to %d", when, a.table, k, v.N)
				}
			}
		}
		if rows == 0 {
			t.Errorf("%s: %s has no row to check", when, a.table)
		}
	}
}

// testAggregatesAreSums holds every aggregate table to the invariant
// (store/internal/aggregates): after flushes of several nodes, of both
// traffics, that overwrite a bucket (a node's count is absolute: a larger
// one replaces, a smaller one is stale), after a link's delete and a late
// flush of its rows, each aggregate row is the GROUP BY of its raw rows;
// after retention removes the raw rows before a bound, the aggregates are
// unchanged, and those after it still sum their rows.
func testAggregatesAreSums(t *testing.T, s linkforge.Store) {
	r, ok := s.(SQLReader)
	if !ok {
		t.Skip("this store's test wrapper reads no SQL")
	}
	ctx := t.Context()
	tenants := []linkforge.Tenant{mustTenant(t, s, "sums-a"), mustTenant(t, s, "sums-b")}
	var links []linkforge.Link
	for i := range 6 {
		links = append(links, mustCreateLink(t, s, newLink(tenants[i%2].ID, fmt.Sprintf("sums-%d", i))))
	}
	// Three UTC days: 22:00 on the first to 02:00 on the third.
	start := time.Date(2026, 11, 28, 22, 0, 0, 0, time.UTC)
	flush := func(node string, scale int64) {
		t.Helper()
		var rows []linkforge.RollupRow
		var dims []linkforge.DimRow
		for li, l := range links {
			for h := range 28 {
				if (h+li)%3 == 1 {
					continue
				}
				hour := start.Add(time.Duration(h) * time.Hour)
				var sum, auto int64
				for m := range 3 {
					n := scale * int64(1+(li+h+m)%4)
					a := n / 3
					rows = append(rows, linkforge.RollupRow{LinkID: l.ID, Bucket: hour.Add(time.Duration(7*m) * time.Minute), Count: n, Automated: a})
					sum, auto = sum+n, auto+a
				}
				dims = append(dims,
					linkforge.DimRow{LinkID: l.ID, Hour: hour, Dim: linkforge.DimTraffic, Value: linkforge.TrafficHuman, Count: sum - auto},
					linkforge.DimRow{LinkID: l.ID, Hour: hour, Dim: linkforge.DimTraffic, Automated: true, Value: linkforge.TrafficAutomated, Count: auto},
					linkforge.DimRow{LinkID: l.ID, Hour: hour, Dim: linkforge.DimCountry, Value: "DE", Count: sum - auto - (sum-auto)/2},
					linkforge.DimRow{LinkID: l.ID, Hour: hour, Dim: linkforge.DimCountry, Value: []string{"FR", "US"}[h%2], Count: (sum - auto) / 2},
					linkforge.DimRow{LinkID: l.ID, Hour: hour, Dim: linkforge.DimCountry, Automated: true, Value: "US", Count: auto})
			}
		}
		if err := s.UpsertClicks(ctx, node, rows, dims); err != nil {
			t.Fatalf("flush of %s: %v", node, err)
		}
	}
	flush("n1", 1)
	flush("n2", 2)
	flush("n1", 3) // the same buckets, larger: each replaces the node's count
	flush("n1", 2) // smaller: stale, changes nothing
	flush("n3", 1)
	checkSums(t, "after the flushes", readAggregates(t, r), 0)

	// A link's delete takes its rows out; a node's late flush of them
	// must not bring them back.
	gone := links[2]
	if _, err := s.DeleteLink(ctx, gone.TenantID, gone.DomainID, gone.Slug); err != nil {
		t.Fatal(err)
	}
	flush("n2", 4)
	// (A row of the gone link is a stored row without raw rows.)
	st := readAggregates(t, r)
	checkSums(t, "after a link's delete", st, 0)
	// Retention removes the raw rows before the bound and lowers nothing.
	bound := time.Date(2026, 11, 29, 0, 0, 0, 0, time.UTC)
	runPrune(t, s, linkforge.PruneMinutes, bound, 2)
	runPrune(t, s, linkforge.PruneLinkHours, bound, 2)
	after := readAggregates(t, r)
	for _, a := range aggregateSums {
		for k, v := range st.stored[a.table] {
			if got := after.stored[a.table][k]; got != v {
				t.Errorf("retention changed %s %s: %d, was %d", a.table, k, got.N, v.N)
			}
		}
	}
	checkSums(t, "after retention", after, bound.Unix())
	// And the rows written after it still sum.
	flush("n3", 5)
	checkSums(t, "after retention and a flush", readAggregates(t, r), bound.Unix())
}

// CheckAggregateSums fails t for every aggregate row of r's database that
// is not the sum of its raw rows (AggregatesAreSums' check, for the
// migration tests).
func CheckAggregateSums(t *testing.T, r SQLReader, when string) {
	t.Helper()
	checkSums(t, when, readAggregates(t, r), 0)
}

// AggregateUpkeepMigration runs migration 00044 down and up with data:
// after down (which checks that the triggers are back), sqlWrite writes
// raw rows of link and deletes link gone with plain SQL, as a writer
// before 00044 could, and the triggers must keep the aggregates; after up
// the store's flushes and deletes keep them.
func AggregateUpkeepMigration(t *testing.T, s linkforge.Store, down, up func(ctx context.Context) error,
	sqlWrite func(ctx context.Context, link, gone int64) error) {
	t.Helper()
	ctx := t.Context()
	r, ok := s.(SQLReader)
	if !ok {
		t.Fatal("the store's test wrapper reads no SQL")
	}
	ten := mustTenant(t, s, "upkeep")
	var links []linkforge.Link
	for i := range 4 {
		links = append(links, mustCreateLink(t, s, newLink(ten.ID, fmt.Sprintf("upkeep-%d", i))))
	}
	hour := time.Date(2026, 11, 30, 23, 0, 0, 0, time.UTC)
	flush := func(node string, n int64) {
		t.Helper()
		var rows []linkforge.RollupRow
		var dims []linkforge.DimRow
		for _, l := range links {
			for h := range 2 {
				at := hour.Add(time.Duration(h) * time.Hour)
				rows = append(rows, linkforge.RollupRow{LinkID: l.ID, Bucket: at.Add(3 * time.Minute), Count: n, Automated: 1})
				dims = append(dims,
					linkforge.DimRow{LinkID: l.ID, Hour: at, Dim: linkforge.DimTraffic, Value: linkforge.TrafficHuman, Count: n - 1},
					linkforge.DimRow{LinkID: l.ID, Hour: at, Dim: linkforge.DimTraffic, Automated: true, Value: linkforge.TrafficAutomated, Count: 1},
					linkforge.DimRow{LinkID: l.ID, Hour: at, Dim: linkforge.DimOS, Value: "iOS", Count: n - 1},
					linkforge.DimRow{LinkID: l.ID, Hour: at, Dim: linkforge.DimOS, Automated: true, Value: "Linux", Count: 1})
			}
		}
		if err := s.UpsertClicks(ctx, node, rows, dims); err != nil {
			t.Fatal(err)
		}
	}
	flush("n1", 3)
	flush("n2", 5)
	CheckAggregateSums(t, r, "before Down")
	if err := down(ctx); err != nil {
		t.Fatalf("Down: %v", err)
	}
	if err := sqlWrite(ctx, links[0].ID, links[1].ID); err != nil {
		t.Fatalf("raw rows by SQL: %v", err)
	}
	CheckAggregateSums(t, r, "after Down and raw rows by SQL")
	if err := up(ctx); err != nil {
		t.Fatalf("Up: %v", err)
	}
	flush("n1", 7)
	if _, err := s.DeleteLink(ctx, ten.ID, links[2].DomainID, links[2].Slug); err != nil {
		t.Fatal(err)
	}
	flush("n2", 9)
	CheckAggregateSums(t, r, "after Up")
}
