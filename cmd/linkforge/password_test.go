package main

import (
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// TestPasswordEndToEnd: the password flow of a protected link through the
// real binary, with the default argon2id parameters: the form (not
// counted, no target), HEAD (no target), a wrong password 401, the right
// one 303 with the unlock cookie and its GET on to the target, the 11th failure in the minute 429 (a right password too), and
// exactly one click in the rollup once SIGTERM has flushed.
func TestPasswordEndToEnd(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		n := b.newNode(t)
		// No flush before the stop: the rollup is read after SIGTERM's.
		n.serveArgs = []string{"--flush-interval", "1h"}
		testPasswordEndToEnd(t, n)
	})
}

func testPasswordEndToEnd(t *testing.T, n *node) {
	const (
		target = "https://example.com/behind-the-password"
		secret = "correct horse battery staple"
	)
	token := strings.TrimSpace(n.mustRun("token", "create", "--tenant", "acme"))
	srv := n.startServer("http://lf.test")
	base := "http://" + srv.addr
	resp, body := mustDo(t, http.MethodPost, base+"/api/v1/links", token, fmt.Sprintf(
		`{"url":%q,"slug":"locked","password":%q}`, target, secret))
	if resp.StatusCode != http.StatusCreated || strings.Contains(string(body), secret) ||
		!strings.Contains(string(body), `"password_protected":true`) {
		t.Fatalf("create link: %d %s", resp.StatusCode, body)
	}

	// noTarget fails if the answer names the target anywhere.
	noTarget := func(what string, resp *http.Response, body []byte) {
		t.Helper()
		if strings.Contains(string(body), "behind-the-password") {
			t.Errorf("%s: the body names the target", what)
		}
		for k, vs := range resp.Header {
			for _, v := range vs {
				if strings.Contains(v, "behind-the-password") {
					t.Errorf("%s: header %s names the target: %q", what, k, v)
				}
			}
		}
	}
	send := func(method, pw string) (*http.Response, []byte) {
		t.Helper()
		var rd io.Reader
		if method == http.MethodPost {
			rd = strings.NewReader(url.Values{"password": {pw}}.Encode())
		}
		req, err := http.NewRequest(method, base+"/locked", rd)
		if err != nil {
			t.Fatal(err)
		}
		if rd != nil {
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		}
		resp, err := noRedirects.Do(req)
		if err != nil {
			t.Fatalf("%s /locked: %v", method, err)
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatalf("%s /locked: read: %v", method, err)
		}
		return resp, b
	}

	resp, body = send(http.MethodGet, "")
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), `name="password"`) {
		t.Fatalf("GET: %d %s, want the form", resp.StatusCode, body)
	}
	noTarget("GET", resp, body)
	resp, body = send(http.MethodHead, "")
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Location") != "" {
		t.Fatalf("HEAD: %d Location %q", resp.StatusCode, resp.Header.Get("Location"))
	}
	noTarget("HEAD", resp, body)

	resp, body = send(http.MethodPost, "wrong")
	if resp.StatusCode != http.StatusUnauthorized || !strings.Contains(string(body), `name="password"`) {
		t.Fatalf("wrong password: %d %s, want 401 with the form", resp.StatusCode, body)
	}
	noTarget("wrong password", resp, body)
	resp, body = send(http.MethodPost, secret)
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/locked" || len(resp.Cookies()) != 1 {
		t.Fatalf("right password: %d Location %q cookies %v, want 303 to /locked with the unlock cookie",
			resp.StatusCode, resp.Header.Get("Location"), resp.Cookies())
	}
	noTarget("right password", resp, body)
	// The browser's GET with the cookie: the click, and the page that
	// sends it on to the target.
	req, err := http.NewRequest(http.MethodGet, base+"/locked", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.AddCookie(&http.Cookie{Name: resp.Cookies()[0].Name, Value: resp.Cookies()[0].Value}) //nolint:gosec // G124: a request's cookie carries no attributes
	resp, err = noRedirects.Do(req)
	if err != nil {
		t.Fatalf("GET /locked unlocked: %v", err)
	}
	body, err = io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		t.Fatalf("GET /locked unlocked: read: %v", err)
	}
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), `<meta http-equiv="refresh" content="0; url=`+target+`">`) {
		t.Fatalf("unlocked GET: %d %s, want 200 continuing to %s", resp.StatusCode, body, target)
	}

	for i := 2; i <= 10; i++ {
		if resp, body = send(http.MethodPost, fmt.Sprintf("wrong %d", i)); resp.StatusCode != http.StatusUnauthorized {
			t.Fatalf("failure %d: %d %s, want 401", i, resp.StatusCode, body)
		}
	}
	for _, pw := range []string{"wrong 11", secret} {
		resp, body = send(http.MethodPost, pw)
		if resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get("Retry-After") == "" {
			t.Fatalf("after 10 failures: %d Retry-After %q, want 429 with Retry-After", resp.StatusCode, resp.Header.Get("Retry-After"))
		}
		noTarget("429", resp, body)
	}

	if code := srv.stop(t); code != 0 {
		t.Fatalf("SIGTERM: exit %d", code)
	}
	// The form, HEAD, the failures and the refusals counted nothing; the
	// right password counted once.
	if got := rollupTotal(t, n); got != 1 {
		t.Fatalf("rollup total after the flush = %d, want exactly 1", got)
	}
}
