package web_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/internal/testdb"
	"github.com/linkforge/linkforge/web"
)

// pingStore is the real store whose Ping can be made to fail, as it does
// while the database is unreachable.
type pingStore struct {
	linkforge.Store
	mu   sync.Mutex
	down bool
}

func (p *pingStore) Ping(ctx context.Context) error {
	p.mu.Lock()
	down := p.down
	p.mu.Unlock()
	if down {
		return errors.New("dial tcp 10.0.0.1:5432: connect: connection refused")
	}
	return p.Store.Ping(ctx)
}

func (p *pingStore) setDown(d bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.down = d
}

// TestHealthAndReadiness (issue 10, item 1): /readyz says whether this node
// can answer redirects and count clicks. The database being down alone does
// not fail it (cached links keep redirecting, clicks wait in the journal):
// it is reported in the body, without its cause. A counter that cannot
// write its journal fails it.
func TestHealthAndReadiness(t *testing.T) {
	testdb.Each(t, func(t *testing.T, st linkforge.Store) {
		t.Parallel()
		s := &pingStore{Store: st}
		counter := newRealCounter(t, st)
		e := newEnv(t, s, func(c *web.Config) { useCounter(c, counter) })
		ready := func(status int, want string) {
			t.Helper()
			r := e.do(http.MethodGet, "/readyz", "", "")
			mustStatus(t, r, status)
			if ct := r.header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
				t.Errorf("Content-Type = %q, want JSON", ct)
			}
			var got map[string]any
			if err := json.Unmarshal(r.body, &got); err != nil {
				t.Fatalf("body %s: %v", r.body, err)
			}
			if b, _ := json.Marshal(got); string(b) != want {
				t.Errorf("/readyz body = %s, want %s", b, want)
			}
			if strings.Contains(string(r.body), "10.0.0.1") {
				t.Errorf("body %s shows the cause", r.body)
			}
		}
		mustStatus(t, e.do(http.MethodGet, "/healthz", "", ""), http.StatusOK)
		ready(http.StatusOK, `{"database":"ok","journal":"ok","status":"ready"}`)
		s.setDown(true)
		ready(http.StatusOK, `{"database":"unavailable","journal":"ok","status":"ready"}`)
		mustStatus(t, e.do(http.MethodGet, "/healthz", "", ""), http.StatusOK)
		s.setDown(false)
		ready(http.StatusOK, `{"database":"ok","journal":"ok","status":"ready"}`)
		// A stopped counter counts nothing: not ready, whatever the
		// database.
		if err := counter.Stop(t.Context()); err != nil {
			t.Fatal(err)
		}
		ready(http.StatusServiceUnavailable, `{"database":"ok","journal":"unwritable","status":"unavailable"}`)
		s.setDown(true)
		ready(http.StatusServiceUnavailable, `{"database":"unavailable","journal":"unwritable","status":"unavailable"}`)
	})
}

// TestReadinessWithClosedStore: a closed store is reported, not failed on;
// without a counter there is no journal to check.
func TestReadinessWithClosedStore(t *testing.T) {
	st := testdb.SQLite(t)
	e := newEnv(t, st)
	mustStatus(t, e.do(http.MethodGet, "/readyz", "", ""), http.StatusOK)
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	r := e.do(http.MethodGet, "/readyz", "", "")
	mustStatus(t, r, http.StatusOK)
	if want := `{"status":"ready","journal":"none","database":"unavailable"}`; strings.TrimSpace(string(r.body)) != want {
		t.Errorf("/readyz body = %s, want %s", r.body, want)
	}
	mustStatus(t, e.do(http.MethodGet, "/healthz", "", ""), http.StatusOK)
}

