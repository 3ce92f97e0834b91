package web_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/dashboard"
	"github.com/linkforge/linkforge/health"
	"github.com/linkforge/linkforge/internal/pgtest"
	"github.com/linkforge/linkforge/linkcounter"
	"github.com/linkforge/linkforge/linkcounter/clicklog"
	"github.com/linkforge/linkforge/web"
)

func TestMain(m *testing.M) { pgtest.MainNoLeaks(m) }

// publicURL is the --public-url of every test server: the base of
// short_url, and the self host of the redirect-loop check.
const publicURL = "http://lf.test:8080"

// clock is a settable time source for Config.Now.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock() *clock { return &clock{t: time.Now().UTC().Truncate(time.Microsecond)} }

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = t
}

func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// env is one server on a real store, reached over real HTTP.
type env struct {
	t      *testing.T
	store  linkforge.Store
	srv    *web.Server
	url    string
	clock  *clock
	client *http.Client
}

// newEnv starts a server on store; opts adjust its Config.
func newEnv(t *testing.T, store linkforge.Store, opts ...func(*web.Config)) *env {
	t.Helper()
	clk := newClock()
	pub, _ := url.Parse(publicURL)
	cfg := web.Config{Store: store, PublicURL: pub, Now: clk.Now,
		// High enough that only the rate-limit test ever meets it.
		RateLimit: 1e6, RateBurst: 1e6,
		// Cheap hashes: the tests are about the flow, not the cost
		// (the real-binary test uses the default parameters).
		PasswordParams: testPasswordParams,
		// Health checks reach loopback targets only: a link to
		// example.com is never fetched (nor resolved) by a test.
		Health: loopbackHealth}
	for _, o := range opts {
		o(&cfg)
	}
	srv, err := web.New(cfg)
	if err != nil {
		t.Fatalf("web.New: %v", err)
	}
	hs := httptest.NewServer(srv)
	t.Cleanup(hs.Close)
	client := hs.Client()
	// Redirects are what we test: never follow them.
	client.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	return &env{t: t, store: store, srv: srv, url: hs.URL, clock: clk, client: client}
}

// response is a fully read HTTP response.
type response struct {
	method string
	status int
	header http.Header
	body   []byte
}

func (r response) String() string {
	return fmt.Sprintf("%d %s %s", r.status, r.header.Get("Content-Type"), r.body)
}

