package web_test

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"golang.org/x/time/rate"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/internal/testdb"
	"github.com/linkforge/linkforge/web"
)

// TestHeadAnswersLikeGet: a load balancer or an uptime checker probing with
// HEAD gets what GET gets, without the body (issue 10, item 10).
func TestHeadAnswersLikeGet(t *testing.T) {
	e := newEnv(t, testdb.SQLite(t))
	for _, path := range []string{"/", "/healthz", "/readyz", "/metrics", "/dashboard",
		"/static/dashboard.js", "/static/dashboard.css", "/api/v1/openapi.json", "/favicon.ico"} {
		t.Run(path, func(t *testing.T) {
			get := e.do(http.MethodGet, path, "", "")
			head := e.do(http.MethodHead, path, "", "")
			if head.status != get.status || (get.status != http.StatusOK && get.status != http.StatusFound) {
				t.Fatalf("HEAD %d, GET %d", head.status, get.status)
			}
			if len(head.body) != 0 {
				t.Errorf("HEAD has a body of %d bytes", len(head.body))
			}
			for _, h := range []string{"Content-Type", "Location", "ETag", "Cache-Control"} {
				if head.header.Get(h) != get.header.Get(h) {
					t.Errorf("%s: HEAD %q, GET %q", h, head.header.Get(h), get.header.Get(h))
				}
			}
			// /metrics changes between the two requests (it counts them).
			if path != "/metrics" && get.status == http.StatusOK {
				if cl := head.header.Get("Content-Length"); cl != fmt.Sprint(len(get.body)) {
					t.Errorf("HEAD Content-Length %q, GET body %d bytes", cl, len(get.body))
				}
			}
		})
	}
}

// TestMethodNotAllowed: a method a path does not have answers 405, a
// problem, with Allow listing the methods it has (issue 10, item 10).
func TestMethodNotAllowed(t *testing.T) {
	st := testdb.SQLite(t)
	e := newEnv(t, st)
	_, tok := mustTenantToken(t, st, "acme")
	tests := []struct {
		method, path string
		allow        []string
	}{
		{http.MethodPut, "/api/v1/links", []string{"GET", "POST"}},
		{http.MethodDelete, "/api/v1/links", []string{"GET", "POST"}},
		{http.MethodPut, "/api/v1/links/x", []string{"GET", "PATCH", "DELETE"}},
		{http.MethodPost, "/api/v1/links/x/stats", []string{"GET"}},
		{http.MethodDelete, "/api/v1/stats", []string{"GET"}},
		{http.MethodPatch, "/api/v1/alarms", []string{"GET"}},
		{http.MethodGet, "/api/v1/alarms/3/retry", []string{"POST"}},
		{http.MethodPost, "/api/v1/openapi.json", []string{"GET", "HEAD"}},
		{http.MethodPost, "/healthz", []string{"GET", "HEAD"}},
		{http.MethodDelete, "/metrics", []string{"GET", "HEAD"}},
	}
	for _, tt := range tests {
		t.Run(tt.method+" "+tt.path, func(t *testing.T) {
			r := e.do(tt.method, tt.path, tok, "")
			p := mustProblem(t, r, http.StatusMethodNotAllowed, "")
			if p.Code != linkforge.EMethodNotAllowed {
				t.Errorf("code = %q", p.Code)
			}
			allow := r.header.Get("Allow")
			for _, m := range tt.allow {
				if !strings.Contains(allow, m) {
					t.Errorf("Allow = %q, lacks %s", allow, m)
				}
			}
			if strings.Contains(allow, tt.method) {
				t.Errorf("Allow = %q lists the refused %s", allow, tt.method)
			}
		})
	}
	// The admin API has no HEAD: 405 too, with the same Allow, no body.
	for path, allow := range map[string]string{"/api/v1/links": "POST, GET", "/api/v1/links/x": "GET, PATCH, DELETE", "/api/v1/alarms/1/retry": "POST"} {
		r := e.do(http.MethodHead, path, tok, "")
		if r.status != http.StatusMethodNotAllowed || r.header.Get("Allow") != allow || len(r.body) != 0 {
			t.Errorf("HEAD %s: %d, Allow %q, %d bytes; want 405, Allow %q, no body", path, r.status, r.header.Get("Allow"), len(r.body), allow)
		}
	}
}

