package web_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/dashboard"
	"github.com/linkforge/linkforge/internal/testdb"
	"github.com/linkforge/linkforge/linkcounter"
	"github.com/linkforge/linkforge/linkcounter/clicklog"
	"github.com/linkforge/linkforge/web"
)

// liveGuard bounds every wait on the feed; a healthy run needs a fraction.
const liveGuard = 10 * time.Second

// mustLiveHub returns a started dashboard hub, stopped when t ends.
func mustLiveHub(t *testing.T) *dashboard.Hub {
	t.Helper()
	h, err := dashboard.New(dashboard.Config{})
	if err != nil {
		t.Fatalf("dashboard.New: %v", err)
	}
	if err := h.Start(context.Background()); err != nil {
		t.Fatalf("start hub: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), liveGuard)
		defer cancel()
		if err := h.Stop(ctx); err != nil {
			t.Errorf("stop hub: %v", err)
		}
	})
	return h
}

// wsURL is the feed's URL on e.
func (e *env) wsURL() string { return "ws" + strings.TrimPrefix(e.url, "http") + "/api/v1/live" }

// dialLive performs the handshake; on a refusal it returns the response
// with its body read.
func (e *env) dialLive(protocols []string, header http.Header) (*websocket.Conn, response, error) {
	d := websocket.Dialer{Subprotocols: protocols, HandshakeTimeout: liveGuard}
	conn, resp, err := d.Dial(e.wsURL(), header)
	var r response
	if resp != nil {
		r = response{method: http.MethodGet, status: resp.StatusCode, header: resp.Header}
		r.body, _ = io.ReadAll(resp.Body)
		resp.Body.Close()
	}
	if err == nil {
		e.t.Cleanup(func() { conn.Close() })
	}
	return conn, r, err
}

// TestLiveHandshake: the feed admits a token in the header or in the
// browser's subprotocol list, from the server's own origin, and refuses
// everything else before upgrading, with a problem document.
func TestLiveHandshake(t *testing.T) {
	st := testdb.SQLite(t)
	_, token := mustTenantToken(t, st, "acme")
	e := newEnv(t, st, func(c *web.Config) { useHub(c, mustLiveHub(t)) })
	unknownToken, _, _ := linkforge.NewToken()

	bearer := func(tok string) http.Header { return http.Header{"Authorization": {"Bearer " + tok}} }
	with := func(h http.Header, k, v string) http.Header { h = h.Clone(); h.Set(k, v); return h }
	tests := []struct {
		name      string
		protocols []string
		header    http.Header
		status    int    // 101 or the refusal
		selected  string // the subprotocol selected on success
	}{
		{name: "header token", header: bearer(token), status: 101},
		{name: "header token from the request's own origin", header: with(bearer(token), "Origin", e.url), status: 101},
		{name: "header token from the public URL's origin", header: with(bearer(token), "Origin", publicURL), status: 101},
		{name: "browser subprotocols", protocols: []string{"linkforge.v1", "bearer." + token},
			header: http.Header{"Origin": {e.url}}, status: 101, selected: "linkforge.v1"},
		{name: "browser subprotocols in the other order", protocols: []string{"bearer." + token, "linkforge.v1"},
			header: http.Header{"Origin": {e.url}}, status: 101, selected: "linkforge.v1"},

		{name: "no token", status: 401},
		{name: "unknown token in the header", header: bearer(unknownToken), status: 401},
		{name: "malformed token in the header", header: bearer("lf_short"), status: 401},
		{name: "unknown token as subprotocol", protocols: []string{"linkforge.v1", "bearer." + unknownToken}, status: 401},
		{name: "bearer subprotocol without linkforge.v1", protocols: []string{"bearer." + token}, status: 400},
		{name: "cross-origin", header: with(bearer(token), "Origin", "http://evil.example"), status: 403},
		{name: "cross-origin browser", protocols: []string{"linkforge.v1", "bearer." + token},
			header: http.Header{"Origin": {"http://evil.example"}}, status: 403},
		{name: "own host, other scheme", header: with(bearer(token), "Origin", "https"+strings.TrimPrefix(e.url, "http")), status: 403},
		{name: "null origin", header: with(bearer(token), "Origin", "null"), status: 403},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			conn, r, err := e.dialLive(tt.protocols, tt.header)
			if tt.status == http.StatusSwitchingProtocols {
				if err != nil {
					t.Fatalf("dial: %v (%s)", err, r)
				}
				if got := conn.Subprotocol(); got != tt.selected {
					t.Errorf("selected subprotocol %q, want %q", got, tt.selected)
				}
				return
			}
			if !errors.Is(err, websocket.ErrBadHandshake) {
				t.Fatalf("dial: %v, want a refused handshake", err)
			}
			p := mustProblem(t, r, tt.status, "")
			if p.Detail == "" {
				t.Errorf("problem without detail: %+v", p)
			}
			if tt.status == http.StatusUnauthorized && r.header.Get("WWW-Authenticate") == "" {
				t.Error("401 without WWW-Authenticate")
			}
		})
	}

	t.Run("not a WebSocket handshake", func(t *testing.T) {
		mustProblem(t, e.do(http.MethodGet, "/api/v1/live", token, ""), http.StatusBadRequest, "")
	})
	t.Run("feed not enabled", func(t *testing.T) {
		off := newEnv(t, st)
		_, r, err := off.dialLive(nil, bearer(token))
		if !errors.Is(err, websocket.ErrBadHandshake) {
			t.Fatalf("dial: %v, want a refused handshake", err)
		}
		mustProblem(t, r, http.StatusServiceUnavailable, "")
	})
}

