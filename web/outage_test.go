package web_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/internal/testdb"
	"github.com/linkforge/linkforge/linkcounter"
	"github.com/linkforge/linkforge/linkcounter/clicklog"
	"github.com/linkforge/linkforge/web"
)

// outageStore answers LinkBySlug from rows read from the real store
// beforehand, and fails it, like a database that cannot be reached, while
// down. Its tests ask only of the public host: the domain is not looked
// at. The rows are read before the synctest bubble because database I/O
// cannot run on a bubble's fake clock.
type outageStore struct {
	linkforge.Store
	rows  map[string]linkforge.Link
	down  atomic.Bool
	calls atomic.Int64
}

var errUnreachable = errors.New("dial tcp 10.0.0.1:5432: connect: connection refused")

func (o *outageStore) LinkBySlug(_ context.Context, _ int64, slug string) (linkforge.Link, error) {
	o.calls.Add(1)
	if o.down.Load() {
		return linkforge.Link{}, errUnreachable
	}
	l, ok := o.rows[slug]
	if !ok {
		return linkforge.Link{}, linkforge.Errorf(linkforge.ENotFound, "no link %q", slug)
	}
	return l, nil
}

func newOutageStore(t *testing.T, links ...linkforge.Link) *outageStore {
	t.Helper()
	st := testdb.SQLite(t)
	tenant, _ := mustTenantToken(t, st, "acme")
	o := &outageStore{Store: st, rows: map[string]linkforge.Link{}}
	for _, l := range links {
		l.TenantID = tenant
		mustStoreLink(t, st, l)
		row, err := st.LinkBySlug(t.Context(), linkforge.PublicDomainID, l.Slug)
		if err != nil {
			t.Fatal(err)
		}
		o.rows[l.Slug] = row
	}
	return o
}

func serve(srv *web.Server, method, path string) *httptest.ResponseRecorder {
	rec := httptest.NewRecorder()
	srv.ServeHTTP(rec, httptest.NewRequest(method, path, nil))
	return rec
}

// TestStaleIfError: a cached link past its TTL whose refresh fails is served
// as it was (issue 10, item 1), with its expiry still checked at read time
// against the cached expires_at; once a refresh has failed, requests do not
// wait for the store and at most one refresh per second is tried; an
// invalidated entry is never served stale; and when the store is back, the
// entry is refreshed.
func TestStaleIfError(t *testing.T) {
	base := time.Now().UTC().Truncate(time.Second)
	expiresAt := base.Add(90 * time.Second)
	st := newOutageStore(t,
		linkforge.Link{Slug: "steady", URL: "https://example.com/steady"},
		linkforge.Link{Slug: "expiring", URL: "https://example.com/expiring", ExpiresAt: &expiresAt},
		linkforge.Link{Slug: "dropped", URL: "https://example.com/dropped"})

	synctest.Test(t, func(t *testing.T) {
		clk := newClock()
		clk.Set(base)
		srv, err := web.New(web.Config{Store: st, PublicURL: mustURL(t, publicURL), Now: clk.Now})
		if err != nil {
			t.Fatal(err)
		}
		mustFound := func(slug string) {
			t.Helper()
			rec := serve(srv, http.MethodGet, "/"+slug)
			if rec.Code != http.StatusFound || rec.Header().Get("Location") != "https://example.com/"+slug {
				t.Fatalf("GET /%s = %d Location %q, want 302 to its target", slug, rec.Code, rec.Header().Get("Location"))
			}
		}
		for _, slug := range []string{"steady", "expiring", "dropped"} {
			mustFound(slug)
		}
		if got := st.calls.Load(); got != 3 {
			t.Fatalf("warm-up made %d lookups, want 3", got)
		}

		st.down.Store(true)
		clk.Add(61 * time.Second) // past the 60 s TTL
		mustFound("steady")       // the refresh fails: served stale
		if got := st.calls.Load(); got != 4 {
			t.Fatalf("lookups = %d, want 4 (one failed refresh)", got)
		}
		for range 100 {
			mustFound("steady")
		}
		if got := st.calls.Load(); got != 4 {
			t.Errorf("100 requests within a second of a failed refresh made %d lookups, want 0", got-4)
		}

		// A second later one request starts a refresh in the background
		// and is answered at once.
		clk.Add(1100 * time.Millisecond)
		mustFound("steady")
		synctest.Wait()
		if got := st.calls.Load(); got != 5 {
			t.Errorf("lookups = %d after a second, want 5 (one background refresh)", got)
		}

		// Expiry is still checked against the cached copy.
		mustFound("expiring") // a failed refresh, served stale
		clk.Set(expiresAt)
		if rec := serve(srv, http.MethodGet, "/expiring"); rec.Code != http.StatusGone || rec.Header().Get("Location") != "" {
			t.Errorf("GET /expiring at its expiry during the outage = %d Location %q, want 410", rec.Code, rec.Header().Get("Location"))
		}

		// An invalidated entry is gone, outage or not.
		web.Cache(srv).Invalidate(linkforge.PublicDomainID, "dropped")
		if rec := serve(srv, http.MethodGet, "/dropped"); rec.Code != http.StatusServiceUnavailable {
			t.Errorf("GET /dropped after its invalidation during the outage = %d, want 503", rec.Code)
		}

		// The store is back: the next refresh (at most a second away)
		// brings a fresh entry, which then makes no lookup for a while.
		st.down.Store(false)
		clk.Add(1100 * time.Millisecond)
		mustFound("steady")
		synctest.Wait()
		before := st.calls.Load()
		for range 10 {
			mustFound("steady")
		}
		if got := st.calls.Load(); got != before {
			t.Errorf("after the store came back, 10 requests made %d lookups, want 0 (a fresh entry)", got-before)
		}

		metrics := serve(srv, http.MethodGet, "/metrics").Body.String()
		if !strings.Contains(metrics, `linkforge_link_cache_lookups_total{result="stale"} `) {
			t.Errorf("/metrics lacks the stale lookups")
		}
	})
}