// TestUnsupportedMediaType: a body whose Content-Type is not JSON is
// refused with 415 and changes nothing; JSON types with parameters or a
// +json suffix, and no Content-Type at all, are read (issue 10, item 11).
func TestUnsupportedMediaType(t *testing.T) {
	st := testdb.SQLite(t)
	e := newEnv(t, st)
	tenant, tok := mustTenantToken(t, st, "acme")
	mustStoreLink(t, st, linkforge.Link{TenantID: tenant, Slug: "ct", URL: "https://example.com/ct"})

	req := func(method, path, ct, body string) response {
		r, _ := http.NewRequest(method, e.url+path, strings.NewReader(body))
		r.Header.Set("Authorization", "Bearer "+tok)
		if ct != "" {
			r.Header.Set("Content-Type", ct)
		}
		return e.send(r)
	}
	for _, ct := range []string{"application/x-www-form-urlencoded", "text/plain", "multipart/form-data; boundary=x",
		"application/jsonx", "application/xml", "json", "application/json; charset"} {
		p := mustProblem(t, req(http.MethodPost, "/api/v1/links", ct, `{"url":"https://example.com/new","slug":"new"}`),
			http.StatusUnsupportedMediaType, "")
		if p.Code != linkforge.EUnsupportedMediaType {
			t.Errorf("%s: code = %q", ct, p.Code)
		}
		mustProblem(t, req(http.MethodPatch, "/api/v1/links/ct", ct, `{"url":"https://example.com/changed"}`),
			http.StatusUnsupportedMediaType, "")
	}
	if links := mustTenantLinks(t, st, tenant); len(links) != 1 || links[0].URL != "https://example.com/ct" {
		t.Fatalf("a refused body changed the links: %+v", links)
	}

	for i, ct := range []string{"application/json", "application/json; charset=utf-8", "Application/JSON", "application/vnd.api+json", ""} {
		r := req(http.MethodPost, "/api/v1/links", ct, fmt.Sprintf(`{"url":"https://example.com/%d"}`, i))
		mustStatus(t, r, http.StatusCreated)
	}
	mustStatus(t, req(http.MethodPatch, "/api/v1/links/ct", "application/merge-patch+json", `{"url":"https://example.com/changed"}`), http.StatusOK)
}

// TestFieldErrorsAreCapped: a body of thousands of bad members gets an
// answer of bounded size that lists 20 and counts the rest (issue 10,
// item 11).
func TestFieldErrorsAreCapped(t *testing.T) {
	st := testdb.SQLite(t)
	e := newEnv(t, st)
	tenant, tok := mustTenantToken(t, st, "acme")
	mustStoreLink(t, st, linkforge.Link{TenantID: tenant, Slug: "cap", URL: "https://example.com/cap"})

	for _, n := range []int{21, 5000} {
		var b strings.Builder
		b.WriteString(`{"url":"https://example.com"`)
		for i := range n {
			fmt.Fprintf(&b, `,"f%d":1`, i)
		}
		b.WriteString("}")
		body := b.String()
		for _, r := range []response{
			e.do(http.MethodPost, "/api/v1/links", tok, body),
			e.do(http.MethodPatch, "/api/v1/links/cap", tok, "{"+strings.TrimPrefix(body, `{"url":"https://example.com",`)),
		} {
			p := mustProblem(t, r, http.StatusBadRequest, "f0")
			if len(p.Errors) != 20 {
				t.Errorf("%d bad members: %d errors listed, want 20", n, len(p.Errors))
			}
			if !strings.Contains(p.Detail, fmt.Sprintf("and %d more", n-20)) {
				t.Errorf("%d bad members: detail %q does not say how many more", n, p.Detail)
			}
			// Bounded whatever the request's size: 20 errors of at most a
			// 64-byte name and a short detail each.
			if len(r.body) > 6<<10 {
				t.Errorf("%d bad members: answer of %d bytes", n, len(r.body))
			}
		}
	}
	// Up to 20, all are listed, and the detail names them as before.
	r := e.do(http.MethodPost, "/api/v1/links", tok, `{"url":"https://example.com","a":1,"b":2}`)
	if p := mustProblem(t, r, http.StatusBadRequest, "b"); len(p.Errors) != 2 || strings.Contains(p.Detail, "more") {
		t.Errorf("problem = %+v", p)
	}
	if links := mustTenantLinks(t, st, tenant); len(links) != 1 {
		t.Errorf("%d links, want 1", len(links))
	}
}

