package web_test

import (
	"html"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/internal/testdb"
	"github.com/linkforge/linkforge/web"
)

// postPassword posts the password form of slug.
func (e *env) postPassword(slug, pw, userAgent string) response {
	e.t.Helper()
	req, err := http.NewRequest(http.MethodPost, e.url+"/"+slug, strings.NewReader(url.Values{"password": {pw}}.Encode()))
	if err != nil {
		e.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if userAgent != "" {
		req.Header.Set("User-Agent", userAgent)
	}
	return e.send(req)
}

// getUnlocked sends GET path (with its query) with the unlock cookie of
// post, a right password's answer, as the browser following its 303 does.
func (e *env) getUnlocked(post response, path, userAgent string) response {
	e.t.Helper()
	req, err := http.NewRequest(http.MethodGet, e.url+path, nil)
	if err != nil {
		e.t.Fatal(err)
	}
	for _, c := range (&http.Response{Header: post.header}).Cookies() {
		req.AddCookie(&http.Cookie{Name: c.Name, Value: c.Value}) //nolint:gosec // G124: a request's cookie carries no attributes
	}
	if userAgent != "" {
		req.Header.Set("User-Agent", userAgent)
	}
	return e.send(req)
}

// unlock posts the right password pw of slug, checks the 303 to the same
// path with the unlock cookie, and follows it as a browser does: the
// GET's answer.
func (e *env) unlock(slug, pw, userAgent string) response {
	e.t.Helper()
	post := e.postPassword(slug, pw, userAgent)
	mustUnlockCookie(e.t, post, "/"+slug)
	return e.getUnlocked(post, "/"+slug, userAgent)
}

// unlockCookie returns the unlock cookie r sets, nil if none.
func unlockCookie(r response) *http.Cookie {
	for _, c := range (&http.Response{Header: r.header}).Cookies() {
		if c.Name == "linkforge_unlock" {
			return c
		}
	}
	return nil
}

// mustUnlockCookie fails unless r is the right password's answer: 303 to
// location (same origin), counting nothing, naming no target, with an
// unlock cookie scoped to the link's path.
func mustUnlockCookie(t *testing.T, r response, location string) {
	t.Helper()
	mustStatus(t, r, http.StatusSeeOther)
	if got := r.header.Get("Location"); got != location {
		t.Errorf("303 Location = %q, want %q", got, location)
	}
	if got := r.header.Get("Cache-Control"); got != "no-store" {
		t.Errorf("303 Cache-Control = %q, want no-store", got)
	}
	c := unlockCookie(r)
	if c == nil {
		t.Fatalf("303 without the unlock cookie: %v", r.header)
	}
	path, _, _ := strings.Cut(location, "?")
	if c.Path != path || !c.HttpOnly || c.SameSite != http.SameSiteLaxMode || c.MaxAge != 600 || c.Secure || c.Value == "" {
		t.Errorf("unlock cookie %+v, want Path=%s HttpOnly SameSite=Lax Max-Age=600, not Secure over plain HTTP", c, path)
	}
}

// mustContinue fails unless r is the page that sends the browser on to
// location (a meta refresh: a redirect would fall under the form's
// form-action), deleting the unlock cookie.
func mustContinue(t *testing.T, r response, location string) {
	t.Helper()
	mustHTML(t, r, http.StatusOK)
	want := `<meta http-equiv="refresh" content="0; url=` + html.EscapeString(location) + `">`
	if !strings.Contains(string(r.body), want) {
		t.Errorf("not the page continuing to %s: %s", location, r.body)
	}
	if got := r.header.Get("Cache-Control"); got != "no-store" {
		t.Errorf("Cache-Control = %q, want no-store", got)
	}
	if c := unlockCookie(r); c == nil || c.MaxAge >= 0 {
		t.Errorf("the unlock cookie is not deleted: %v", r.header)
	}
}

// mustNoTarget fails if r names any of targets in its body or headers.
func mustNoTarget(t *testing.T, r response, targets ...string) {
	t.Helper()
	for _, target := range targets {
		if strings.Contains(string(r.body), target) {
			t.Errorf("%s answer's body names the target %q", r.method, target)
		}
		for k, vs := range r.header {
			for _, v := range vs {
				if strings.Contains(v, target) || strings.Contains(v, strings.TrimPrefix(target, "https://")) {
					t.Errorf("%s answer's header %s: %q names the target", r.method, k, v)
				}
			}
		}
	}
}

// TestPasswordFlow: a protected link answers the form (not counted, no
// target anywhere), a wrong password 401 with the form, the right one 303
// to itself with the unlock cookie, whose GET is counted once (in the
// journal before the answer) and sends the browser on to the target, and
// the 11th failure within a sliding minute 429, a right password included;
// HEAD and link previews see nothing.
func TestPasswordFlow(t *testing.T) {
	testdb.Each(t, func(t *testing.T, s linkforge.Store) {
		t.Parallel()
		counter := mustCounter(t, s)
		reg := prometheus.NewRegistry()
		e := newEnv(t, s, func(c *web.Config) { useCounter(c, counter.Counter); c.Registry = reg })
		tenant, tok := mustTenantToken(t, s, "acme")
		const target = "https://example.com/secret-target"
		e.mustCreate(tok, `{"slug":"locked","url":"`+target+`","password":"open sesame",
			"device_urls":{"ios":"https://apps.example/ios-target"}}`)
		l := mustTenantLink(t, s, tenant, "locked")

		form := e.do(http.MethodGet, "/locked", "", "")
		mustHTML(t, form, http.StatusOK)
		if !strings.Contains(string(form.body), `<form method="post">`) || !strings.Contains(string(form.body), `name="password"`) {
			t.Errorf("GET is not the form: %s", form.body)
		}
		if csp := form.header.Get("Content-Security-Policy"); !strings.Contains(csp, "form-action 'self'") {
			t.Errorf("form CSP = %q, want form-action 'self'", csp)
		}
		if form.header.Get("Set-Cookie") != "" || form.header.Get("WWW-Authenticate") != "" {
			t.Errorf("form headers: %v", form.header)
		}
		head := e.do(http.MethodHead, "/locked", "", "")
		mustStatus(t, head, http.StatusOK)
		req, _ := http.NewRequest(http.MethodGet, e.url+"/locked", nil)
		req.Header.Set("User-Agent", "Slackbot-LinkExpanding 1.0 (+https://api.slack.com/robots)")
		preview := e.send(req)
		mustStatus(t, preview, http.StatusOK)
		for _, r := range []response{form, head, preview} {
			mustNoTarget(t, r, target, "https://apps.example/ios-target")
		}
		if n := counter.count(t, l.ID); n != 0 {
			t.Fatalf("after the form, HEAD and a preview: %d clicks, want 0", n)
		}

		// The answer to the plain GET of another (unprotected) link is
		// unchanged: the protected one's answers are its own.
		wrong := e.postPassword("locked", "guess", "")
		mustHTML(t, wrong, http.StatusUnauthorized)
		mustNoTarget(t, wrong, target)
		if !strings.Contains(string(wrong.body), "Wrong password") || !strings.Contains(string(wrong.body), `name="password"`) {
			t.Errorf("401 body is not the form with a message: %s", wrong.body)
		}
		// The right password: 303 to the same path with the unlock
		// cookie, counting nothing; its GET counts the click, once.
		right := e.postPassword("locked", "open sesame", "")
		mustUnlockCookie(t, right, "/locked")
		mustNoTarget(t, right, target)
		if n := counter.count(t, l.ID); n != 0 {
			t.Fatalf("after the right password's post: %d clicks, want 0", n)
		}
		mustContinue(t, e.getUnlocked(right, "/locked", ""), target)
		if n := counter.count(t, l.ID); n != 1 {
			t.Fatalf("after the right password and its GET: %d clicks, want 1", n)
		}
		// The device URL rule holds behind the password too.
		mustContinue(t, e.unlock("locked", "open sesame", iPhoneUA), "https://apps.example/ios-target")

		// 1 failure so far; 9 more fill the minute, the right password
		// does not reset them, and the 11th post is refused, right or not.
		for i := 2; i <= 10; i++ {
			mustHTML(t, e.postPassword("locked", "guess", ""), http.StatusUnauthorized)
			if i == 5 {
				mustContinue(t, e.unlock("locked", "open sesame", ""), target)
			}
		}
		for _, pw := range []string{"guess", "open sesame"} {
			r := e.postPassword("locked", pw, "")
			mustHTML(t, r, http.StatusTooManyRequests)
			mustNoTarget(t, r, target)
			if c := unlockCookie(r); c != nil {
				t.Errorf("429 sets the unlock cookie: %+v", c)
			}
			if ra := r.header.Get("Retry-After"); ra == "" || ra == "0" {
				t.Errorf("429 Retry-After = %q", ra)
			}
		}
		if n := counter.count(t, l.ID); n != 3 {
			t.Fatalf("after 3 right passwords: %d clicks, want 3", n)
		}
		for result, want := range map[string]float64{"right": 3, "wrong": 10, "limited": 2} {
			if got := attempts(t, reg, result); got != want {
				t.Errorf("linkforge_password_attempts_total{result=%q} = %v, want %v", result, got, want)
			}
		}
		// The window slides: once the first failure is a minute old, one
		// more post is taken.
		e.clock.Add(61 * time.Second)
		mustContinue(t, e.unlock("locked", "open sesame", ""), target)

		// A protected one-time link: after its click, the form is not
		// shown any more, and the password leads nowhere.
		e.mustCreate(tok, `{"slug":"once","url":"`+target+`","password":"pw","max_clicks":1}`)
		mustHTML(t, e.do(http.MethodGet, "/once", "", ""), http.StatusOK)
		mustContinue(t, e.unlock("once", "pw", ""), target)
		mustHTML(t, e.do(http.MethodGet, "/once", "", ""), http.StatusGone)
		mustHTML(t, e.do(http.MethodHead, "/once", "", ""), http.StatusGone)
		gone := e.postPassword("once", "pw", "")
		mustHTML(t, gone, http.StatusGone)
		mustNoTarget(t, gone, target)

		// PATCH password null: the link is a plain redirect again.
		mustStatus(t, e.do(http.MethodPatch, "/api/v1/links/locked", tok, `{"password":null}`), http.StatusOK)
		mustRedirect(t, e.do(http.MethodGet, "/locked", "", ""), target)
	})
}

// attempts reads linkforge_password_attempts_total{result}.
func attempts(t *testing.T, reg *prometheus.Registry, result string) float64 {
	t.Helper()
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() != "linkforge_password_attempts_total" {
			continue
		}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "result" && l.GetValue() == result {
					return m.GetCounter().GetValue()
				}
			}
		}
	}
	return 0
}

