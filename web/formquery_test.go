package web_test

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/internal/testdb"
	"github.com/linkforge/linkforge/password"
	"github.com/linkforge/linkforge/people"
	"github.com/linkforge/linkforge/web"
)

// malformedQueries are query strings that net/url refuses to split (a bad
// percent escape, a ';' inside a pair) or that a shared link carries as
// it was typed: "…/pw1?discount=50%".
var malformedQueries = []string{
	"discount=50%", "d=50%", "a=1;b", "a=1;b=2&c=3", "%", "%%", "%zz", "%2", "a=%", "a%=1", "=%", ";", ";;",
	"a=1&b=%2", "x=%E0%A4%A", "%00=1", "&&==;;%%", "q=%GG", "a=b=c%", "%u0041=1", "a[]=1;", "next=http://x/%",
	"password=x%", "email=%", "utm_source=news;letter", "a=%ff%fe", "=", "&", "a", "%3B=%3",
}

// browserForm are the headers of a browser's post of this server's own
// form: the checks that refuse cross-site form posts admit it.
func (e *env) browserForm(path string, values url.Values, body ...string) response {
	e.t.Helper()
	raw := values.Encode()
	if len(body) > 0 {
		raw = body[0]
	}
	req, err := http.NewRequest(http.MethodPost, e.url+path, strings.NewReader(raw))
	if err != nil {
		e.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", e.url)
	req.Header.Set("Sec-Fetch-Site", "same-origin")
	return e.send(req)
}

// TestFormRoutesMalformedQuery: the form posts (a password link's unlock,
// /login, /invite/…, /reset/…, /logout) read their form from the body and
// never from the query string, so a malformed query is ignored: the right
// password unlocks "…/pw1?discount=50%", signs in, and sets a password;
// no malformed query answers a 5xx on any of them; a malformed form body
// is a 400 problem.
func TestFormRoutesMalformedQuery(t *testing.T) {
	s := testdb.SQLite(t)
	e := newEnv(t, s)
	ctx := t.Context()
	tenant, tok := mustRoleToken(t, s, "acme", linkforge.RoleOwner)
	e.mustCreate(tok, `{"slug":"pw1","url":"https://example.com/secret","password":"open sesame"}`)
	svc, err := people.New(people.Config{Store: s, Hasher: cheapHasher{}, PublicURL: publicURL})
	if err != nil {
		t.Fatal(err)
	}
	_, invite, _, err := svc.Invite(ctx, tenant, "ann@example.com", linkforge.RoleEditor)
	if err != nil {
		t.Fatal(err)
	}
	invitePath := strings.TrimPrefix(invite, publicURL)
	_, _, _, err = svc.Invite(ctx, tenant, "bob@example.com", linkforge.RoleEditor)
	if err != nil {
		t.Fatal(err)
	}
	reset, _, err := svc.ResetURL(ctx, "bob@example.com")
	if err != nil {
		t.Fatal(err)
	}
	resetPath := strings.TrimPrefix(reset, publicURL)

	// The right input works whatever the query.
	mustWork := func(r response, what string) {
		t.Helper()
		if r.status < 300 || r.status > 399 {
			t.Fatalf("%s: %s, want a redirect", what, r)
		}
	}
	mustWork(e.browserForm(invitePath+"?d=50%", url.Values{"password": {"correct horse battery"}}), "set the password with ?d=50%")
	mustWork(e.browserForm(resetPath+"?a=1;b", url.Values{"password": {"another horse battery"}}), "reset the password with ?a=1;b")
	for _, q := range malformedQueries {
		mustWork(e.browserForm("/pw1?"+q, url.Values{"password": {"open sesame"}}), "unlock /pw1?"+q)
		mustWork(e.browserForm("/login?"+q, url.Values{"email": {"ann@example.com"}, "password": {"correct horse battery"}}), "sign in at /login?"+q)
	}

	// Wrong or used input, with every malformed query: never a 5xx.
	routes := []struct {
		path   string
		values url.Values
	}{
		{"/pw1", url.Values{"password": {"wrong"}}},
		{"/login", url.Values{"email": {"bob@example.com"}, "password": {"correct horse battery"}}},
		{invitePath, url.Values{"password": {"correct horse battery"}}},
		{resetPath, url.Values{"password": {"correct horse battery"}}},
		{"/invite/unknown-ticket", url.Values{"password": {"correct horse battery"}}},
		{"/reset/unknown-ticket", url.Values{"password": {"correct horse battery"}}},
		{"/logout", nil},
	}
	for _, rt := range routes {
		for _, q := range malformedQueries {
			if r := e.browserForm(rt.path+"?"+q, rt.values); r.status >= 500 {
				t.Errorf("POST %s?%s: %s", rt.path, q, r)
			}
		}
	}

	// The forms' pages too.
	for _, path := range []string{"/pw1", "/login", invitePath, resetPath, "/invite/unknown-ticket"} {
		for _, q := range malformedQueries {
			for _, method := range []string{http.MethodGet, http.MethodHead} {
				if r := e.do(method, path+"?"+q, "", ""); r.status >= 500 {
					t.Errorf("%s %s?%s: %s", method, path, q, r)
				}
			}
		}
	}

	// A malformed form body is the client's fault: 400, nothing set.
	for _, rt := range routes[:len(routes)-1] {
		mustProblem(t, e.browserForm(rt.path, nil, "password=50%&email=ann@example.com"), http.StatusBadRequest, "body")
		mustProblem(t, e.browserForm(rt.path+"?d=50%", nil, "password=x;y"), http.StatusBadRequest, "body")
	}
	// Bob's password is still the one set above: past the guessing
	// limit's minute, it signs in.
	e.clock.Add(2 * time.Minute)
	mustWork(e.browserForm("/login", url.Values{"email": {"bob@example.com"}, "password": {"another horse battery"}}), "sign in as bob")
}

// FuzzFormQuery posts each form route with an arbitrary query string and
// body, as a browser of this server's own pages would: no answer is a 5xx.
// Seeds: malformedQueries.
func FuzzFormQuery(f *testing.F) {
	for _, q := range malformedQueries {
		f.Add(q, "password=open+sesame")
	}
	f.Add("", "password=50%")
	f.Add("a=1", "email=ann%40example.com&password=x;y")
	st := testdb.SQLite(f)
	pub, _ := url.Parse(publicURL)
	srv, err := web.New(web.Config{Store: st, PublicURL: pub, RateLimit: 1e6, RateBurst: 1e6, PasswordParams: testPasswordParams})
	if err != nil {
		f.Fatal(err)
	}
	tenant, err := st.EnsureTenant(f.Context(), "acme")
	if err != nil {
		f.Fatal(err)
	}
	hash, err := password.Hash("open sesame", testPasswordParams)
	if err != nil {
		f.Fatal(err)
	}
	if _, err := st.CreateLink(f.Context(), linkforge.Link{TenantID: tenant.ID, Slug: "pw1", URL: "https://example.com/secret", PasswordHash: hash}); err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, query, body string) {
		if strings.ContainsFunc(query, func(r rune) bool { return r <= ' ' || r == 0x7f || r == '#' }) {
			t.Skip("no client sends these bytes in a request line")
		}
		for _, path := range []string{"/pw1", "/login", "/invite/no-such-ticket", "/reset/no-such-ticket", "/logout"} {
			req := httptest.NewRequest(http.MethodPost, path, strings.NewReader(body))
			req.URL.RawQuery = query
			req.RequestURI = path + "?" + query
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			req.Header.Set("Origin", "http://example.com")
			req.Header.Set("Sec-Fetch-Site", "same-origin")
			w := httptest.NewRecorder()
			srv.ServeHTTP(w, req)
			if w.Code >= 500 {
				t.Fatalf("POST %s?%s with body %q: %d %s", path, query, body, w.Code, w.Body)
			}
		}
	})
}
