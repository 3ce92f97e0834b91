package postgres_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/linkforge/linkforge"
)

// A statement of many minute rows for the same links updates each link's
// row once (00024): a node's backlog after a database outage, or a bulk
// load, writes hundreds of minutes of its hot links in one statement, and
// a row trigger made each a new version of the link's row, in every index
// of links. The totals stay exact through inserts and updates of counts.
func TestLinkTotalsOneUpdatePerLinkPerStatement(t *testing.T) {
	db := mustOpen(t)
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
	tx, err := db.Pool().Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx) // committed below; a failed test's is dropped
	// 3 links × 200 minutes, in one statement, as a flush writes them.
	if _, err := tx.Exec(ctx, `
		INSERT INTO click_rollup (link_id, bucket, node_id, count)
		SELECT l, $2::timestamptz + m * interval '1 minute', 'node-a', 1 + m % 3
		FROM unnest($1::bigint[]) AS l, generate_series(0, 199) AS m`, ids, start); err != nil {
		t.Fatal(err)
	}
	var updates int64
	if err := tx.QueryRow(ctx, `SELECT n_tup_upd FROM pg_stat_xact_user_tables WHERE relname = 'links'`).Scan(&updates); err != nil {
		t.Fatal(err)
	}
	if updates != int64(len(ids)) {
		t.Errorf("links rows updated by one statement of 600 minute rows: %d, want one per link (%d)", updates, len(ids))
	}
	// An update of some counts (a flush's absolute buckets grown) moves the
	// totals by the difference.
	if _, err := tx.Exec(ctx, `UPDATE click_rollup SET count = count + 2 WHERE link_id = $1 AND bucket < $2`,
		ids[0], start.Add(10*time.Minute)); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(ctx); err != nil {
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