// TestReadinessReportsTheBus: on a cluster /readyz reports whether this
// node hears the others (the bus's health), without failing on it: the
// bus is best effort, and a bus outage would otherwise take every node out
// of the load balancer at once. A single node has no bus to report.
func TestReadinessReportsTheBus(t *testing.T) {
	st := testdb.SQLite(t)
	peers := &peerHealth{}
	e := newEnv(t, st, func(c *web.Config) { c.PeerHealth = peers })
	for _, tt := range []struct {
		healthy bool
		want    string
	}{
		{true, `{"status":"ready","journal":"none","database":"ok","bus":"ok"}`},
		{false, `{"status":"ready","journal":"none","database":"ok","bus":"unavailable"}`},
	} {
		peers.healthy.Store(tt.healthy)
		r := e.do(http.MethodGet, "/readyz", "", "")
		mustStatus(t, r, http.StatusOK)
		if got := strings.TrimSpace(string(r.body)); got != tt.want {
			t.Errorf("bus healthy %v: /readyz body = %s, want %s", tt.healthy, got, tt.want)
		}
	}
}

func TestMetrics(t *testing.T) {
	st := testdb.SQLite(t)
	reg := prometheus.NewRegistry()
	e := newEnv(t, st, func(c *web.Config) { c.Registry = reg })
	tenant, tok := mustTenantToken(t, st, "acme")
	mustStoreLink(t, st, linkforge.Link{TenantID: tenant, Slug: "m-one", URL: "https://example.com/1"})
	mustStoreLink(t, st, linkforge.Link{TenantID: tenant, Slug: "m-two", URL: "https://example.com/2"})
	for range 3 {
		e.do(http.MethodGet, "/m-one", "", "")
	}
	e.do(http.MethodGet, "/m-two", "", "")
	e.do(http.MethodHead, "/m-two", "", "")
	e.do(http.MethodGet, "/m-unknown", "", "")
	e.do(http.MethodGet, "/api/v1/links/m-one", tok, "")
	e.do(http.MethodGet, "/api/v1/links/m-one", "", "")
	e.do(http.MethodGet, "/no/such/route", "", "")
	e.do(http.MethodGet, "/", "", "")
	e.do(http.MethodPut, "/api/v1/links", tok, "")
	e.do("BREW", "/m-one", "", "")

	r := e.do(http.MethodGet, "/metrics", "", "")
	mustStatus(t, r, http.StatusOK)
	body := string(r.body)
	for _, want := range []string{
		`linkforge_http_requests_total{method="GET",route="/:slug",status="302"} 4`,
		`linkforge_http_requests_total{method="HEAD",route="/:slug",status="302"} 1`,
		// /no/such/route reaches the redirect handler as a malformed slug.
		`linkforge_http_requests_total{method="GET",route="/:slug",status="404"} 2`,
		`linkforge_http_requests_total{method="GET",route="/api/v1/links/:slug",status="200"} 1`,
		`linkforge_http_requests_total{method="GET",route="/api/v1/links/:slug",status="401"} 1`,
		`linkforge_http_requests_total{method="GET",route="/",status="302"} 1`,
		`linkforge_http_requests_total{method="PUT",route="/api/v1/links",status="405"} 1`,
		`linkforge_http_requests_total{method="OTHER",route="/:slug",status="405"} 1`,
		`linkforge_http_request_duration_seconds_count{method="GET",route="/:slug"} 6`,
		`linkforge_http_request_duration_seconds_bucket{method="GET",route="/:slug",le="0.0001"}`,
		"go_goroutines ",
		"process_cpu_seconds_total ",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}
	for _, slug := range []string{"m-one", "m-two", "m-unknown", "no/such"} {
		if strings.Contains(body, slug) {
			t.Errorf("/metrics holds the raw path %q: route labels must be templates", slug)
		}
	}

	// A second server on the same registry shares the collectors.
	if _, err := web.New(web.Config{Store: st, PublicURL: mustURL(t, publicURL), Registry: reg}); err != nil {
		t.Errorf("second server on one registry: %v", err)
	}
}

