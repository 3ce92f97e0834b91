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
	"github.com/linkforge/linkforge/web"
)

// TestUnsafeInterstitialInBrowser: in a real Chromium, an unsafe link
// shows the warning page naming the target's host (not its path), counts
// nothing and leaves the target untouched; its "Report this link" opens
// the report form with the short URL filled in; back on the warning,
// "Continue" lands on the target (another origin: the page's CSP
// form-action 'self' must not stop it), once, with one click counted.
func TestUnsafeInterstitialInBrowser(t *testing.T) {
	b := browsertest.New(t, 1024, 800, chromedp.Flag("lang", "en-US"))
	st := testdb.SQLite(t)
	counter := mustCounter(t, st)
	e := newEnv(t, st, func(c *web.Config) { useCounter(c, counter.Counter) })
	var (
		mu   sync.Mutex
		hits []string
	)
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/favicon.ico" {
			mu.Lock()
			hits = append(hits, r.Method+" "+r.URL.RequestURI())
			mu.Unlock()
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = w.Write([]byte(`<!doctype html><title>Landed</title><p id="landed">the target</p>`))
	}))
	t.Cleanup(target.Close)
	tenant, _ := mustTenantToken(t, st, "acme")
	l := mustStoreLink(t, st, linkforge.Link{TenantID: tenant, Slug: "risky", URL: target.URL + "/secret-landing"})
	if _, err := st.SetLinkUnsafe(t.Context(), l.ID, "threat-dns: 127.0.0.1"); err != nil {
		t.Fatal(err)
	}

	ctx, cancel := context.WithTimeout(b.Ctx, time.Minute)
	defer cancel()
	if err := chromedp.Do(ctx,
		chromedp.Navigate(e.url+"/risky"),
		chromedp.WaitVisible(chromedp.CSS("#continue")),
	); err != nil {
		t.Fatal(err)
	}
	host, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.getElementById('target-host').textContent`))
	if err != nil {
		t.Fatal(err)
	}
	page, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.body.innerText`))
	if err != nil {
		t.Fatal(err)
	}
	if host != "127.0.0.1" || strings.Contains(page, "secret-landing") || !strings.Contains(page, "may be unsafe") {
		t.Errorf("the warning names host %q; page %q", host, page)
	}
	// The report link: the form, the short URL filled in.
	if err := chromedp.Do(ctx,
		chromedp.Click(chromedp.CSS(`a[href^="/report"]`)),
		chromedp.WaitVisible(chromedp.CSS("#reason")),
	); err != nil {
		t.Fatal(err)
	}
	reported, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.getElementById('url').value`))
	if err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(ctx, chromedp.Navigate(e.url+"/risky"), chromedp.WaitVisible(chromedp.CSS("#continue"))); err != nil {
		t.Fatal(err)
	}
	if reported != publicURL+"/risky" {
		t.Errorf("the report form's url %q, want %q", reported, publicURL+"/risky")
	}
	mu.Lock()
	before := len(hits)
	mu.Unlock()
	if n := counter.count(t, l.ID); n != 0 || before != 0 {
		t.Fatalf("before continue: %d clicks, %d target hits; want none", n, before)
	}
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS("#continue"))); err != nil {
		t.Fatal(err)
	}
	if err := browsertest.WaitTrue(ctx, `location.origin === `+jsString(target.URL)+
		` && document.getElementById('landed') !== null`, 10*time.Second); err != nil {
		at, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`location.href`))
		t.Fatalf("continue did not reach the target (at %q): %v", at, err)
	}
	mu.Lock()
	got := strings.Join(hits, ", ")
	mu.Unlock()
	if got != "GET /secret-landing" {
		t.Errorf("the target was asked %q, want one GET /secret-landing", got)
	}
	if n := counter.count(t, l.ID); n != 1 {
		t.Errorf("%d clicks counted, want 1", n)
	}
}
