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
)

// TestRetentionMigrationDown: migration 00020 goes down (the delete
// triggers that lower the aggregates are back, its tables gone) and up
// again (they are gone, the tables back).
func TestRetentionMigrationDown(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "linkforge.db")
	mustOpen(t, path)
	raw, p := testdb.Schema(t, migrations.SQLite, path)
	count := func() (triggers, tables int) {
		t.Helper()
		if err := raw.QueryRowContext(ctx, `SELECT
			(SELECT count(*) FROM sqlite_master WHERE type = 'trigger' AND name IN ('click_rollup_agg_delete',
				'click_rollup_links_delete', 'click_dims_agg_delete', 'click_dims_agg_daily_delete', 'links_agg_daily_delete')),
			(SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name IN ('click_rollup_pruned', 'scheduled_jobs'))`).
			Scan(&triggers, &tables); err != nil {
			t.Fatal(err)
		}
		return triggers, tables
	}
	if tr, tb := count(); tr != 0 || tb != 2 {
		t.Fatalf("migrated: %d lowering triggers and %d tables, want 0 and 2", tr, tb)
	}
	if _, err := p.DownTo(ctx, 18); err != nil {
		t.Fatalf("migrate down to 00018: %v", err)
	}
	if tr, tb := count(); tr != 5 || tb != 0 {
		t.Errorf("after Down: %d lowering triggers and %d tables, want 5 and 0", tr, tb)
	}
	if _, err := p.Up(ctx); err != nil {
		t.Fatalf("migrate up again: %v", err)
	}
	if tr, tb := count(); tr != 0 || tb != 2 {
		t.Errorf("after Up: %d lowering triggers and %d tables, want 0 and 2", tr, tb)
	}
}

// TestInspectCountsPrunedClicks: a backup's summary counts the clicks of
// the minute rows retention removed.
func TestInspectCountsPrunedClicks(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "linkforge.db")
	db, err := sqlite.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	ten, err := db.EnsureTenant(ctx, "acme")
	if err != nil {
		t.Fatal(err)
	}
	l, err := db.CreateLink(ctx, linkforge.Link{TenantID: ten.ID, Slug: "s", URL: "https://example.com/"})
	if err != nil {
		t.Fatal(err)
	}
	old, recent := time.Date(2026, 1, 5, 10, 0, 0, 0, time.UTC), time.Date(2026, 11, 5, 10, 0, 0, 0, time.UTC)
	if err := db.UpsertRollup(ctx, "n1", []linkforge.RollupRow{{LinkID: l.ID, Bucket: old, Count: 7}, {LinkID: l.ID, Bucket: recent, Count: 5}}); err != nil {
		t.Fatal(err)
	}
	if res, err := db.Prune(ctx, linkforge.Prune{Kind: linkforge.PruneMinutes, Before: recent, Limit: 10}); err != nil || res.Removed != 1 {
		t.Fatalf("Prune: %+v, %v; want one row removed", res, err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	sum, err := sqlite.Inspect(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Clicks != 12 {
		t.Errorf("summary counts %d clicks, want 12", sum.Clicks)
	}
}

// BenchmarkPruneWalk times one retention walk of the minute and hour rows
// over 20,000 links whose clicks are all recent, the common case of a
// daily run (most links have nothing past the bound) and of the first run
// after a start: one op is every batch of both kinds, 500 links a batch as
// retention.DefaultBatch. The walk holds the write lock batch by batch, so
// its length is time the flush waits behind it.
//
//	go test -run '^$' -bench PruneWalk -benchtime 5x ./store/sqlite/
func BenchmarkPruneWalk(b *testing.B) {
	const links = 20000
	ctx := b.Context()
	db := mustOpen(b, filepath.Join(b.TempDir(), "linkforge.db"))
	tenant, err := db.EnsureTenant(ctx, "prune")
	if err != nil {
		b.Fatal(err)
	}
	batch := make([]linkforge.Link, links)
	for i := range batch {
		batch[i] = linkforge.Link{TenantID: tenant.ID, Slug: fmt.Sprintf("prune-%d", i), URL: "https://example.com/p"}
	}
	if err := db.ImportLinks(ctx, batch); err != nil {
		b.Fatal(err)
	}
	now := time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC)
	var rows []linkforge.RollupRow
	var dims []linkforge.DimRow
	for id := int64(1); id <= links; id++ {
		rows = append(rows, linkforge.RollupRow{LinkID: id, Bucket: now.Add(-time.Hour), Count: 1})
		dims = append(dims, linkforge.DimRow{LinkID: id, Hour: now.Add(-time.Hour), Dim: linkforge.DimCountry, Value: "DE", Count: 1})
	}
	if err := db.UpsertClicks(ctx, "n1", rows, dims); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		for _, k := range []linkforge.PruneKind{linkforge.PruneMinutes, linkforge.PruneLinkHours} {
			p := linkforge.Prune{Kind: k, Before: now.Add(-35 * 24 * time.Hour), Limit: 500}
			for {
				res, err := db.Prune(ctx, p)
				if err != nil {
					b.Fatal(err)
				}
				if res.Removed != 0 {
					b.Fatalf("%s removed %d rows, want 0", k, res.Removed)
				}
				if res.Next == 0 {
					break
				}
				p.After = res.Next
			}
		}
	}
}