// do sends a request with an optional bearer token and body.
func (e *env) do(method, path, token, body string) response {
	e.t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, e.url+path, rd)
	if err != nil {
		e.t.Fatalf("new request: %v", err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	return e.send(req)
}

// sendOversize sends a request whose body the server refuses (413) and
// returns the answer. The server answers without reading the rest of the
// body and closes the connection (see dropUnreadBody), so an http.Client
// still writing the body may get "broken pipe" instead of the answer; here
// the answer is read while the body is written. With headersOnly, the body
// is not sent at all: a declared Content-Length over the limit is refused on
// its own, and no unread bytes can reset the connection under the answer.
func (e *env) sendOversize(req *http.Request, headersOnly bool) response {
	e.t.Helper()
	conn, err := net.Dial("tcp", req.URL.Host)
	if err != nil {
		e.t.Fatalf("dial: %v", err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(10 * time.Second))
	if headersOnly {
		var b bytes.Buffer
		req.Header.Set("Content-Length", strconv.FormatInt(req.ContentLength, 10))
		fmt.Fprintf(&b, "%s %s HTTP/1.1\r\nHost: %s\r\n", req.Method, req.URL.RequestURI(), req.URL.Host)
		req.Header.Write(&b) //nolint:errcheck // writes to a bytes.Buffer, which does not fail
		b.WriteString("\r\n")
		if _, err := conn.Write(b.Bytes()); err != nil {
			e.t.Fatalf("write headers: %v", err)
		}
	} else {
		// The server may close before the whole body is written: the
		// write's error is expected and says nothing.
		go req.Write(conn) //nolint:errcheck // the reply read from conn tells whether the request got there
	}
	resp, err := http.ReadResponse(bufio.NewReader(conn), req)
	if err != nil {
		e.t.Fatalf("%s %s: no answer: %v", req.Method, req.URL.Path, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		e.t.Fatalf("%s %s: read body: %v", req.Method, req.URL.Path, err)
	}
	return response{method: req.Method, status: resp.StatusCode, header: resp.Header, body: body}
}

func (e *env) send(req *http.Request) response {
	e.t.Helper()
	resp, err := e.client.Do(req)
	if err != nil {
		e.t.Fatalf("%s %s: %v", req.Method, req.URL.Path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		e.t.Fatalf("%s %s: read body: %v", req.Method, req.URL.Path, err)
	}
	return response{method: req.Method, status: resp.StatusCode, header: resp.Header, body: b}
}

// linkBody is the Link schema's JSON, decoded with its nulls visible.
type linkBody struct {
	ID          string     `json:"id"`
	ShortURL    string     `json:"short_url"`
	Slug        string     `json:"slug"`
	URL         string     `json:"url"`
	ExpiresAt   *time.Time `json:"expires_at"`
	MaxClicks   *int64     `json:"max_clicks"`
	FallbackURL *string    `json:"fallback_url"`
	Tags        []string   `json:"tags"`
	CreatedAt   time.Time  `json:"created_at"`
	UpdatedAt   time.Time  `json:"updated_at"`
	ExpiredAt   *time.Time `json:"expired_at"`
	Clicks      int64      `json:"clicks"`
}

// problemBody is an application/problem+json answer.
type problemBody struct {
	Type   string `json:"type"`
	Title  string `json:"title"`
	Status int    `json:"status"`
	Detail string `json:"detail"`
	Code   string `json:"code"`
	Errors []struct {
		Field  string `json:"field"`
		Detail string `json:"detail"`
	} `json:"errors"`
}

func mustJSON[T any](t *testing.T, r response) T {
	t.Helper()
	var v T
	if err := json.Unmarshal(r.body, &v); err != nil {
		t.Fatalf("decode %T from %s: %v", v, r, err)
	}
	return v
}

// mustStatus fails unless r has the status.
func mustStatus(t *testing.T, r response, status int) {
	t.Helper()
	if r.status != status {
		t.Fatalf("status = %d, want %d; response: %s", r.status, status, r)
	}
}

// mustProblem fails unless r is a problem+json with status, naming field in
// its errors (field "" : no check of errors), and returns it.
func mustProblem(t *testing.T, r response, status int, field string) problemBody {
	t.Helper()
	mustStatus(t, r, status)
	if ct := r.header.Get("Content-Type"); ct != "application/problem+json" {
		t.Fatalf("Content-Type = %q, want application/problem+json; body %s", ct, r.body)
	}
	p := mustJSON[problemBody](t, r)
	if p.Status != status || p.Title == "" || p.Type == "" {
		t.Errorf("problem = %+v, want status %d with a type and a title", p, status)
	}
	if field != "" {
		var fields []string
		for _, f := range p.Errors {
			fields = append(fields, f.Field)
			if f.Field == field && f.Detail == "" {
				t.Errorf("field %q has no detail", field)
			}
		}
		if !contains(fields, field) {
			t.Errorf("problem errors name %q, want %q; problem %+v", fields, field, p)
		}
	}
	return p
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// mustTenantToken creates tenant name (if needed) and a new token for it,
// directly through the store.
func mustTenantToken(t *testing.T, s linkforge.Store, name string) (tenantID int64, secret string) {
	t.Helper()
	ctx := context.Background()
	tenant, err := s.EnsureTenant(ctx, name)
	if err != nil {
		t.Fatalf("EnsureTenant: %v", err)
	}
	secret, hash, display := linkforge.NewToken()
	if _, err := s.CreateToken(ctx, linkforge.Token{TenantID: tenant.ID, Name: "test", Hash: hash, Display: display}); err != nil {
		t.Fatalf("CreateToken: %v", err)
	}
	return tenant.ID, secret
}

// mustCreate POSTs body and returns the created link.
func (e *env) mustCreate(token, body string) linkBody {
	e.t.Helper()
	r := e.do(http.MethodPost, "/api/v1/links", token, body)
	mustStatus(e.t, r, http.StatusCreated)
	return mustJSON[linkBody](e.t, r)
}

// mustStoreLink creates a link directly in the store.
func mustStoreLink(t *testing.T, s linkforge.Store, l linkforge.Link) linkforge.Link {
	t.Helper()
	if l.Tags == nil {
		l.Tags = []string{}
	}
	got, err := s.CreateLink(context.Background(), l)
	if err != nil {
		t.Fatalf("CreateLink(%q): %v", l.Slug, err)
	}
	return got
}

// mustTenantLinks returns every link of the tenant, from the store.
func mustTenantLinks(t *testing.T, s linkforge.Store, tenantID int64) []linkforge.Link {
	t.Helper()
	var all []linkforge.Link
	cursor := ""
	for {
		page, err := s.QueryLinks(context.Background(), linkforge.ListQuery{TenantID: tenantID, Cursor: cursor, Limit: 1000})
		if err != nil {
			t.Fatalf("QueryLinks: %v", err)
		}
		all = append(all, page.Links...)
		if page.NextCursor == "" {
			return all
		}
		cursor = page.NextCursor
	}
}

func mustTenantLink(t *testing.T, s linkforge.Store, tenantID int64, slug string) linkforge.Link {
	t.Helper()
	l, err := s.TenantLink(context.Background(), tenantID, linkforge.PublicDomainID, slug)
	if err != nil {
		t.Fatalf("TenantLink(%q): %v", slug, err)
	}
	return l
}

// countingStore is the real store with its redirect lookups counted.
type countingStore struct {
	linkforge.Store
	bySlug atomic.Int64
}

func (c *countingStore) LinkBySlug(ctx context.Context, domainID int64, slug string) (linkforge.Link, error) {
	c.bySlug.Add(1)
	return c.Store.LinkBySlug(ctx, domainID, slug)
}

// mustHTML fails unless r is one of the redirect path's HTML pages.
func mustHTML(t *testing.T, r response, status int) {
	t.Helper()
	mustStatus(t, r, status)
	if ct := r.header.Get("Content-Type"); ct != "text/html; charset=utf-8" {
		t.Errorf("Content-Type = %q, want text/html; charset=utf-8", ct)
	}
	if r.method == http.MethodHead {
		if len(r.body) != 0 {
			t.Errorf("HEAD answered a body: %q", r.body)
		}
	} else if !strings.Contains(string(r.body), "<html") {
		t.Errorf("body is not an HTML page: %q", r.body)
	}
	if got := r.header.Get("X-Content-Type-Options"); got != "nosniff" {
		t.Errorf("X-Content-Type-Options = %q, want nosniff", got)
	}
}

// mustRedirect fails unless r is a 302 to location.
func mustRedirect(t *testing.T, r response, location string) {
	t.Helper()
	mustStatus(t, r, http.StatusFound)
	if got := r.header.Get("Location"); got != location {
		t.Errorf("Location = %q, want %q", got, location)
	}
	if got := r.header.Get("Cache-Control"); got != "private, max-age=0" {
		t.Errorf("Cache-Control = %q, want private, max-age=0", got)
	}
}

func ptr[T any](v T) *T { return &v }

func mustURL(t testing.TB, raw string) *url.URL {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// counter is the real LinkCounter, on a journal in a temporary directory,
// with what it counted readable by the tests.
type counter struct {
	*linkcounter.Counter
	journal *clicklog.Journal // its journal, to read what a redirect made durable
	reg     *prometheus.Registry
}

// mustCounter starts a real LinkCounter on st. Its flush interval is an
// hour: during a test nothing leaves the journal, where count reads the
// clicks.
func mustCounter(t testing.TB, st linkforge.Store) *counter {
	t.Helper()
	ctx := context.Background()
	cs, ok := st.(linkcounter.Store)
	if !ok {
		t.Fatalf("%T has no ClickTotal", st)
	}
	j, err := clicklog.Open(ctx, t.TempDir())
	if err != nil {
		t.Fatalf("open journal: %v", err)
	}
	t.Cleanup(func() { j.Close() })
	reg := prometheus.NewRegistry()
	c, err := linkcounter.New(ctx, linkcounter.Config{Store: cs, Journal: j, FlushInterval: time.Hour,
		Registerer: reg, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatalf("linkcounter.New: %v", err)
	}
	if err := c.Start(ctx); err != nil {
		t.Fatalf("start counter: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := c.Stop(ctx); err != nil {
			t.Errorf("stop counter: %v", err)
		}
	})
	return &counter{Counter: c, journal: j, reg: reg}
}

// useCounter makes ctr the server's counter in every role cmd gives the
// LinkCounter: it counts, answers HEAD for exhausted links, is told of the
// redirects it does not count and takes part in /readyz.
func useCounter(c *web.Config, ctr *linkcounter.Counter) {
	c.Counter, c.Exhaustion, c.Skips, c.Readiness = ctr, ctr, ctr, ctr
}

// useHub makes hub the server's live feed and the feed of its link writes,
// as cmd wires it.
func useHub(c *web.Config, hub *dashboard.Hub) {
	c.Live, c.LinkFeed = hub, hub
}

// count returns the clicks of the link durable in the journal: the
// counter's acknowledged clicks, since Record returns only once its click
// is committed there.
func (c *counter) count(t *testing.T, linkID int64) int64 {
	t.Helper()
	return c.journal.Held(linkID)
}

// skipped returns the counter's linkforge_clicks_skipped_total of reason
// (linkforge.SkipHead, SkipPreview): redirects it was told were not
// clicks.
func (c *counter) skipped(t *testing.T, reason string) float64 {
	t.Helper()
	families, err := c.reg.Gather()
	if err != nil {
		t.Fatalf("gather metrics: %v", err)
	}
	for _, f := range families {
		if f.GetName() != "linkforge_clicks_skipped_total" {
			continue
		}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "reason" && l.GetValue() == reason {
					return m.GetCounter().GetValue()
				}
			}
		}
	}
	return 0
}

// loopbackHealth is the tests' health checker: loopback targets only,
// refused before any name is resolved, and no wait between requests.
var loopbackHealth = health.New(health.Config{PerHost: -1, Timeout: 5 * time.Second,
	Transport: &http.Transport{DialContext: func(ctx context.Context, network, address string) (net.Conn, error) {
		host, _, err := net.SplitHostPort(address)
		if ip, perr := netip.ParseAddr(host); err != nil || perr != nil || !ip.IsLoopback() {
			return nil, fmt.Errorf("test health checker: %s is not a loopback address", address)
		}
		var d net.Dialer
		return d.DialContext(ctx, network, address)
	}}})
