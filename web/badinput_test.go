package web_test

import (
	"context"
	"io"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/internal/testdb"
)

// TestCreateBadInput: every bad input of the foundation issue answers a 400
// problem naming the field, and writes nothing.
func TestCreateBadInput(t *testing.T) {
	long := `"https://example.com/` + strings.Repeat("a", 4097-len("https://example.com/")) + `"`
	tests := []struct {
		name  string
		body  string
		field string
	}{
		// url
		{"url javascript", `{"url":"javascript:alert(1)"}`, "url"},
		{"url data", `{"url":"data:text/html,<b>x</b>"}`, "url"},
		{"url file", `{"url":"file:///etc/passwd"}`, "url"},
		{"url ftp", `{"url":"ftp://example.com/f"}`, "url"},
		{"url relative", `{"url":"/just/a/path"}`, "url"},
		{"url schemeless", `{"url":"example.com/x"}`, "url"},
		{"url protocol-relative", `{"url":"//evil.example/x"}`, "url"},
		{"url userinfo", `{"url":"https://bank.example@evil.example/"}`, "url"},
		{"url space", `{"url":"https://example.com/a b"}`, "url"},
		{"url CRLF", `{"url":"https://example.com/\r\nSet-Cookie: a=b"}`, "url"},
		{"url LF", `{"url":"https://example.com/\n"}`, "url"},
		{"url tab", `{"url":"https://example.com/\t"}`, "url"},
		{"url NUL", `{"url":"https://example.com/\u0000"}`, "url"},
		{"url DEL", `{"url":"https://example.com/\u007f"}`, "url"},
		{"url unicode space", `{"url":"https://example.com/\u2003"}`, "url"},
		{"url over 4096 bytes", `{"url":` + long + `}`, "url"},
		{"url self host", `{"url":"http://lf.test:8080/abc1234"}`, "url"},
		{"url self host uppercase", `{"url":"http://LF.TEST:8080/"}`, "url"},
		{"url empty", `{"url":""}`, "url"},
		{"url missing", `{"slug":"abc"}`, "url"},
		{"url null", `{"url":null}`, "url"},
		{"url wrong type", `{"url":42}`, "url"},
		// fallback_url
		{"fallback javascript", `{"url":"https://example.com","fallback_url":"javascript:alert(1)"}`, "fallback_url"},
		{"fallback userinfo", `{"url":"https://example.com","fallback_url":"https://a@b.example/"}`, "fallback_url"},
		{"fallback self host", `{"url":"https://example.com","fallback_url":"http://lf.test:8080/x"}`, "fallback_url"},
		{"fallback CRLF", `{"url":"https://example.com","fallback_url":"https://example.com/\r\n"}`, "fallback_url"},
		{"fallback wrong type", `{"url":"https://example.com","fallback_url":true}`, "fallback_url"},
		// slug
		{"slug with slash", `{"url":"https://example.com","slug":"a/b"}`, "slug"},
		{"slug with dot", `{"url":"https://example.com","slug":"a.b"}`, "slug"},
		{"slug with space", `{"url":"https://example.com","slug":"a b"}`, "slug"},
		{"slug unicode", `{"url":"https://example.com","slug":"café"}`, "slug"},
		{"slug empty", `{"url":"https://example.com","slug":""}`, "slug"},
		{"slug 65 chars", `{"url":"https://example.com","slug":"` + strings.Repeat("s", 65) + `"}`, "slug"},
		{"slug reserved api", `{"url":"https://example.com","slug":"api"}`, "slug"},
		{"slug reserved case-insensitive", `{"url":"https://example.com","slug":"DashBoard"}`, "slug"},
		{"slug reserved healthz", `{"url":"https://example.com","slug":"healthz"}`, "slug"},
		{"slug reserved metrics", `{"url":"https://example.com","slug":"metrics"}`, "slug"},
		{"slug wrong type", `{"url":"https://example.com","slug":7}`, "slug"},
		// max_clicks
		{"max_clicks negative", `{"url":"https://example.com","max_clicks":-1}`, "max_clicks"},
		{"max_clicks fraction", `{"url":"https://example.com","max_clicks":1.5}`, "max_clicks"},
		{"max_clicks string", `{"url":"https://example.com","max_clicks":"5"}`, "max_clicks"},
		{"max_clicks overflow", `{"url":"https://example.com","max_clicks":99999999999999999999}`, "max_clicks"},
		// expires_at
		{"expires_at unparseable", `{"url":"https://example.com","expires_at":"tomorrow"}`, "expires_at"},
		{"expires_at date only", `{"url":"https://example.com","expires_at":"2026-12-01"}`, "expires_at"},
		{"expires_at no zone", `{"url":"https://example.com","expires_at":"2026-12-01T00:00:00"}`, "expires_at"},
		{"expires_at number", `{"url":"https://example.com","expires_at":1764547200}`, "expires_at"},
		// tags
		{"tags string", `{"url":"https://example.com","tags":"launch"}`, "tags"},
		{"tags element number", `{"url":"https://example.com","tags":["a",1]}`, "tags"},
		{"tags empty tag", `{"url":"https://example.com","tags":[""]}`, "tags"},
		{"tags too many", `{"url":"https://example.com","tags":["1","2","3","4","5","6","7","8","9","10","11","12","13","14","15","16","17","18","19","20","21"]}`, "tags"},
		{"tags too long", `{"url":"https://example.com","tags":["` + strings.Repeat("t", 65) + `"]}`, "tags"},
		{"tags control char", `{"url":"https://example.com","tags":["a\nb"]}`, "tags"},
		// title
		{"title too long", `{"url":"https://example.com","title":"` + strings.Repeat("é", 201) + `"}`, "title"},
		{"title newline", `{"url":"https://example.com","title":"a\nb"}`, "title"},
		{"title NUL", `{"url":"https://example.com","title":"a\u0000"}`, "title"},
		{"title bidi override", `{"url":"https://example.com","title":"abc\u202Egnp.exe"}`, "title"},
		{"title wrong type", `{"url":"https://example.com","title":5}`, "title"},
		// password
		{"password empty", `{"url":"https://example.com","password":""}`, "password"},
		{"password too long", `{"url":"https://example.com","password":"` + strings.Repeat("p", 201) + `"}`, "password"},
		{"password control char", `{"url":"https://example.com","password":"a\nb"}`, "password"},
		{"password wrong type", `{"url":"https://example.com","password":1234}`, "password"},
		// device_urls
		{"device_urls string", `{"url":"https://example.com","device_urls":"https://example.com"}`, "device_urls"},
		{"device_urls array", `{"url":"https://example.com","device_urls":["https://example.com"]}`, "device_urls"},
		{"device_urls unknown key", `{"url":"https://example.com","device_urls":{"windows":"https://example.com"}}`, "device_urls.windows"},
		{"device_urls ios javascript", `{"url":"https://example.com","device_urls":{"ios":"javascript:alert(1)"}}`, "device_urls.ios"},
		{"device_urls android relative", `{"url":"https://example.com","device_urls":{"android":"/x"}}`, "device_urls.android"},
		{"device_urls desktop self host", `{"url":"https://example.com","device_urls":{"desktop":"http://lf.test:8080/x"}}`, "device_urls.desktop"},
		{"device_urls ios userinfo", `{"url":"https://example.com","device_urls":{"ios":"https://a@b.example/"}}`, "device_urls.ios"},
		{"device_urls ios CRLF", `{"url":"https://example.com","device_urls":{"ios":"https://example.com/\r\n"}}`, "device_urls.ios"},
		{"device_urls ios number", `{"url":"https://example.com","device_urls":{"ios":1}}`, "device_urls.ios"},
		// the JSON itself
		{"read-only password_protected", `{"url":"https://example.com","password_protected":true}`, "password_protected"},
		{"read-only imported_clicks", `{"url":"https://example.com","imported_clicks":5}`, "imported_clicks"},
		{"unknown field", `{"url":"https://example.com","owner":"me"}`, "owner"},
		{"field name case", `{"URL":"https://example.com"}`, "URL"},
		{"read-only field", `{"url":"https://example.com","clicks":5}`, "clicks"},
		{"duplicate field", `{"url":"https://example.com","url":"https://example.org"}`, "url"},
		{"malformed JSON", `{"url":"https://example.com"`, "body"},
		{"malformed JSON syntax", `{"url" "https://example.com"}`, "body"},
		{"single quotes", `{'url':'https://example.com'}`, "body"},
		{"array", `[{"url":"https://example.com"}]`, "body"},
		{"string", `"https://example.com"`, "body"},
		{"null", `null`, "body"},
		{"number", `42`, "body"},
		{"trailing garbage", `{"url":"https://example.com"} x`, "body"},
		{"two objects", `{"url":"https://example.com"}{"url":"https://example.org"}`, "body"},
		{"empty body", ``, "body"},
		{"whitespace body", "  \n", "body"},
	}
	testdb.Each(t, func(t *testing.T, s linkforge.Store) {
		t.Parallel()
		e := newEnv(t, s)
		tenant, tok := mustTenantToken(t, s, "acme")
		mustStoreLink(t, s, linkforge.Link{TenantID: tenant, Slug: "existing", URL: "https://example.com/e"})
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				req, err := http.NewRequest(http.MethodPost, e.url+"/api/v1/links", strings.NewReader(tt.body))
				if err != nil {
					t.Fatal(err)
				}
				req.Header.Set("Authorization", "Bearer "+tok)
				r := e.send(req)
				mustProblem(t, r, http.StatusBadRequest, tt.field)
				if got := mustTenantLinks(t, s, tenant); len(got) != 1 || got[0].Slug != "existing" {
					t.Errorf("the tenant's links changed: %v", got)
				}
			})
		}
	})
}