// liveMessage is either message of the feed.
type liveMessage struct {
	Type   string `json:"type"`
	Link   string `json:"link"`
	Bucket string `json:"bucket"`
	Count  int64  `json:"count"`
	Total  *int64 `json:"total"`
	At     string `json:"at"`
}

func mustReadLive(t *testing.T, conn *websocket.Conn) liveMessage {
	t.Helper()
	conn.SetReadDeadline(time.Now().Add(liveGuard))
	_, data, err := conn.ReadMessage()
	if err != nil {
		t.Fatalf("read feed: %v", err)
	}
	var m liveMessage
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatalf("feed message %s: %v", data, err)
	}
	return m
}

// TestLiveClicksPerTenant: a redirect's click reaches the feed of its own
// tenant, through the real counter, and never another tenant's.
func TestLiveClicksPerTenant(t *testing.T) {
	st := testdb.SQLite(t)
	tenantA, tokenA := mustTenantToken(t, st, "acme")
	tenantB, tokenB := mustTenantToken(t, st, "globex")
	hub := mustLiveHub(t)
	counter := mustLiveCounter(t, st, hub)
	e := newEnv(t, st, func(c *web.Config) { useHub(c, hub); useCounter(c, counter); c.Now = time.Now })
	linkA := mustStoreLink(t, st, linkforge.Link{TenantID: tenantA, Slug: "acme-launch", URL: "https://example.com/a"})
	linkB := mustStoreLink(t, st, linkforge.Link{TenantID: tenantB, Slug: "globex-sale", URL: "https://example.com/b"})

	connA, r, err := e.dialLive(nil, http.Header{"Authorization": {"Bearer " + tokenA}})
	if err != nil {
		t.Fatalf("dial A: %v (%s)", err, r)
	}
	connB, r, err := e.dialLive([]string{"linkforge.v1", "bearer." + tokenB}, http.Header{"Origin": {e.url}})
	if err != nil {
		t.Fatalf("dial B: %v (%s)", err, r)
	}

	// The handshake answers before the hub has registered the client, so
	// the first update is awaited by clicking until it comes.
	clicks := map[string]int64{}
	click := func(l linkforge.Link) {
		t.Helper()
		mustRedirect(t, e.do(http.MethodGet, "/"+l.Slug, "", ""), l.URL)
		clicks[l.Slug]++
	}
	firstUpdate := func(conn *websocket.Conn, l linkforge.Link) liveMessage {
		t.Helper()
		got := make(chan liveMessage, 1)
		go func() {
			conn.SetReadDeadline(time.Now().Add(liveGuard))
			_, data, err := conn.ReadMessage()
			var m liveMessage
			if err == nil {
				json.Unmarshal(data, &m) //nolint:errcheck // a body that does not decode leaves the zero value, which the assertions below refuse
			}
			got <- m
		}()
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		click(l)
		for {
			select {
			case m := <-got:
				return m
			case <-tick.C:
				click(l)
			}
		}
	}
	// B first, so that B is certainly registered while A is clicked.
	if m := firstUpdate(connB, linkB); m.Type != "clicks" || m.Link != linkB.Slug {
		t.Fatalf("tenant B's first message %+v, want clicks of %s", m, linkB.Slug)
	}
	m := firstUpdate(connA, linkA)
	if m.Type != "clicks" || m.Link != linkA.Slug || m.Count < 1 {
		t.Fatalf("tenant A's first message %+v, want clicks of %s", m, linkA.Slug)
	}
	if b, err := time.Parse(time.RFC3339, m.Bucket); err != nil || b.Second() != 0 {
		t.Errorf("bucket %q, want the start of a minute (%v)", m.Bucket, err)
	}
	click(linkA)
	click(linkB)
	// Each feed carries its own link until its all-time total has caught
	// up with every click: nothing of the other tenant's comes in between.
	for _, f := range []struct {
		conn *websocket.Conn
		link linkforge.Link
	}{{connA, linkA}, {connB, linkB}} {
		for {
			m := mustReadLive(t, f.conn)
			if m.Link != f.link.Slug {
				t.Fatalf("the feed of %s's tenant carried %+v", f.link.Slug, m)
			}
			if m.Total != nil && *m.Total == clicks[f.link.Slug] {
				break
			}
			if m.Total != nil && *m.Total > clicks[f.link.Slug] {
				t.Fatalf("total %d of %s after %d clicks", *m.Total, f.link.Slug, clicks[f.link.Slug])
			}
		}
	}
}

