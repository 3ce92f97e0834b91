package postgres_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/internal/pgtest"
	"github.com/linkforge/linkforge/store/postgres"
)

// A flush of many minute rows for the same links updates each link's
// total once, in one statement (store/internal/aggregates): a node's
// backlog after a database outage, or a bulk load, writes hundreds of
// minutes of its hot links in one flush, and an update per row made each
// a new version of the link's row, in every index of links. The totals
// stay exact through inserts and grown counts.
func TestLinkTotalsOneUpdatePerLinkPerStatement(t *testing.T) {
	url := pgtest.New(t)
	mustOpenURL(t, url) // migrate
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		t.Fatal(err)
	}
	counter := &queryCounter{substr: "UPDATE links l SET rollup_clicks"}
	cfg.ConnConfig.Tracer = counter
	db, err := postgres.OpenConfig(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := t.Context()
	ten, err := db.EnsureTenant(ctx, "totals")
	if err != nil {
		t.Fatal(err)
	}
	var ids []int64
	for i := range 3 {
		l, err := db.CreateLink(ctx, linkforge.Link{TenantID: ten.ID, Slug: fmt.Sprintf("t%d", i), URL: "https://example.com/"})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, l.ID)
	}
	start := time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)
	// 3 links × 200 minutes, in one flush.
	var rows []linkforge.RollupRow
	for _, id := range ids {
		for m := range 200 {
			rows = append(rows, linkforge.RollupRow{LinkID: id, Bucket: start.Add(time.Duration(m) * time.Minute), Count: int64(1 + m%3)})
		}
	}
	if err := db.UpsertRollup(ctx, "node-a", rows); err != nil {
		t.Fatal(err)
	}
	if got := counter.n.Load(); got != 1 {
		t.Errorf("statements updating links' totals for one flush of 600 minute rows: %d, want 1", got)
	}
	// A flush's absolute buckets grown: the totals move by the difference.
	var grown []linkforge.RollupRow
	for m := range 10 {
		grown = append(grown, linkforge.RollupRow{LinkID: ids[0], Bucket: start.Add(time.Duration(m) * time.Minute), Count: int64(1+m%3) + 2})
	}
	if err := db.UpsertRollup(ctx, "node-a", grown); err != nil {
		t.Fatal(err)
	}
	// Sum of 1 + m%3 over m in 0..199: 67×1 + 67×2 + 66×3 = 399.
	for i, id := range ids {
		want := int64(399)
		if i == 0 {
			want += 2 * 10
		}
		var got, sum int64
		if err := db.Pool().QueryRow(ctx, `SELECT rollup_clicks, (SELECT SUM(count) FROM click_rollup WHERE link_id = $1) FROM links WHERE id = $1`, id).Scan(&got, &sum); err != nil {
			t.Fatal(err)
		}
		if got != want || sum != want {
			t.Errorf("link %d: rollup_clicks %d, rows sum %d, want %d", i, got, sum, want)
		}
	}
}
