package web_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/internal/browsertest"
	"github.com/linkforge/linkforge/internal/testdb"
	"github.com/linkforge/linkforge/password"
	"github.com/linkforge/linkforge/web"
)

// TestPasswordUnlockInBrowser: in a real Chromium, typing the password of a
// link whose target is another origin and submitting the form lands on the
// target, once, with the link's query string kept on the way and the click
// counted once. The form page's CSP (form-action 'self') applies to every
// redirect that follows its post, so the post must not answer with a
// redirect to the target itself.
func TestPasswordUnlockInBrowser(t *testing.T) {
	b := browsertest.New(t, 1024, 800, chromedp.Flag("lang", "en-US"))
	st := testdb.SQLite(t)
	counter := mustCounter(t, st)
	e := newEnv(t, st, func(c *web.Config) { useCounter(c, counter.Counter) })

	// The target: another server on 127.0.0.1, so another origin (its
	// port differs from the short link's).
	var (
		mu   sync.Mutex
		hits []string
	)
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/favicon.ico" { // the browser's own, at any time
			mu.Lock()
			hits = append(hits, r.Method+" "+r.URL.RequestURI())
			mu.Unlock()
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = w.Write([]byte(`<!doctype html><title>Landed</title><p id="landed">the target</p>`))
	}))
	t.Cleanup(target.Close)
	if strings.TrimPrefix(target.URL, "http://") == strings.TrimPrefix(e.url, "http://") {
		t.Fatalf("the target %s is the short link's origin", target.URL)
	}

	tenant, _ := mustTenantToken(t, st, "acme")
	hash, err := password.Hash("open sesame", testPasswordParams)
	if err != nil {
		t.Fatal(err)
	}
	// Stored past the API, which refuses a loopback target.
	l := mustStoreLink(t, st, linkforge.Link{TenantID: tenant, Slug: "locked", URL: target.URL + "/landing", PasswordHash: hash})

	ctx, cancel := context.WithTimeout(b.Ctx, time.Minute)
	defer cancel()
	if err := chromedp.Do(ctx,
		chromedp.Navigate(e.url+"/locked?utm_source=browser"),
		chromedp.WaitVisible(chromedp.CSS("#password")),
		chromedp.SendKeys(chromedp.CSS("#password"), "open sesame"),
		chromedp.Click(chromedp.CSS(`button[type="submit"]`)),
	); err != nil {
		t.Fatal(err)
	}
	if err := browsertest.WaitTrue(ctx, `location.origin === `+jsString(target.URL)+
		` && document.getElementById('landed') !== null`, 10*time.Second); err != nil {
		at, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`location.href`))
		t.Fatalf("the browser did not reach the target (it is at %q): %v", at, err)
	}
	at, err := chromedp.Run(ctx, chromedp.Evaluate[string](`location.href`))
	if err != nil {
		t.Fatal(err)
	}
	if at != target.URL+"/landing" {
		t.Errorf("the browser is at %q, want %q", at, target.URL+"/landing")
	}
	mu.Lock()
	got := strings.Join(hits, ", ")
	mu.Unlock()
	if got != "GET /landing" {
		t.Errorf("the target was asked %q, want one GET /landing", got)
	}
	if n := counter.count(t, l.ID); n != 1 {
		t.Errorf("%d clicks counted, want 1", n)
	}
}