// mustLiveCounter starts a real LinkCounter on st that publishes to sub.
func mustLiveCounter(t *testing.T, st linkforge.Store, sub linkcounter.Subscriber) *linkcounter.Counter {
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
	c, err := linkcounter.New(ctx, linkcounter.Config{Store: cs, Journal: j, Subscriber: sub, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatalf("linkcounter.New: %v", err)
	}
	if err := c.Start(ctx); err != nil {
		t.Fatalf("start counter: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), liveGuard)
		defer cancel()
		if err := c.Stop(ctx); err != nil {
			t.Errorf("stop counter: %v", err)
		}
	})
	return c
}

// TestDashboardAssets: the pages and their files, each with its type, a
// validator that answers 304, and the page's policy admitting its own
// script, style sheet and origin only.
func TestDashboardAssets(t *testing.T) {
	e := newEnv(t, testdb.SQLite(t))
	tests := []struct {
		path, contentType, contains string
	}{
		{"/dashboard", "text/html; charset=utf-8", `<script src="/static/dashboard.js" defer></script>`},
		{"/static/dashboard.js", "text/javascript; charset=utf-8", `new WebSocket(auth.liveURL(state.token), auth.liveProtocols(state.token))`},
		{"/static/session.js", "text/javascript; charset=utf-8", `['linkforge.v1', 'bearer.' + cred]`},
		{"/dashboard/people", "text/html; charset=utf-8", `<script src="/static/people.js" defer></script>`},
		{"/static/people.js", "text/javascript; charset=utf-8", `'/api/v1/tokens'`},
		{"/static/people.css", "text/css; charset=utf-8", "@media (max-width: 560px)"},
		{"/static/dashboard.css", "text/css; charset=utf-8", "@media (max-width: 560px)"},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			r := e.do(http.MethodGet, tt.path, "", "")
			mustStatus(t, r, http.StatusOK)
			if ct := r.header.Get("Content-Type"); ct != tt.contentType {
				t.Errorf("Content-Type = %q, want %q", ct, tt.contentType)
			}
			if !strings.Contains(string(r.body), tt.contains) {
				t.Errorf("body lacks %q", tt.contains)
			}
			if r.header.Get("X-Content-Type-Options") != "nosniff" {
				t.Error("no X-Content-Type-Options: nosniff")
			}
			etag := r.header.Get("ETag")
			if etag == "" || r.header.Get("Cache-Control") != "no-cache" {
				t.Fatalf("ETag %q, Cache-Control %q: want a validator and no-cache", etag, r.header.Get("Cache-Control"))
			}
			req, _ := http.NewRequest(http.MethodGet, e.url+tt.path, nil)
			req.Header.Set("If-None-Match", etag)
			if r := e.send(req); r.status != http.StatusNotModified || len(r.body) != 0 {
				t.Errorf("revalidation = %d with %d bytes, want 304 and no body", r.status, len(r.body))
			}
		})
	}

	csp := e.do(http.MethodGet, "/dashboard", "", "").header.Get("Content-Security-Policy")
	for _, want := range []string{"default-src 'none'", "script-src 'self'", "style-src 'self'", "connect-src 'self'", "frame-ancestors 'none'"} {
		if !strings.Contains(csp, want) {
			t.Errorf("dashboard CSP %q lacks %q", csp, want)
		}
	}
	if strings.Contains(csp, "unsafe-inline") {
		t.Errorf("dashboard CSP %q admits inline code", csp)
	}
}