// TestPasswordFormBadInput: posts that are not a form of the right size are
// problems, cost no guess, and count nothing.
func TestPasswordFormBadInput(t *testing.T) {
	testdb.Each(t, func(t *testing.T, s linkforge.Store) {
		t.Parallel()
		counter := mustCounter(t, s)
		e := newEnv(t, s, func(c *web.Config) { useCounter(c, counter.Counter) })
		tenant, tok := mustTenantToken(t, s, "acme")
		e.mustCreate(tok, `{"slug":"locked","url":"https://example.com/t","password":"pw"}`)
		e.mustCreate(tok, `{"slug":"open","url":"https://example.com/o"}`)
		l := mustTenantLink(t, s, tenant, "locked")
		tests := []struct {
			name, path, contentType, body string
			status                        int
		}{
			{"json body", "/locked", "application/json", `{"password":"pw"}`, http.StatusUnsupportedMediaType},
			{"no content type", "/locked", "", "password=pw", http.StatusUnsupportedMediaType},
			{"multipart", "/locked", "multipart/form-data; boundary=x", "--x--", http.StatusUnsupportedMediaType},
			{"too large", "/locked", "application/x-www-form-urlencoded", "password=" + strings.Repeat("a", 5000), http.StatusRequestEntityTooLarge},
			{"unprotected link", "/open", "application/x-www-form-urlencoded", "password=pw", http.StatusMethodNotAllowed},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				req, _ := http.NewRequest(http.MethodPost, e.url+tt.path, strings.NewReader(tt.body))
				if tt.contentType != "" {
					req.Header.Set("Content-Type", tt.contentType)
				}
				r := e.send(req)
				mustProblem(t, r, tt.status, "")
				mustNoTarget(t, r, "https://example.com/t", "https://example.com/o")
			})
		}
		// None of them cost a guess: ten wrong ones are still 401.
		for range 10 {
			mustHTML(t, e.postPassword("locked", "nope", ""), http.StatusUnauthorized)
		}
		mustHTML(t, e.postPassword("locked", "nope", ""), http.StatusTooManyRequests)
		if n := counter.count(t, l.ID); n != 0 {
			t.Errorf("%d clicks, want 0", n)
		}
	})
}