// TestUnknownQueryParameters: an admin API route refuses a query parameter
// it does not take, naming it (issue 10, first-run polish); the redirect
// path takes any (campaign parameters).
func TestUnknownQueryParameters(t *testing.T) {
	st := testdb.SQLite(t)
	e := newEnv(t, st)
	tenant, tok := mustTenantToken(t, st, "acme")
	mustStoreLink(t, st, linkforge.Link{TenantID: tenant, Slug: "qp", URL: "https://example.com/qp"})
	for _, tt := range []struct{ method, path, field string }{
		{http.MethodGet, "/api/v1/links?tags=launch", "tags"},
		{http.MethodGet, "/api/v1/links?limit=5&q=sale&region=x", "region"},
		{http.MethodGet, "/api/v1/tags?sort=tag", "sort"},
		{http.MethodPost, "/api/v1/bulk/links?atomic=1", "atomic"},
		{http.MethodGet, "/api/v1/links?Limit=5", "Limit"},
		{http.MethodGet, "/api/v1/links/qp?verbose=1", "verbose"},
		{http.MethodGet, "/api/v1/links/qp/stats?interval=hour&tz=UTC", "tz"},
		{http.MethodGet, "/api/v1/stats?link=qp", "link"},
		{http.MethodGet, "/api/v1/alarms?state=dead&sort=due", "sort"},
		{http.MethodDelete, "/api/v1/links/qp?force=1", "force"},
		{http.MethodPost, "/api/v1/alarms/1/retry?now=1", "now"},
		{http.MethodPost, "/api/v1/links?dry_run=1", "dry_run"},
	} {
		t.Run(tt.path, func(t *testing.T) {
			body := ""
			if tt.method == http.MethodPost && strings.HasPrefix(tt.path, "/api/v1/links") {
				body = `{"url":"https://example.com/x"}`
			}
			p := mustProblem(t, e.do(tt.method, tt.path, tok, body), http.StatusBadRequest, tt.field)
			if !strings.Contains(p.Errors[0].Detail, "unknown query parameter") {
				t.Errorf("detail = %q", p.Errors[0].Detail)
			}
		})
	}
	if links := mustTenantLinks(t, st, tenant); len(links) != 1 {
		t.Errorf("%d links after refused requests, want 1", len(links))
	}
	for _, path := range []string{"/api/v1/links?limit=5&cursor=", "/api/v1/links/qp/stats?interval=hour&from=2026-11-30T00:00:00Z&to=2026-11-30T02:00:00Z",
		"/api/v1/stats?interval=day", "/api/v1/alarms?state=dead&limit=3", "/api/v1/links/qp"} {
		mustStatus(t, e.do(http.MethodGet, path, tok, ""), http.StatusOK)
	}
	mustRedirect(t, e.do(http.MethodGet, "/qp?utm_source=news&anything=1", "", ""), "https://example.com/qp")
}

