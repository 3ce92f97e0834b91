package postgres_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/internal/pgtest"
	"github.com/linkforge/linkforge/store/postgres"
)

// rollupReads counts the statements that read click_rollup, the reads of
// a flush's click events.
type rollupReads struct {
	mu sync.Mutex
	n  int
}

func (r *rollupReads) TraceQueryStart(ctx context.Context, _ *pgx.Conn, d pgx.TraceQueryStartData) context.Context {
	q := strings.TrimSpace(d.SQL)
	if strings.Contains(q, "FROM click_rollup") && !strings.HasPrefix(q, "INSERT") {
		r.mu.Lock()
		r.n++
		r.mu.Unlock()
	}
	return ctx
}

func (r *rollupReads) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

func (r *rollupReads) reset() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := r.n
	r.n = 0
	return n
}

// TestClickEventsOneRead: a flush of several subscribed links reads their
// click events in one statement, not two per link inside the flush's
// transaction.
func TestClickEventsOneRead(t *testing.T) {
	ctx := t.Context()
	cfg, err := pgxpool.ParseConfig(pgtest.New(t))
	if err != nil {
		t.Fatal(err)
	}
	reads := &rollupReads{}
	cfg.ConnConfig.Tracer = reads
	db, err := postgres.OpenConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	ten, err := db.EnsureTenant(ctx, "a")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.CreateWebhook(ctx, linkforge.Webhook{ID: "wh_c", TenantID: ten.ID, URL: "https://example.com/hook",
		Events: []string{linkforge.EventLinkClicks}, Secret: "s"}); err != nil {
		t.Fatal(err)
	}
	bucket := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	var rows []linkforge.RollupRow
	for i := range 5 {
		l, err := db.CreateLink(ctx, linkforge.Link{TenantID: ten.ID, Slug: fmt.Sprintf("l%d", i), URL: "https://example.com/"})
		if err != nil {
			t.Fatal(err)
		}
		rows = append(rows, linkforge.RollupRow{LinkID: l.ID, Bucket: bucket, Count: 1},
			linkforge.RollupRow{LinkID: l.ID, Bucket: bucket.Add(time.Minute), Count: 2})
	}
	reads.reset()
	if err := db.UpsertRollup(ctx, "n1", rows); err != nil {
		t.Fatal(err)
	}
	if n := reads.reset(); n != 1 {
		t.Errorf("a flush of 5 subscribed links read click_rollup in %d statements, want 1", n)
	}
	ds, err := db.ListDeliveries(ctx, ten.ID, "wh_c", "", 100)
	if err != nil || len(ds) != 5 {
		t.Fatalf("link.clicks deliveries: %d (%v), want 5", len(ds), err)
	}
}