func TestRateLimit(t *testing.T) {
	st := testdb.SQLite(t)
	// One request per hour, a burst of 3: the fourth in a row is refused.
	e := newEnv(t, st, func(c *web.Config) { c.RateLimit, c.RateBurst = 1.0/3600, 3 })
	tenant, tok := mustTenantToken(t, st, "acme")
	_, other := mustTenantToken(t, st, "other")
	for i := range 3 {
		mustStatus(t, e.do(http.MethodGet, "/api/v1/links", tok, ""), http.StatusOK)
		_ = i
	}
	r := e.do(http.MethodPost, "/api/v1/links", tok, `{"url":"https://example.com"}`)
	p := mustProblem(t, r, http.StatusTooManyRequests, "")
	if p.Code != linkforge.ERateLimited {
		t.Errorf("code = %q", p.Code)
	}
	ra, err := strconv.Atoi(r.header.Get("Retry-After"))
	if err != nil || ra < 3000 || ra > 3600 {
		t.Errorf("Retry-After = %q, want about an hour in seconds", r.header.Get("Retry-After"))
	}
	if n := len(mustTenantLinks(t, st, tenant)); n != 0 {
		t.Errorf("a refused create wrote %d links", n)
	}
	// The bucket is the token's: another token is not limited by it, and
	// the redirect path is not limited at all.
	mustStatus(t, e.do(http.MethodGet, "/api/v1/links", other, ""), http.StatusOK)
	mustHTML(t, e.do(http.MethodGet, "/some-slug", "", ""), http.StatusNotFound)
	// Time refills the bucket.
	e.clock.Add(3601e9)
	mustStatus(t, e.do(http.MethodGet, "/api/v1/links", tok, ""), http.StatusOK)
}

// brokenStore fails the reads of the admin API the way a driver bug would:
// with an error that is not a *linkforge.Error.
type brokenStore struct{ linkforge.Store }

func (brokenStore) TenantLink(context.Context, int64, int64, string) (linkforge.Link, error) {
	return linkforge.Link{}, errors.New("pq: relation \"links\" secret internals")
}

func TestInternalErrorsAreLoggedNotShown(t *testing.T) {
	st := testdb.SQLite(t)
	var logs bytes.Buffer
	var mu sync.Mutex
	logger := slog.New(slog.NewJSONHandler(&lockedWriter{w: &logs, mu: &mu}, nil))
	e := newEnv(t, brokenStore{st}, func(c *web.Config) { c.Logger = logger })
	_, tok := mustTenantToken(t, st, "acme")
	r := e.do(http.MethodGet, "/api/v1/links/x", tok, "")
	p := mustProblem(t, r, http.StatusInternalServerError, "")
	if strings.Contains(string(r.body), "secret") || p.Detail != "internal error" || p.Code != linkforge.EInternal {
		t.Errorf("500 body = %s", r.body)
	}
	mu.Lock()
	defer mu.Unlock()
	var entry map[string]any
	if err := json.Unmarshal(logs.Bytes(), &entry); err != nil {
		t.Fatalf("log = %q: %v", logs.String(), err)
	}
	if msg, _ := entry["error"].(string); !strings.Contains(msg, "secret internals") || entry["level"] != "ERROR" {
		t.Errorf("log entry = %v, want the cause under key error", entry)
	}
}