// User agents of the device URL tests.
const (
	iPhoneUA  = "Mozilla/5.0 (iPhone; CPU iPhone OS 18_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.1 Mobile/15E148 Safari/604.1"
	iPadUA    = "Mozilla/5.0 (iPad; CPU OS 17_6 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.6 Mobile/15E148 Safari/604.1"
	androidUA = "Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Mobile Safari/537.36"
	desktopUA = "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36"
	botUA     = "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)"
	curlUA    = "curl/8.5.0"
)

// TestDeviceURLs: the device URL is chosen from the User-Agent as schema
// DeviceURLs says (iOS and iPadOS → ios, Android → android, desktop →
// desktop, else url), an unset key falls back to url, and a PATCH takes
// effect at once.
func TestDeviceURLs(t *testing.T) {
	testdb.Each(t, func(t *testing.T, s linkforge.Store) {
		t.Parallel()
		e := newEnv(t, s)
		_, tok := mustTenantToken(t, s, "acme")
		e.mustCreate(tok, `{"slug":"apps","url":"https://example.com/web",
			"device_urls":{"ios":"https://apps.apple.com/app/id1","android":"https://play.google.com/store/apps/details?id=x","desktop":"https://example.com/desktop"}}`)
		e.mustCreate(tok, `{"slug":"iosonly","url":"https://example.com/web","device_urls":{"ios":"https://apps.apple.com/app/id1"}}`)
		get := func(slug, ua string) response {
			req, _ := http.NewRequest(http.MethodGet, e.url+"/"+slug, nil)
			req.Header.Set("User-Agent", ua)
			return e.send(req)
		}
		tests := []struct {
			name, ua, apps, iosonly string
		}{
			{"iPhone", iPhoneUA, "https://apps.apple.com/app/id1", "https://apps.apple.com/app/id1"},
			{"iPad", iPadUA, "https://apps.apple.com/app/id1", "https://apps.apple.com/app/id1"},
			{"Android", androidUA, "https://play.google.com/store/apps/details?id=x", "https://example.com/web"},
			{"desktop", desktopUA, "https://example.com/desktop", "https://example.com/web"},
			{"bot", botUA, "https://example.com/web", "https://example.com/web"},
			{"curl", curlUA, "https://example.com/web", "https://example.com/web"},
			{"no agent", "", "https://example.com/web", "https://example.com/web"},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				mustRedirect(t, get("apps", tt.ua), tt.apps)
				mustRedirect(t, get("iosonly", tt.ua), tt.iosonly)
			})
		}
		mustStatus(t, e.do(http.MethodPatch, "/api/v1/links/apps", tok, `{"device_urls":{"android":"https://example.com/android2"}}`), http.StatusOK)
		mustRedirect(t, get("apps", androidUA), "https://example.com/android2")
		mustRedirect(t, get("apps", iPhoneUA), "https://example.com/web")
	})
}

