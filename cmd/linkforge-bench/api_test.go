package main

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/store/sqlite"
	"github.com/linkforge/linkforge/web"
)

// apiEnv is a real LinkForge web server on a real SQLite file, in process,
// with the bench's links imported the way the tool imports them.
type apiEnv struct {
	b     *bench
	in    *instance
	store linkforge.Store
	links []benchLink // imported
}

func newAPIEnv(t *testing.T) *apiEnv {
	t.Helper()
	ctx := context.Background()
	b := &bench{
		log:    slog.New(slog.NewTextHandler(io.Discard, nil)),
		client: noFollow(&http.Client{Timeout: 30 * time.Second}),
		runID:  "T",
	}
	in := &instance{b: b, backend: "sqlite", dataDir: t.TempDir()}
	links := b.newLinks(3)
	if err := in.importLinks(ctx, links); err != nil {
		t.Fatalf("importLinks: %v", err)
	}
	st, err := sqlite.Open(ctx, filepath.Join(in.dataDir, sqliteFile))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	tenant, err := st.TenantByName(ctx, benchTenant)
	if err != nil {
		t.Fatalf("the import did not make tenant %q: %v", benchTenant, err)
	}
	secret, hash, display := linkforge.NewToken()
	if _, err := st.CreateToken(ctx, linkforge.Token{TenantID: tenant.ID, Hash: hash, Display: display}); err != nil {
		t.Fatal(err)
	}
	srv, err := web.New(web.Config{Store: st, PublicURL: &url.URL{Scheme: "http", Host: "127.0.0.1"}})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv)
	t.Cleanup(hs.Close)
	in.base, in.token = hs.URL, secret
	return &apiEnv{b: b, in: in, store: st, links: links}
}

// mustRollup writes absolute counts for a link, as a flush does.
func (e *apiEnv) mustRollup(t *testing.T, slug string, buckets map[time.Time]int64) {
	t.Helper()
	ctx := context.Background()
	l, err := e.store.LinkBySlug(ctx, linkforge.PublicDomainID, slug)
	if err != nil {
		t.Fatal(err)
	}
	var rows []linkforge.RollupRow
	for b, n := range buckets {
		rows = append(rows, linkforge.RollupRow{LinkID: l.ID, Bucket: b, Count: n})
	}
	if err := e.store.UpsertRollup(ctx, "node-a", rows); err != nil {
		t.Fatal(err)
	}
}

func TestNewLinksAreUniquePerInstance(t *testing.T) {
	b := &bench{runID: "Ab3d"}
	first, second := b.newLinks(2), b.newLinks(2)
	seen := map[string]bool{}
	for _, l := range append(first, second...) {
		if seen[l.slug] {
			t.Errorf("slug %s twice", l.slug)
		}
		seen[l.slug] = true
		if err := linkforge.ValidateSlug(l.slug); err != nil {
			t.Errorf("slug %s: %v", l.slug, err)
		}
		if !strings.HasPrefix(l.url, "https://example.com/") {
			t.Errorf("target %s, want one off this machine that is never followed", l.url)
		}
	}
}

// TestClicksThroughAPIAndStore reads the same rollup through the API (the
// --target path) and through the store (after a graceful stop).
func TestClicksThroughAPIAndStore(t *testing.T) {
	e := newAPIEnv(t)
	ctx := context.Background()
	now := time.Now().UTC().Truncate(time.Minute)
	e.mustRollup(t, e.links[0].slug, map[time.Time]int64{now.Add(-2 * time.Minute): 5})
	e.mustRollup(t, e.links[1].slug, map[time.Time]int64{now.Add(-3 * time.Minute): 3, now.Add(-time.Minute): 4})

	extra := e.b.newLinks(2)
	if err := e.in.createLinks(ctx, extra); err != nil {
		t.Fatalf("createLinks: %v", err)
	}
	all := append(append([]benchLink{}, e.links...), extra...)
	want := map[string]int64{e.links[0].slug: 5, e.links[1].slug: 7, e.links[2].slug: 0, extra[0].slug: 0, extra[1].slug: 0}

	got, err := e.in.apiClicks(ctx, all)
	if err != nil {
		t.Fatalf("apiClicks: %v", err)
	}
	for slug, n := range want {
		if got[slug] != n {
			t.Errorf("API clicks of %s = %d, want %d", slug, got[slug], n)
		}
	}
	stored, err := e.in.storedClicks(ctx, all)
	if err != nil {
		t.Fatalf("storedClicks: %v", err)
	}
	for slug, n := range want {
		if stored[slug] != n {
			t.Errorf("stored clicks of %s = %d, want %d", slug, stored[slug], n)
		}
	}

	buckets, err := e.in.minuteBuckets(ctx, e.links[1].slug, now.Add(-10*time.Minute), now.Add(time.Minute))
	if err != nil {
		t.Fatalf("minuteBuckets: %v", err)
	}
	if len(buckets) != 2 || buckets[now.Add(-3*time.Minute)] != 3 || buckets[now.Add(-time.Minute)] != 4 {
		t.Errorf("buckets %v, want 3 at -3m and 4 at -1m, and no empty minutes", buckets)
	}

	if _, err := e.in.apiClicks(ctx, []benchLink{{slug: "never-created"}}); err == nil ||
		!strings.Contains(err.Error(), "not found") {
		t.Errorf("apiClicks of an unknown slug: %v, want not found", err)
	}
	if err := e.in.api(ctx, http.MethodGet, "/api/v1/links/never-created", nil, nil); err == nil ||
		!strings.Contains(err.Error(), "404") {
		t.Errorf("GET of an unknown link: %v, want a 404 error", err)
	}
}

func TestCreateLinksRefusesDuplicates(t *testing.T) {
	e := newAPIEnv(t)
	err := e.in.createLinks(context.Background(), e.links[:1]) // imported already
	if err == nil || !strings.Contains(err.Error(), "409") {
		t.Fatalf("createLinks of a slug in use: %v, want a 409 error", err)
	}
}