// rawRequest sends raw on a new connection to the test server and returns
// the status line and whether the server closed the connection after its
// answer, which it tells by asking a second request on it. The deadline
// only guards against a hang: a healthy server answers in milliseconds.
func rawRequest(t *testing.T, url, raw string) (status string, closed bool) {
	t.Helper()
	conn, err := net.Dial("tcp", strings.TrimPrefix(url, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.WriteString(conn, raw); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(conn)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatalf("no answer to %q: %v", strings.SplitN(raw, "\r\n", 2)[0], err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	// A closed connection answers the next request with EOF (or a reset).
	if _, err := io.WriteString(conn, "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"); err != nil {
		return resp.Status, true
	}
	next, err := http.ReadResponse(br, nil)
	if err != nil {
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			t.Fatalf("after %q: no answer and no close: %v", strings.SplitN(raw, "\r\n", 2)[0], err)
		}
		return resp.Status, true
	}
	next.Body.Close()
	return resp.Status, false
}

// TestRoutesWithoutBodyDoNotWaitForOne: a request that announces a body and
// never sends it is answered at once on routes that take none, and on the
// body routes when the answer does not need the body (no token, wrong
// Content-Type); the connection is then closed rather than drained (issue
// 10, item 5). The test server has no ReadTimeout: before the fix, these
// requests got no answer at all.
func TestRoutesWithoutBodyDoNotWaitForOne(t *testing.T) {
	st := testdb.SQLite(t)
	e := newEnv(t, st)
	tenant, tok := mustTenantToken(t, st, "acme")
	mustStoreLink(t, st, linkforge.Link{TenantID: tenant, Slug: "nb", URL: "https://example.com/nb"})
	auth := "Authorization: Bearer " + tok + "\r\n"
	for _, tt := range []struct{ name, raw, status string }{
		{"redirect", "GET /nb HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\n", "302 Found"},
		{"redirect chunked", "GET /nb HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n", "302 Found"},
		{"unknown slug", "HEAD /nope HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\n", "404 Not Found"},
		{"healthz", "GET /healthz HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\n", "200 OK"},
		{"api get", "GET /api/v1/links/nb HTTP/1.1\r\nHost: x\r\n" + auth + "Content-Length: 10\r\n\r\n", "200 OK"},
		{"api delete unknown", "DELETE /api/v1/links/zz HTTP/1.1\r\nHost: x\r\n" + auth + "Content-Length: 10\r\n\r\n", "404 Not Found"},
		{"post without token", "POST /api/v1/links HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n", "401 Unauthorized"},
		{"post wrong type", "POST /api/v1/links HTTP/1.1\r\nHost: x\r\n" + auth + "Content-Type: text/plain\r\nContent-Length: 100\r\n\r\n", "415 Unsupported Media Type"},
		{"method not allowed", "PUT /api/v1/links HTTP/1.1\r\nHost: x\r\n" + auth + "Content-Length: 100\r\n\r\n", "405 Method Not Allowed"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			status, closed := rawRequest(t, e.url, tt.raw)
			if status != tt.status {
				t.Errorf("status %q, want %q", status, tt.status)
			}
			if !closed {
				t.Error("the connection stays open, waiting for the announced body")
			}
		})
	}
	// A request without a body keeps its connection.
	if _, closed := rawRequest(t, e.url, "GET /nb HTTP/1.1\r\nHost: x\r\n\r\n"); closed {
		t.Error("a request without a body lost its keep-alive connection")
	}
}

// TestRootAndNotFoundURL: GET / redirects to the root URL (by default the
// dashboard); with a not-found URL, unknown slugs redirect there instead of
// the 404 page (issue 10, first-run polish).
func TestRootAndNotFoundURL(t *testing.T) {
	st := testdb.SQLite(t)
	tenant, _ := mustTenantToken(t, st, "acme")
	mustStoreLink(t, st, linkforge.Link{TenantID: tenant, Slug: "known", URL: "https://example.com/known"})

	plain := newEnv(t, st)
	mustRedirect(t, plain.do(http.MethodGet, "/", "", ""), "/dashboard")
	mustHTML(t, plain.do(http.MethodGet, "/unknown", "", ""), http.StatusNotFound)

	custom := newEnv(t, st, func(c *web.Config) {
		c.RootURL = "https://www.example.com/"
		c.NotFoundURL = "https://www.example.com/404"
	})
	mustRedirect(t, custom.do(http.MethodGet, "/", "", ""), "https://www.example.com/")
	mustRedirect(t, custom.do(http.MethodHead, "/", "", ""), "https://www.example.com/")
	for _, path := range []string{"/unknown", "/no.such.slug", "/a/b/c"} {
		mustRedirect(t, custom.do(http.MethodGet, path, "", ""), "https://www.example.com/404")
		mustRedirect(t, custom.do(http.MethodHead, path, "", ""), "https://www.example.com/404")
	}
	mustRedirect(t, custom.do(http.MethodGet, "/known", "", ""), "https://example.com/known")
	// API clients still get a problem.
	mustProblem(t, custom.do(http.MethodGet, "/api/v1/nothing", "", ""), http.StatusNotFound, "")
}

// TestFavicon: the icon is an ICO, revalidated by its ETag.
func TestFavicon(t *testing.T) {
	e := newEnv(t, testdb.SQLite(t))
	r := e.do(http.MethodGet, "/favicon.ico", "", "")
	mustStatus(t, r, http.StatusOK)
	if ct := r.header.Get("Content-Type"); ct != "image/x-icon" {
		t.Errorf("Content-Type = %q", ct)
	}
	if !bytes.HasPrefix(r.body, []byte{0, 0, 1, 0}) || len(r.body) < 100 {
		t.Errorf("body of %d bytes is not an ICO", len(r.body))
	}
	req, _ := http.NewRequest(http.MethodGet, e.url+"/favicon.ico", nil)
	req.Header.Set("If-None-Match", r.header.Get("ETag"))
	mustStatus(t, e.send(req), http.StatusNotModified)
}

// TestRateLimitDisabled: rate.Inf (--rate-limit 0) never answers 429.
func TestRateLimitDisabled(t *testing.T) {
	st := testdb.SQLite(t)
	e := newEnv(t, st, func(c *web.Config) { c.RateLimit, c.RateBurst = rate.Inf, 0 })
	_, tok := mustTenantToken(t, st, "acme")
	for i := range 200 {
		if r := e.do(http.MethodGet, "/api/v1/links", tok, ""); r.status != http.StatusOK {
			t.Fatalf("request %d: %s", i, r)
		}
	}
}