// TestPatchBadInput: a bad PATCH answers 400 naming the field and leaves
// the link exactly as it was.
func TestPatchBadInput(t *testing.T) {
	tests := []struct {
		name  string
		body  string
		field string
	}{
		{"url javascript", `{"url":"javascript:alert(1)"}`, "url"},
		{"url relative", `{"url":"/x"}`, "url"},
		{"url userinfo", `{"url":"https://bank.example@evil.example/"}`, "url"},
		{"url CRLF", `{"url":"https://example.com/\r\n"}`, "url"},
		{"url self host", `{"url":"http://lf.test:8080/p"}`, "url"},
		{"url null", `{"url":null}`, "url"},
		{"url wrong type", `{"url":["https://example.com"]}`, "url"},
		{"fallback ftp", `{"fallback_url":"ftp://example.com"}`, "fallback_url"},
		{"fallback self host", `{"fallback_url":"http://lf.test:8080/p"}`, "fallback_url"},
		{"max_clicks negative", `{"max_clicks":-5}`, "max_clicks"},
		{"max_clicks string", `{"max_clicks":"5"}`, "max_clicks"},
		{"expires_at unparseable", `{"expires_at":"next week"}`, "expires_at"},
		{"expires_at number", `{"expires_at":0}`, "expires_at"},
		{"tags too many", `{"tags":["1","2","3","4","5","6","7","8","9","10","11","12","13","14","15","16","17","18","19","20","21"]}`, "tags"},
		{"tags object", `{"tags":{"a":1}}`, "tags"},
		{"title too long", `{"title":"` + strings.Repeat("t", 201) + `"}`, "title"},
		{"title tab", `{"title":"a\tb"}`, "title"},
		{"password empty", `{"password":""}`, "password"},
		{"password too long", `{"password":"` + strings.Repeat("p", 201) + `"}`, "password"},
		{"password object", `{"password":{}}`, "password"},
		{"device_urls unknown key", `{"device_urls":{"tv":"https://example.com"}}`, "device_urls.tv"},
		{"device_urls ios ftp", `{"device_urls":{"ios":"ftp://example.com"}}`, "device_urls.ios"},
		{"device_urls desktop self host", `{"device_urls":{"desktop":"http://lf.test:8080/p"}}`, "device_urls.desktop"},
		{"device_urls number", `{"device_urls":3}`, "device_urls"},
		{"password_protected read-only", `{"password_protected":false}`, "password_protected"},
		{"imported_clicks read-only", `{"imported_clicks":0}`, "imported_clicks"},
		{"slug only alone", `{"slug":"other","title":"x"}`, "slug"},
		{"id cannot change", `{"id":"5"}`, "id"},
		{"unknown field", `{"colour":"red"}`, "colour"},
		{"one good one bad", `{"tags":["fine"],"url":"javascript:x"}`, "url"},
		{"array", `[]`, "body"},
		{"malformed", `{"tags":`, "body"},
		{"trailing garbage", `{"tags":[]}]`, "body"},
		{"empty body", ``, "body"},
	}
	testdb.Each(t, func(t *testing.T, s linkforge.Store) {
		t.Parallel()
		e := newEnv(t, s)
		tenant, tok := mustTenantToken(t, s, "acme")
		mustStoreLink(t, s, linkforge.Link{TenantID: tenant, Slug: "target", URL: "https://example.com/t",
			ExpiresAt: ptr(time.Date(2099, 1, 1, 0, 0, 0, 0, time.UTC)), MaxClicks: ptr(int64(9)),
			FallbackURL: "https://example.com/f", Tags: []string{"keep"},
			Title: "Keep", DeviceURLs: linkforge.DeviceURLs{IOS: "https://example.com/ios"}})
		before := mustTenantLink(t, s, tenant, "target")
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				r := e.do(http.MethodPatch, "/api/v1/links/target", tok, tt.body)
				mustProblem(t, r, http.StatusBadRequest, tt.field)
				if after := mustTenantLink(t, s, tenant, "target"); !reflect.DeepEqual(after, before) {
					t.Errorf("link changed:\n got %+v\nwant %+v", after, before)
				}
			})
		}
		mustRedirect(t, e.do(http.MethodGet, "/target", "", ""), "https://example.com/t")
	})
}