type lockedWriter struct {
	w  *bytes.Buffer
	mu *sync.Mutex
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

func TestRouterErrorsAreProblems(t *testing.T) {
	st := testdb.SQLite(t)
	e := newEnv(t, st)
	tenant, tok := mustTenantToken(t, st, "acme")
	// POST /{slug} is the password form's post: a link without a password
	// takes none.
	mustStoreLink(t, st, linkforge.Link{TenantID: tenant, Slug: "some-slug", URL: "https://example.com/"})
	tests := []struct {
		name   string
		method string
		path   string
		status int
	}{
		{"unknown api route", http.MethodGet, "/api/v1/nothing", http.StatusNotFound},
		{"unknown api sub-route", http.MethodGet, "/api/v1/links/x/y", http.StatusNotFound},
		{"method not allowed", http.MethodPut, "/api/v1/links", http.StatusMethodNotAllowed},
		{"method not allowed on link", http.MethodPost, "/api/v1/links/x", http.StatusMethodNotAllowed},
		{"method not allowed on slug", http.MethodPost, "/some-slug", http.StatusMethodNotAllowed},
		{"method not allowed on a page", http.MethodPost, "/dashboard", http.StatusMethodNotAllowed},
		{"method not allowed on the API", http.MethodPost, "/api/v1/stats", http.StatusMethodNotAllowed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := e.do(tt.method, tt.path, tok, "")
			mustProblem(t, r, tt.status, "")
			if tt.status == http.StatusMethodNotAllowed && r.header.Get("Allow") == "" {
				t.Error("405 without Allow")
			}
			if r.header.Get("X-Content-Type-Options") != "nosniff" {
				t.Error("no X-Content-Type-Options")
			}
		})
	}
	// Other paths of several segments are for browsers: the HTML 404, as
	// is a post to an unknown slug.
	mustHTML(t, e.do(http.MethodGet, "/a/b/c", "", ""), http.StatusNotFound)
	mustHTML(t, e.do(http.MethodPost, "/no-such-slug", "", ""), http.StatusNotFound)
}

func TestDashboardAndOpenAPI(t *testing.T) {
	e := newEnv(t, testdb.SQLite(t))
	r := e.do(http.MethodGet, "/dashboard", "", "")
	mustHTML(t, r, http.StatusOK)
	if !strings.Contains(string(r.body), "/api/v1/openapi.json") || !strings.Contains(string(r.body), `src="/static/dashboard.js"`) {
		t.Errorf("dashboard page = %s", r.body)
	}
	r = e.do(http.MethodGet, "/api/v1/openapi.json", "", "")
	mustStatus(t, r, http.StatusOK)
	var doc struct {
		OpenAPI string         `json:"openapi"`
		Paths   map[string]any `json:"paths"`
	}
	if err := json.Unmarshal(r.body, &doc); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(doc.OpenAPI, "3.1.") || len(doc.Paths) == 0 {
		t.Errorf("openapi = %q with %d paths", doc.OpenAPI, len(doc.Paths))
	}
}

func TestNewValidatesConfig(t *testing.T) {
	st := testdb.SQLite(t)
	tests := []struct {
		name string
		cfg  web.Config
	}{
		{"no store", web.Config{PublicURL: mustURL(t, publicURL)}},
		{"no public url", web.Config{Store: st}},
		{"relative public url", web.Config{Store: st, PublicURL: mustURL(t, "/x")}},
		{"ftp public url", web.Config{Store: st, PublicURL: mustURL(t, "ftp://x.example")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := web.New(tt.cfg); err == nil {
				t.Error("New accepted it")
			}
		})
	}
}

// TestSelfHostFromPublicURL: the redirect-loop check uses the public URL's
// host, with its default port normalized.
func TestSelfHostFromPublicURL(t *testing.T) {
	st := testdb.SQLite(t)
	e := newEnv(t, st, func(c *web.Config) { c.PublicURL = mustURL(t, "https://Short.Example:443/") })
	_, tok := mustTenantToken(t, st, "acme")
	for _, target := range []string{"https://short.example/x", "https://SHORT.example:443/x", "http://short.example/x"} {
		mustProblem(t, e.do(http.MethodPost, "/api/v1/links", tok, `{"url":"`+target+`"}`), http.StatusBadRequest, "url")
	}
	l := e.mustCreate(tok, `{"url":"https://short.example:8443/x","slug":"ok"}`)
	if l.ShortURL != "https://Short.Example:443/ok" {
		t.Errorf("short_url = %q", l.ShortURL)
	}
}