// peerHealth is what the cluster bus tells the web server about itself: a
// settable Healthy.
type peerHealth struct{ healthy atomic.Bool }

func (p *peerHealth) Healthy() bool { return p.healthy.Load() }

// TestUnheardPeersShortenTTL (issue 10, item 4): while this node's bus
// listener is not known healthy, a cached link is revalidated once it is a
// second old instead of sixty, so that a change made on another node whose
// invalidation may have been lost is seen within a second.
func TestUnheardPeersShortenTTL(t *testing.T) {
	st := newOutageStore(t, linkforge.Link{Slug: "shared", URL: "https://example.com/shared"})
	synctest.Test(t, func(t *testing.T) {
		peers := &peerHealth{}
		peers.healthy.Store(true)
		clk := newClock()
		srv, err := web.New(web.Config{Store: st, PublicURL: mustURL(t, publicURL), Now: clk.Now, PeerHealth: peers})
		if err != nil {
			t.Fatal(err)
		}
		serve(srv, http.MethodGet, "/shared")
		for range 50 { // 50 s with a healthy bus: the invalidations would reach us
			clk.Add(time.Second)
			serve(srv, http.MethodGet, "/shared")
		}
		if got := st.calls.Load(); got != 1 {
			t.Fatalf("healthy bus: %d lookups in 50 s, want 1", got)
		}

		peers.healthy.Store(false)
		clk.Add(time.Second)
		serve(srv, http.MethodGet, "/shared")
		if got := st.calls.Load(); got != 2 {
			t.Fatalf("unheard bus: %d lookups, want 2 (a 51 s old entry revalidated)", got)
		}
		// The change another node made: seen within a second.
		l := st.rows["shared"]
		l.URL = "https://example.com/changed"
		st.rows["shared"] = l
		clk.Add(500 * time.Millisecond)
		if loc := serve(srv, http.MethodGet, "/shared").Header().Get("Location"); loc != "https://example.com/shared" {
			t.Fatalf("Location %q half a second after the refresh, want the cached one", loc)
		}
		clk.Add(500 * time.Millisecond)
		if loc := serve(srv, http.MethodGet, "/shared").Header().Get("Location"); loc != "https://example.com/changed" {
			t.Errorf("Location %q a second after the refresh with the bus unheard, want the changed target", loc)
		}
		if got := st.calls.Load(); got != 3 {
			t.Errorf("lookups = %d, want 3", got)
		}
	})
}

// TestWarmRedirectWithPeersDoesNotAllocate: asking the bus whether it is
// healthy keeps the warm redirect free of allocations.
func TestWarmRedirectWithPeersDoesNotAllocate(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts differ under -race")
	}
	st := testdb.SQLite(t)
	tenant, _ := mustTenantToken(t, st, "acme")
	mustStoreLink(t, st, linkforge.Link{TenantID: tenant, Slug: "alloc", URL: "https://example.com/a"})
	peers := &peerHealth{}
	peers.healthy.Store(true)
	clk := newClock()
	srv, err := web.New(web.Config{Store: st, PublicURL: mustURL(t, publicURL), Now: clk.Now, PeerHealth: peers})
	if err != nil {
		t.Fatal(err)
	}
	req := httptest.NewRequest(http.MethodGet, "/alloc", nil)
	w := &benchWriter{h: http.Header{}}
	srv.ServeHTTP(w, req) // warm
	clk.Add(30 * time.Second)
	allocs := testing.AllocsPerRun(1000, func() {
		srv.ServeHTTP(w, req)
	})
	if w.code != http.StatusFound {
		t.Fatalf("status %d", w.code)
	}
	if allocs > 0 {
		t.Errorf("a warm redirect asking the bus allocates %.1f times, want 0", allocs)
	}
}