func TestAuthentication(t *testing.T) {
	testdb.Each(t, func(t *testing.T, s linkforge.Store) {
		t.Parallel()
		e := newEnv(t, s)
		tenant, tok := mustTenantToken(t, s, "acme")
		_, revoked := mustTenantToken(t, s, "acme")
		toks, err := s.ListTokens(context.Background(), tenant)
		if err != nil || len(toks) != 2 {
			t.Fatalf("ListTokens = %v, %v", toks, err)
		}
		if err := s.RevokeToken(context.Background(), toks[1].ID); err != nil {
			t.Fatal(err)
		}
		unknown, _, _ := linkforge.NewToken()

		tests := []struct {
			name          string
			authorization string // "" : no header
			errorParam    string // error= of WWW-Authenticate, "" : none
		}{
			{"missing", "", ""},
			{"empty bearer", "Bearer ", "invalid_token"},
			{"basic scheme", "Basic dXNlcjpwYXNz", "invalid_request"},
			{"token without scheme", tok, "invalid_request"},
			{"garbage", "Bearer garbage", "invalid_token"},
			{"wrong prefix", "Bearer xx_" + tok[3:], "invalid_token"},
			{"too short", "Bearer " + tok[:len(tok)-1], "invalid_token"},
			{"not base64", "Bearer lf_" + strings.Repeat("!", 43), "invalid_token"},
			{"unknown", "Bearer " + unknown, "invalid_token"},
			{"revoked", "Bearer " + revoked, "invalid_token"},
		}
		routes := []struct{ method, path, body string }{
			{http.MethodPost, "/api/v1/links", `{"url":"https://example.com"}`},
			{http.MethodGet, "/api/v1/links", ""},
			{http.MethodGet, "/api/v1/links/x", ""},
			{http.MethodPatch, "/api/v1/links/x", `{"tags":[]}`},
			{http.MethodDelete, "/api/v1/links/x", ""},
			{http.MethodGet, "/api/v1/links/x/stats", ""},
			{http.MethodGet, "/api/v1/stats", ""},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				for _, rt := range routes {
					var body io.Reader
					if rt.body != "" {
						body = strings.NewReader(rt.body)
					}
					req, _ := http.NewRequest(rt.method, e.url+rt.path, body)
					if tt.authorization != "" {
						req.Header.Set("Authorization", tt.authorization)
					}
					r := e.send(req)
					mustProblem(t, r, http.StatusUnauthorized, "")
					wa := r.header.Get("WWW-Authenticate")
					if !strings.HasPrefix(wa, "Bearer ") || (tt.errorParam != "" && !strings.Contains(wa, `error="`+tt.errorParam+`"`)) {
						t.Errorf("%s %s: WWW-Authenticate = %q, want Bearer with error %q", rt.method, rt.path, wa, tt.errorParam)
					}
				}
				if got := mustTenantLinks(t, s, tenant); len(got) != 0 {
					t.Errorf("links were written: %v", got)
				}
			})
		}
		// The scheme is case-insensitive (RFC 9110) and the good token works.
		req, _ := http.NewRequest(http.MethodGet, e.url+"/api/v1/links", nil)
		req.Header.Set("Authorization", "bearer "+tok)
		mustStatus(t, e.send(req), http.StatusOK)
	})
}

