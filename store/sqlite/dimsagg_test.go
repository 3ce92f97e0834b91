package sqlite_test

import (
	"database/sql"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/internal/testdb"
	"github.com/linkforge/linkforge/migrations"
)

// dimsTriggers are the row triggers on click_dims that kept its aggregates
// before migration 00025 (the delete triggers stay).
var dimsTriggers = []string{
	"click_dims_agg_daily_insert", "click_dims_agg_daily_update", "click_dims_agg_insert",
	"click_dims_agg_update", "click_dims_traffic_hourly_insert", "click_dims_traffic_hourly_update",
}

// TestDimsAggregatesMigrationDownUp: at version 25 the flush keeps the
// click_dims aggregates itself, below it the row triggers do, and across a
// Down and an Up with rows written on both sides (the flush's growth, an
// older binary's raw upsert, a stale replay, a row of a deleted link)
// every aggregate row equals the sum of the raw rows of the links that
// exist: tenant_dims_hourly, tenant_dims_daily, link_dims_daily and the
// automated part of link_hourly and tenant_hourly.
func TestDimsAggregatesMigrationDownUp(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "linkforge.db")
	s := mustOpen(t, path)
	raw, p := testdb.Schema(t, migrations.SQLite, path)
	tn, err := s.EnsureTenant(ctx, "dims-agg")
	if err != nil {
		t.Fatal(err)
	}
	var ids []int64
	for i := range 3 {
		l, err := s.CreateLink(ctx, linkforge.Link{TenantID: tn.ID, Slug: fmt.Sprintf("agg-%d", i), URL: "https://example.com/"})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, l.ID)
	}
	h0 := time.Date(2026, 11, 30, 23, 0, 0, 0, time.UTC) // the hour before a midnight
	dims := func(id int64, hour time.Time, n int64) []linkforge.DimRow {
		return []linkforge.DimRow{
			{LinkID: id, Hour: hour, Dim: linkforge.DimCountry, Value: "DE", Count: n},
			{LinkID: id, Hour: hour, Dim: linkforge.DimCountry, Value: "US", Count: 2 * n},
			{LinkID: id, Hour: hour, Dim: linkforge.DimTraffic, Automated: true, Value: linkforge.TrafficAutomated, Count: n},
			{LinkID: id, Hour: hour, Dim: linkforge.DimTraffic, Value: linkforge.TrafficHuman, Count: 2 * n},
		}
	}
	flush := func(rows ...[]linkforge.DimRow) {
		t.Helper()
		if err := s.UpsertClicks(ctx, "n1", nil, slices.Concat(rows...)); err != nil {
			t.Fatal(err)
		}
	}
	triggers := func() []string {
		t.Helper()
		var names []string
		rows, err := raw.QueryContext(ctx, `SELECT name FROM sqlite_master WHERE type = 'trigger' AND tbl_name = 'click_dims'
			AND name NOT LIKE '%delete' ORDER BY name`)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		for rows.Next() {
			var n string
			if err := rows.Scan(&n); err != nil {
				t.Fatal(err)
			}
			names = append(names, n)
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		return names
	}

	// Version 25: the flush. Two hours across midnight, a key twice in one
	// flush, then growth, and a stale replay that must change nothing.
	if got := triggers(); len(got) != 0 {
		t.Fatalf("click_dims insert/update triggers at version 25: %v", got)
	}
	flush(dims(ids[0], h0, 3), dims(ids[0], h0, 4), dims(ids[1], h0.Add(time.Hour), 1))
	flush(dims(ids[0], h0, 6), dims(ids[1], h0.Add(time.Hour), 5))
	flush(dims(ids[0], h0, 2))
	checkDimsAggregates(t, raw, "after the flushes at version 25")

	// Down: the triggers are back and keep the aggregates of an older
	// binary's writes.
	if _, err := p.DownTo(ctx, 24); err != nil {
		t.Fatalf("down to 24: %v", err)
	}
	if got := triggers(); !slices.Equal(got, dimsTriggers) {
		t.Fatalf("triggers at version 24: %v, want %v", got, dimsTriggers)
	}
	checkDimsAggregates(t, raw, "after the Down")
	for _, q := range []string{
		`INSERT INTO click_dims (link_id, hour, dimension, value, node_id, count) VALUES (?1, ?2, 'country', 'DE', 'n1', 9), (?1, ?2, 'traffic', 'automated', 'n1', 9)
		 ON CONFLICT (link_id, hour, dimension, value, node_id) DO UPDATE SET count = max(count, excluded.count) WHERE excluded.count > count`,
		`INSERT INTO click_dims (link_id, hour, dimension, value, node_id, count) VALUES (?3, ?2, 'country', 'FR', 'n2', 4)`,
	} {
		if _, err := raw.ExecContext(ctx, q, ids[0], h0.Unix(), ids[2]); err != nil {
			t.Fatalf("an older binary's write: %v", err)
		}
	}
	checkDimsAggregates(t, raw, "after an older binary's writes at version 24")

	// Up again: the flush takes over from the triggers' sums.
	if _, err := p.Up(ctx); err != nil {
		t.Fatalf("up: %v", err)
	}
	if got := triggers(); len(got) != 0 {
		t.Fatalf("click_dims insert/update triggers after the Up: %v", got)
	}
	flush(dims(ids[0], h0, 12), dims(ids[2], h0.Add(time.Hour), 7))
	if _, err := s.DeleteLink(ctx, tn.ID, linkforge.PublicDomainID, "agg-1"); err != nil {
		t.Fatal(err)
	}
	// A late flush of the deleted link's rows: raw rows, no aggregate.
	flush(dims(ids[1], h0.Add(time.Hour), 8))
	checkDimsAggregates(t, raw, "after the Up, a delete and a late flush")
}