// TestPruneWalkPassesLinksWithNothingOld: the walk skips the deletes of a
// link with no row past the bound but not the link: a full batch whose
// links have nothing to remove still names where the next one starts, so
// a link with old rows after it is reached. Batches of one over three
// links, the middle one with old rows: three batches, its rows removed,
// the others' kept.
func TestPruneWalkPassesLinksWithNothingOld(t *testing.T) {
	ctx := t.Context()
	db := mustOpen(t, filepath.Join(t.TempDir(), "linkforge.db"))
	tenant, err := db.EnsureTenant(ctx, "walk")
	if err != nil {
		t.Fatal(err)
	}
	var ids []int64
	for i := range 3 {
		l, err := db.CreateLink(ctx, linkforge.Link{TenantID: tenant.ID, Slug: fmt.Sprintf("walk-%d", i), URL: "https://example.com/w"})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, l.ID)
	}
	now := time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC)
	bound := now.Add(-24 * time.Hour)
	old, recent := bound.Add(-2*time.Hour), now.Add(-time.Hour)
	rows := []linkforge.RollupRow{
		{LinkID: ids[0], Bucket: recent, Count: 1},
		{LinkID: ids[1], Bucket: old, Count: 2}, {LinkID: ids[1], Bucket: old.Add(time.Minute), Count: 3},
		{LinkID: ids[1], Bucket: recent, Count: 4},
		{LinkID: ids[2], Bucket: recent, Count: 5},
	}
	if err := db.UpsertClicks(ctx, "n1", rows, nil); err != nil {
		t.Fatal(err)
	}
	p := linkforge.Prune{Kind: linkforge.PruneMinutes, Before: bound, Limit: 1}
	var batches, removed int64
	for {
		res, err := db.Prune(ctx, p)
		if err != nil {
			t.Fatalf("Prune after %d: %v", p.After, err)
		}
		batches++
		removed += res.Removed
		if res.Next == 0 || batches > 10 {
			break
		}
		p.After = res.Next
	}
	// Three full batches of one, then an empty one that ends the walk.
	if batches != 4 || removed != 2 {
		t.Errorf("walk: %d batches removing %d rows, want 4 batches removing 2 (link %d's old minutes)", batches, removed, ids[1])
	}
	left, err := db.NodeRollup(ctx, "n1", time.Unix(0, 0))
	if err != nil {
		t.Fatal(err)
	}
	if len(left) != 3 {
		t.Errorf("rows left %v, want the three recent ones", left)
	}
	for _, r := range left {
		if !r.Bucket.Equal(recent) {
			t.Errorf("row left %+v, want only the recent minute", r)
		}
	}
}