func TestDuplicateSlug(t *testing.T) {
	testdb.Each(t, func(t *testing.T, s linkforge.Store) {
		t.Parallel()
		e := newEnv(t, s)
		tenant, tok := mustTenantToken(t, s, "acme")
		other, otherTok := mustTenantToken(t, s, "other")
		e.mustCreate(tok, `{"slug":"taken","url":"https://example.com/1"}`)

		// Taken by the same tenant, and by another one: slugs are global.
		for _, tk := range []string{tok, otherTok} {
			p := mustProblem(t, e.do(http.MethodPost, "/api/v1/links", tk, `{"slug":"taken","url":"https://example.com/2"}`),
				http.StatusConflict, "slug")
			if p.Code != linkforge.EConflict {
				t.Errorf("code = %q", p.Code)
			}
		}
		if got := mustTenantLink(t, s, tenant, "taken"); got.URL != "https://example.com/1" {
			t.Errorf("url = %q, the first link changed", got.URL)
		}
		if n := len(mustTenantLinks(t, s, tenant)) + len(mustTenantLinks(t, s, other)); n != 1 {
			t.Errorf("%d links, want 1", n)
		}
	})
}

func TestBodyTooLarge(t *testing.T) {
	testdb.Each(t, func(t *testing.T, s linkforge.Store) {
		t.Parallel()
		e := newEnv(t, s)
		tenant, tok := mustTenantToken(t, s, "acme")
		mustStoreLink(t, s, linkforge.Link{TenantID: tenant, Slug: "big", URL: "https://example.com/b"})
		before := mustTenantLink(t, s, tenant, "big")
		huge := `{"url":"https://example.com/","tags":["` + strings.Repeat("x", 70<<10) + `"]}`
		// Exactly at the limit is accepted by the limit (and then judged on
		// its content).
		atLimit := `{"url":"https://example.com/","tags":[],"x":"` + strings.Repeat("y", 64<<10-len(`{"url":"https://example.com/","tags":[],"x":""}`)) + `"}`
		if len(atLimit) != 64<<10 {
			t.Fatalf("atLimit is %d bytes", len(atLimit))
		}

		tests := []struct {
			name    string
			method  string
			path    string
			body    string
			chunked bool // no Content-Length: the limit is met while reading
			status  int
		}{
			{"create with length", http.MethodPost, "/api/v1/links", huge, false, http.StatusRequestEntityTooLarge},
			{"create chunked", http.MethodPost, "/api/v1/links", huge, true, http.StatusRequestEntityTooLarge},
			{"patch with length", http.MethodPatch, "/api/v1/links/big", huge, false, http.StatusRequestEntityTooLarge},
			{"patch chunked", http.MethodPatch, "/api/v1/links/big", huge, true, http.StatusRequestEntityTooLarge},
			{"exactly 64 KiB", http.MethodPost, "/api/v1/links", atLimit, false, http.StatusBadRequest},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				var body io.Reader = strings.NewReader(tt.body)
				if tt.chunked {
					body = io.MultiReader(body) // hides the length from net/http
				}
				req, _ := http.NewRequest(tt.method, e.url+tt.path, body)
				req.Header.Set("Authorization", "Bearer "+tok)
				var r response
				if tt.status == http.StatusRequestEntityTooLarge {
					r = e.sendOversize(req, !tt.chunked)
				} else {
					r = e.send(req)
				}
				p := mustProblem(t, r, tt.status, "")
				if tt.status == http.StatusRequestEntityTooLarge && p.Code != linkforge.ETooLarge {
					t.Errorf("code = %q", p.Code)
				}
				links := mustTenantLinks(t, s, tenant)
				if len(links) != 1 || !reflect.DeepEqual(links[0], before) {
					t.Errorf("links changed: %+v", links)
				}
			})
		}
	})
}