// TestUnlockCookie: the unlock cookie opens its own link only, while its
// password is the link's and for ten minutes; a forged or altered one, a
// HEAD, or a preview opens nothing; the 303 keeps the query string; the
// cookie is Secure where the browser talks HTTPS.
func TestUnlockCookie(t *testing.T) {
	s := testdb.SQLite(t)
	counter := mustCounter(t, s)
	e := newEnv(t, s, func(c *web.Config) { useCounter(c, counter.Counter) })
	tenant, tok := mustTenantToken(t, s, "acme")
	const target = "https://example.com/t?a=1&b=2"
	e.mustCreate(tok, `{"slug":"locked","url":"`+target+`","password":"open sesame"}`)
	l := mustTenantLink(t, s, tenant, "locked")
	// A twin with the same stored hash (an import can make one): the
	// cookie names its link, not only its password.
	twin := mustStoreLink(t, s, linkforge.Link{TenantID: tenant, Slug: "twin", URL: "https://example.com/twin", PasswordHash: l.PasswordHash})

	post := e.postPassword("locked?utm_source=news&x=%20y", "open sesame", "")
	mustUnlockCookie(t, post, "/locked?utm_source=news&x=%20y")
	cookie := unlockCookie(post)
	withCookie := func(method, path, value, ua string) response {
		t.Helper()
		req, _ := http.NewRequest(method, e.url+path, nil)
		req.AddCookie(&http.Cookie{Name: "linkforge_unlock", Value: value}) //nolint:gosec // G124: a request's cookie carries no attributes
		if ua != "" {
			req.Header.Set("User-Agent", ua)
		}
		return e.send(req)
	}
	mustForm := func(r response) {
		t.Helper()
		mustHTML(t, r, http.StatusOK)
		if !strings.Contains(string(r.body), `name="password"`) {
			t.Errorf("not the form: %s", r.body)
		}
		mustNoTarget(t, r, target, "https://example.com/twin")
	}

	// HEAD is no click, cookie or not; a GET with the cookie is one,
	// whatever its agent says: someone typed the password.
	head := withCookie(http.MethodHead, "/locked", cookie.Value, "")
	mustHTML(t, head, http.StatusOK)
	mustNoTarget(t, head, target)
	mustContinue(t, withCookie(http.MethodGet, "/locked", cookie.Value, "Slackbot-LinkExpanding 1.0 (+https://api.slack.com/robots)"), target)
	mustForm(withCookie(http.MethodGet, "/twin", cookie.Value, ""))
	exp, mac, _ := strings.Cut(cookie.Value, ".")
	for name, forged := range map[string]string{
		"later expiry":  "9" + exp + "." + mac,
		"other MAC":     exp + "." + strings.Repeat("A", len(mac)),
		"no MAC":        exp,
		"empty":         "",
		"not a number":  "x." + mac,
		"MAC not b64":   exp + ".!!",
		"truncated MAC": exp + "." + mac[:len(mac)-2],
	} {
		t.Run(name, func(t *testing.T) { mustForm(withCookie(http.MethodGet, "/locked", forged, "")) })
	}
	if n := counter.count(t, l.ID) + counter.count(t, twin.ID); n != 1 {
		t.Fatalf("%d clicks, want 1 (the one valid GET)", n)
	}

	// Ten minutes: good until then, not at them.
	e.clock.Add(10*time.Minute - time.Second)
	mustContinue(t, withCookie(http.MethodGet, "/locked", cookie.Value, ""), target)
	e.clock.Add(time.Second)
	mustForm(withCookie(http.MethodGet, "/locked", cookie.Value, ""))

	// A new password (even the same one: a new salt) ends the old cookies.
	fresh := unlockCookie(e.postPassword("locked", "open sesame", ""))
	mustContinue(t, withCookie(http.MethodGet, "/locked", fresh.Value, ""), target)
	mustStatus(t, e.do(http.MethodPatch, "/api/v1/links/locked", tok, `{"password":"open sesame"}`), http.StatusOK)
	mustForm(withCookie(http.MethodGet, "/locked", fresh.Value, ""))
	if n := counter.count(t, l.ID); n != 3 {
		t.Errorf("%d clicks, want 3 (one per valid GET)", n)
	}

	// Secure where the browser talks HTTPS: the public URL's host behind
	// a TLS-terminating proxy.
	es := newEnv(t, s, func(c *web.Config) { c.PublicURL = mustURL(t, "https://lf.test") })
	req, _ := http.NewRequest(http.MethodPost, es.url+"/locked", strings.NewReader("password=open+sesame"))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Host = "lf.test"
	if c := unlockCookie(es.send(req)); c == nil || !c.Secure {
		t.Errorf("on the HTTPS public host: cookie %+v, want Secure", c)
	}
}