// newRealCounter returns a started LinkCounter on st with a journal in a
// temporary directory.
func newRealCounter(t *testing.T, st linkforge.Store) *linkcounter.Counter {
	t.Helper()
	j, err := clicklog.Open(t.Context(), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	c, err := linkcounter.New(t.Context(), linkcounter.Config{Store: st, Journal: j, FlushInterval: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		c.Stop(context.Background())
		j.Close()
	})
	return c
}

// TestUncountedRequestsDoNotRevealLimitedTargets (issue 10, item 8): HEAD
// requests and link-preview agents are not counted, so for a link with
// max_clicks they get a page that names no target; a one-time link cannot
// be read for ever without using its click. Unlimited links still redirect
// them, uncounted.
func TestUncountedRequestsDoNotRevealLimitedTargets(t *testing.T) {
	testdb.Each(t, func(t *testing.T, st linkforge.Store) {
		t.Parallel()
		counter := newRealCounter(t, st)
		e := newEnv(t, st, func(c *web.Config) { useCounter(c, counter) })
		tenant, _ := mustTenantToken(t, st, "acme")
		const target = "https://example.com/secret-target"
		limited := mustStoreLink(t, st, linkforge.Link{TenantID: tenant, Slug: "once", URL: target, MaxClicks: ptr[int64](1)})
		free := mustStoreLink(t, st, linkforge.Link{TenantID: tenant, Slug: "free", URL: target})

		uncounted := []struct {
			name, method, agent string
		}{
			{"HEAD", http.MethodHead, "Mozilla/5.0 (X11; Linux x86_64) Firefox/133.0"},
			{"HEAD without agent", http.MethodHead, ""},
			{"Slackbot", http.MethodGet, "Slackbot-LinkExpanding 1.0 (+https://api.slack.com/robots)"},
			{"facebookexternalhit", http.MethodGet, "facebookexternalhit/1.1 (+http://www.facebook.com/externalhit_uatext.php)"},
			{"Twitterbot", http.MethodGet, "Twitterbot/1.0"},
			{"WhatsApp", http.MethodGet, "WhatsApp/2.23.20.0 A"},
			{"Discordbot", http.MethodGet, "Mozilla/5.0 (compatible; Discordbot/2.0; +https://discordapp.com)"},
			{"Googlebot HEAD", http.MethodHead, "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)"},
		}
		request := func(method, slug, agent string) response {
			req, err := http.NewRequest(method, e.url+"/"+slug, nil)
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("User-Agent", agent)
			return e.send(req)
		}
		for _, tt := range uncounted {
			t.Run(tt.name, func(t *testing.T) {
				for range 3 { // again and again: nothing is used up
					r := request(tt.method, "once", tt.agent)
					mustHTML(t, r, http.StatusOK)
					if strings.Contains(string(r.body), "example.com") {
						t.Errorf("the page names the target: %q", r.body)
					}
					for k, vs := range r.header {
						for _, v := range vs {
							if strings.Contains(v, "example.com") {
								t.Errorf("header %s: %q names the target", k, v)
							}
						}
					}
				}
				mustRedirect(t, request(tt.method, "free", tt.agent), target)
			})
		}

		// The one click is still there, and it is the one that shows the
		// target.
		mustRedirect(t, request(http.MethodGet, "once", "Mozilla/5.0 Firefox/133.0"), target)
		mustHTML(t, request(http.MethodGet, "once", "Mozilla/5.0 Firefox/133.0"), http.StatusGone)
		mustHTML(t, request(http.MethodHead, "once", ""), http.StatusGone)

		if err := counter.Stop(t.Context()); err != nil {
			t.Fatal(err)
		}
		for _, c := range []struct {
			l    linkforge.Link
			want int64
		}{{limited, 1}, {free, 0}} {
			got, err := st.ClickTotal(t.Context(), c.l.ID)
			if err != nil {
				t.Fatal(err)
			}
			if got != c.want {
				t.Errorf("%s: %d clicks counted, want %d", c.l.Slug, got, c.want)
			}
		}
	})
}

// TestReadinessWithUnwritableJournal: a counter whose journal takes no
// write cannot count clicks, so the node is not ready, database or not.
func TestReadinessWithUnwritableJournal(t *testing.T) {
	st := testdb.SQLite(t)
	j, err := clicklog.Open(t.Context(), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	counter, err := linkcounter.New(t.Context(), linkcounter.Config{Store: st, Journal: j})
	if err != nil {
		t.Fatal(err)
	}
	if err := counter.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { counter.Stop(context.Background()) })
	e := newEnv(t, st, func(c *web.Config) { useCounter(c, counter) })
	if err := j.Close(); err != nil { // the file is gone from under the counter
		t.Fatal(err)
	}
	r := e.do(http.MethodGet, "/readyz", "", "")
	mustStatus(t, r, http.StatusServiceUnavailable)
	if want := `{"status":"unavailable","journal":"unwritable","database":"ok"}`; strings.TrimSpace(string(r.body)) != want {
		t.Errorf("/readyz body = %s, want %s", r.body, want)
	}
}