// checkDimsAggregates compares every click_dims aggregate with the sums of
// the raw rows of the links that exist (rows summing to 0 left out), by
// traffic too once rows have it (migration 00029): a value, as source's
// "link", may then have a row under each.
func checkDimsAggregates(t *testing.T, db *sql.DB, step string) {
	t.Helper()
	a, ca, by := "", "", "1, 2, 3, 4"
	var keyed int
	if err := db.QueryRowContext(t.Context(), `SELECT count(*) FROM pragma_table_info('click_dims') WHERE name = 'automated'`).Scan(&keyed); err != nil {
		t.Fatal(err)
	}
	if keyed > 0 {
		a, ca, by = ", automated", ", c.automated", "1, 2, 3, 4, 5"
	}
	for _, c := range []struct{ name, got, want string }{
		{"tenant_dims_hourly",
			`SELECT tenant_id, dimension, hour` + a + `, value, count FROM tenant_dims_hourly WHERE count <> 0`,
			`SELECT l.tenant_id, c.dimension, c.hour` + ca + `, c.value, SUM(c.count) FROM click_dims c JOIN links l ON l.id = c.link_id
			 GROUP BY ` + by + ` HAVING SUM(c.count) <> 0`},
		{"tenant_dims_daily",
			`SELECT tenant_id, dimension, day` + a + `, value, count FROM tenant_dims_daily WHERE count <> 0`,
			`SELECT l.tenant_id, c.dimension, c.hour / 86400 * 86400` + ca + `, c.value, SUM(c.count) FROM click_dims c JOIN links l ON l.id = c.link_id
			 GROUP BY ` + by + ` HAVING SUM(c.count) <> 0`},
		{"link_dims_daily",
			`SELECT link_id, dimension, day` + a + `, value, count FROM link_dims_daily WHERE count <> 0`,
			`SELECT c.link_id, c.dimension, c.hour / 86400 * 86400` + ca + `, c.value, SUM(c.count) FROM click_dims c JOIN links l ON l.id = c.link_id
			 GROUP BY ` + by + ` HAVING SUM(c.count) <> 0`},
		{"link_hourly.automated",
			`SELECT tenant_id, hour, link_id, automated FROM link_hourly WHERE automated <> 0`,
			`SELECT l.tenant_id, c.hour, c.link_id, SUM(c.count) FROM click_dims c JOIN links l ON l.id = c.link_id
			 WHERE c.dimension = 'traffic' AND c.value = 'automated' GROUP BY 1, 2, 3 HAVING SUM(c.count) <> 0`},
		{"tenant_hourly.automated",
			`SELECT tenant_id, hour, automated FROM tenant_hourly WHERE automated <> 0`,
			`SELECT l.tenant_id, c.hour, SUM(c.count) FROM click_dims c JOIN links l ON l.id = c.link_id
			 WHERE c.dimension = 'traffic' AND c.value = 'automated' GROUP BY 1, 2 HAVING SUM(c.count) <> 0`},
	} {
		got, want := dumpRows(t, db, c.got), dumpRows(t, db, c.want)
		if got != want {
			t.Errorf("%s: %s:\n%s\nthe raw rows sum to:\n%s", step, c.name, got, want)
		}
		if want == "" {
			t.Errorf("%s: %s: no rows to compare", step, c.name)
		}
	}
}

// dumpRows returns the rows of q, one line each, sorted.
func dumpRows(t *testing.T, db *sql.DB, q string) string {
	t.Helper()
	var lines []string
	for _, r := range testdb.Rows(t, db, q) {
		lines = append(lines, fmt.Sprint(r...))
	}
	slices.Sort(lines)
	return strings.Join(lines, "\n")
}
