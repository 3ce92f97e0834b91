package sqlite_test

import (
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/linkforge/linkforge"

	"github.com/linkforge/linkforge/internal/testdb"
	"github.com/linkforge/linkforge/migrations"
	"github.com/linkforge/linkforge/store/sqlite"
	"github.com/linkforge/linkforge/store/storetest"
)

// TestStatsSpeedMigrationBackfills: dimension rows written before
// migration 00008 are in the per-day tenant aggregate after it. The rows
// are written through the store at the latest schema (the store's writes
// need the later migrations' tables), then the schema goes down to 00007,
// which drops the aggregate, and up again, which must backfill it.
func TestStatsSpeedMigrationBackfills(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "linkforge.db")
	db := mustOpen(t, path)
	tenant := storetest.WriteBeforeStatsSpeed(t, db)
	storetest.CheckAfterStatsSpeed(t, db, tenant)

	raw, p := testdb.Schema(t, migrations.SQLite, path)
	if _, err := p.DownTo(ctx, 7); err != nil {
		t.Fatalf("migrate down to 00007: %v", err)
	}
	var tables int
	if err := raw.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_master WHERE name = 'tenant_dims_daily'`).Scan(&tables); err != nil || tables != 0 {
		t.Fatalf("after migrating down to 00007: tenant_dims_daily tables %d, %v; want 0", tables, err)
	}
	if _, err := p.Up(ctx); err != nil {
		t.Fatalf("migrate up again: %v", err)
	}
	storetest.CheckAfterStatsSpeed(t, db, tenant)
}

// BenchmarkFlush measures one flush's write with its aggregates
// (storetest.BenchmarkFlush):
//
//	go test -run '^$' -bench Flush -benchtime 200x ./store/sqlite/
func BenchmarkFlush(b *testing.B) {
	storetest.BenchmarkFlush(b, testdb.SQLite(b))
}

// BenchmarkFlushOneOff measures one flush of 1,000 one-off links
// (storetest.BenchmarkFlushOneOff):
//
//	go test -run '^$' -bench FlushOneOff -benchtime 30x ./store/sqlite/
func BenchmarkFlushOneOff(b *testing.B) {
	storetest.BenchmarkFlushOneOff(b, testdb.SQLite(b))
}

// TestUpsertDimsInStatementsOfManyRows: a flush's dimension rows go in
// statements of up to 200 rows (writeClicks); 450 rows, two whole
// statements and a part, are all written, each with its own count, and a
// second flush with some counts lower and some higher keeps the larger of
// each, as one statement per row did.
func TestUpsertDimsInStatementsOfManyRows(t *testing.T) {
	ctx := t.Context()
	db, ids := threeLinks(t)
	hour := time.Date(2026, 12, 3, 8, 0, 0, 0, time.UTC)
	const n = 450
	flush := func(count func(i int) int64) {
		t.Helper()
		dims := make([]linkforge.DimRow, n)
		for i := range dims {
			dims[i] = linkforge.DimRow{LinkID: ids[i%3], Hour: hour, Dim: linkforge.DimReferrer,
				Value: fmt.Sprintf("site-%03d.example", i), Count: count(i)}
		}
		if err := db.UpsertClicks(ctx, "n1", nil, dims); err != nil {
			t.Fatalf("UpsertClicks of %d dimension rows: %v", n, err)
		}
	}
	flush(func(i int) int64 { return int64(i + 1) })
	// Even rows lower (stale: kept), odd rows higher (replace).
	flush(func(i int) int64 {
		if i%2 == 0 {
			return 0
		}
		return int64(i + 1001)
	})
	got, err := db.NodeDims(ctx, "n1", hour)
	if err != nil {
		t.Fatalf("NodeDims: %v", err)
	}
	want := map[string]int64{}
	for i := range n {
		c := int64(i + 1)
		if i%2 == 1 {
			c = int64(i + 1001)
		}
		want[fmt.Sprintf("%d %s", ids[i%3], fmt.Sprintf("site-%03d.example", i))] = c
	}
	if len(got) != n {
		t.Fatalf("NodeDims: %d rows, want %d", len(got), n)
	}
	for _, d := range got {
		k := fmt.Sprintf("%d %s", d.LinkID, d.Value)
		if d.Dim != linkforge.DimReferrer || want[k] != d.Count {
			t.Errorf("row %s %s = %d, want %d", k, d.Dim, d.Count, want[k])
		}
	}
}

// TestUpsertRollupInStatementsOfManyRows: a flush's minute rows go in
// statements of up to 200 rows too; 450 minutes of three links are all
// written, a second flush keeps the larger count of each, and each link's
// all-time total (links.rollup_clicks) is the sum of its minutes.
func TestUpsertRollupInStatementsOfManyRows(t *testing.T) {
	ctx := t.Context()
	db, ids := threeLinks(t)
	start := time.Date(2026, 12, 3, 8, 0, 0, 0, time.UTC)
	const n = 450
	bucket := func(i int) time.Time { return start.Add(time.Duration(i/3) * time.Minute) }
	flush := func(count func(i int) int64) {
		t.Helper()
		rows := make([]linkforge.RollupRow, n)
		for i := range rows {
			rows[i] = linkforge.RollupRow{LinkID: ids[i%3], Bucket: bucket(i), Count: count(i)}
		}
		if err := db.UpsertClicks(ctx, "n1", rows, nil); err != nil {
			t.Fatalf("UpsertClicks of %d minute rows: %v", n, err)
		}
	}
	flush(func(i int) int64 { return int64(i + 1) })
	flush(func(i int) int64 {
		if i%2 == 0 {
			return 0 // stale: kept
		}
		return int64(i + 1001)
	})
	want := map[string]int64{}
	totals := map[int64]int64{}
	for i := range n {
		c := int64(i + 1)
		if i%2 == 1 {
			c = int64(i + 1001)
		}
		want[fmt.Sprintf("%d %d", ids[i%3], bucket(i).Unix())] = c
		totals[ids[i%3]] += c
	}
	got := 0
	for _, id := range ids {
		mins, _, err := db.NodeLinkClicks(ctx, "n1", id, start, start.Add(time.Hour*3))
		if err != nil {
			t.Fatalf("NodeLinkClicks: %v", err)
		}
		for _, r := range mins {
			got++
			if k := fmt.Sprintf("%d %d", r.LinkID, r.Bucket.Unix()); want[k] != r.Count {
				t.Errorf("minute %s = %d, want %d", k, r.Count, want[k])
			}
		}
		if total, err := db.ClickTotal(ctx, id); err != nil || total != totals[id] {
			t.Errorf("link %d: total %d (%v), want %d", id, total, err, totals[id])
		}
	}
	if got != n {
		t.Errorf("%d minute rows, want %d", got, n)
	}
}

// threeLinks opens a fresh store with three links of one tenant.
func threeLinks(t *testing.T) (*sqlite.DB, []int64) {
	t.Helper()
	db := mustOpen(t, filepath.Join(t.TempDir(), "linkforge.db"))
	tn, err := db.EnsureTenant(t.Context(), "chunks")
	if err != nil {
		t.Fatal(err)
	}
	var ids []int64
	for i := range 3 {
		l, err := db.CreateLink(t.Context(), linkforge.Link{TenantID: tn.ID, Slug: fmt.Sprintf("chunk-%d", i), URL: "https://example.com/c"})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, l.ID)
	}
	return db, ids
}