func TestBadQueryParameters(t *testing.T) {
	testdb.Each(t, func(t *testing.T, s linkforge.Store) {
		t.Parallel()
		e := newEnv(t, s)
		tenant, tok := mustTenantToken(t, s, "acme")
		mustStoreLink(t, s, linkforge.Link{TenantID: tenant, Slug: "q", URL: "https://example.com/q"})
		tests := []struct {
			name  string
			path  string
			field string
		}{
			{"limit zero", "/api/v1/links?limit=0", "limit"},
			{"limit over 1000", "/api/v1/links?limit=1001", "limit"},
			{"limit negative", "/api/v1/links?limit=-3", "limit"},
			{"limit not a number", "/api/v1/links?limit=ten", "limit"},
			{"cursor garbage", "/api/v1/links?cursor=%21%21not-a-cursor", "cursor"},
			{"interval unknown", "/api/v1/stats?interval=week", "interval"},
			{"from unparseable", "/api/v1/stats?from=yesterday", "from"},
			{"to unparseable", "/api/v1/links/q/stats?to=2026-13-01T00:00:00Z", "to"},
			{"to before from", "/api/v1/stats?from=2026-11-30T10:00:00Z&to=2026-11-30T09:00:00Z", "to"},
			{"to equals from", "/api/v1/stats?from=2026-11-30T10:00:00Z&to=2026-11-30T10:00:00Z", "to"},
			{"too many minute buckets", "/api/v1/stats?from=2026-01-01T00:00:00Z&to=2026-02-01T00:00:00Z", "from"},
			{"too many day buckets", "/api/v1/links/q/stats?interval=day&from=0001-01-01T00:00:00Z&to=9999-01-01T00:00:00Z", "from"},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				mustProblem(t, e.do(http.MethodGet, tt.path, tok, ""), http.StatusBadRequest, tt.field)
			})
		}
		// 10,000 buckets is the limit, not past it.
		r := e.do(http.MethodGet, "/api/v1/stats?from=2026-01-01T00:00:00Z&to=2026-01-07T22:40:00Z", tok, "")
		mustStatus(t, r, http.StatusOK)
		if n := len(mustJSON[struct{ Buckets []any }](t, r).Buckets); n != 10000 {
			t.Errorf("%d buckets, want 10000", n)
		}
	})
}
