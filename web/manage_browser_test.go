package web_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/browser"
	"github.com/chromedp/chromedp"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/internal/browsertest"
	"github.com/linkforge/linkforge/internal/testdb"
	"github.com/linkforge/linkforge/web"
)

// TestDashboardManage drives the dashboard's link management in a real
// browser against a real server: the list's pages, search, tag and state
// filters and sorts (by clicks, by slug); a create with the advanced options; a link's panel: its QR code
// (shown and downloaded as PNG and SVG), copying its short URL, an edit the
// server refuses (the error next to its field, nothing changed), an edit it
// takes (the API then answers the new values), a change made elsewhere
// arriving in the open form, removing the password, and deleting the link
// after a confirmation (the slug then answers 404); and a link created
// through the API appearing in the open list without a reload.
func TestDashboardManage(t *testing.T) {
	b := browsertest.New(t, 1280, 900, chromedp.Flag("lang", "en-US"))
	st := testdb.SQLite(t)
	tenant, token := mustTenantToken(t, st, "acme")
	hub := mustLiveHub(t)
	e := newEnv(t, st, func(c *web.Config) { useHub(c, hub); c.Now = time.Now })

	// 55 old links, an expired one, then four named ones, in the order of
	// creation (the store stamps it): the first page (50) holds the named
	// ones, the expired one and 45 of the old.
	for i := range 55 {
		mustStoreLink(t, st, linkforge.Link{TenantID: tenant, Slug: fmt.Sprintf("old-%02d", i), URL: fmt.Sprintf("https://example.com/old/%d", i)})
	}
	yesterday := time.Now().Add(-24 * time.Hour)
	mustStoreLink(t, st, linkforge.Link{TenantID: tenant, Slug: "gone-sale", URL: "https://example.com/gone", ExpiresAt: &yesterday})
	named := []linkforge.Link{
		{Slug: "docs", URL: "https://docs.example.com/", Tags: []string{"docs"}, ImportedClicks: 30},
		{Slug: "spring-sale", URL: "https://shop.example.com/spring", Title: "Spring sale", Tags: []string{"launch"}},
		{Slug: "blog", URL: "https://blog.example.com/post", Tags: []string{"docs", "launch"}, ImportedClicks: 5},
		{Slug: "careers", URL: "https://example.com/jobs"},
	}
	for _, l := range named {
		l.TenantID = tenant
		mustStoreLink(t, st, l)
	}

	ctx, cancel := context.WithTimeout(b.Ctx, 2*time.Minute)
	defer cancel()
	run := func(what string, actions ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		if err := chromedp.Do(ctx, actions...); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	wait := func(what, expr string) {
		t.Helper()
		if err := browsertest.WaitTrue(ctx, expr, liveGuard); err != nil {
			dump, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`JSON.stringify({hash: location.hash, rows: document.querySelectorAll('#links-body tr').length, `+
				`manage: document.getElementById('manage').hidden, confirm: document.getElementById('delete-confirm').hidden, `+
				`errors: Array.from(document.querySelectorAll('.form-error:not([hidden]), .field-error:not([hidden])')).map(e => e.textContent), `+
				`status: document.getElementById('edit-status').textContent})`))
			t.Fatalf("wait for %s: %v (page: %s)", what, err, dump)
		}
	}
	eval := func(expr string) string {
		t.Helper()
		s, err := chromedp.Run(ctx, chromedp.Evaluate[string](expr))
		if err != nil {
			t.Fatalf("evaluate %s: %v", expr, err)
		}
		return s
	}
	js := func(expr string) chromedp.Action[chromedp.Void] {
		return chromedp.Func(func(c context.Context, tg *chromedp.Target) error {
			_, err := chromedp.Evaluate[any](expr)(c, tg)
			return err
		})
	}
	// setValue sets an input or select and tells the page, as typing would.
	setValue := func(id, v string) chromedp.Action[chromedp.Void] {
		return js(fmt.Sprintf(`(() => { const e = document.getElementById(%q); e.value = %q; `+
			`e.dispatchEvent(new Event('input', {bubbles: true})); e.dispatchEvent(new Event('change', {bubbles: true})); })()`, id, v))
	}
	rows := `Array.from(document.querySelectorAll('#links-body tr')).map(r => r.dataset.slug).join(',')`
	getLink := func(slug string) (int, map[string]any) {
		t.Helper()
		r := e.do(http.MethodGet, "/api/v1/links/"+slug, token, "")
		var m map[string]any
		if r.status == http.StatusOK {
			if err := json.Unmarshal(r.body, &m); err != nil {
				t.Fatalf("GET %s: %v", slug, err)
			}
		}
		return r.status, m
	}

	run("sign in",
		chromedp.Navigate(e.url+"/dashboard"),
		chromedp.WaitVisible(chromedp.CSS("#token")),
		chromedp.SendKeys(chromedp.CSS("#token"), token),
		chromedp.Click(chromedp.CSS(`#token-form button[type="submit"]`)),
	)
	wait("the live feed", `document.getElementById('conn').dataset.state === 'live'`)

	// Pages: 50, then the rest with "Load more".
	wait("the first page", `document.querySelectorAll('#links-body tr').length === 50 && !document.getElementById('links-more').hidden`)
	if got := eval(rows); !strings.HasPrefix(got, "careers,blog,spring-sale,docs,gone-sale,old-54,") {
		t.Fatalf("first page: %s, want newest first", got)
	}
	run("load more", chromedp.Click(chromedp.CSS("#links-more")))
	wait("all the links", `document.querySelectorAll('#links-body tr').length === 60 && document.getElementById('links-more').hidden && `+
		`document.querySelector('#links-body tr:last-child').dataset.slug === 'old-00'`)

	// Search, tag filter, sort.
	run("search", chromedp.SendKeys(chromedp.CSS("#links-q"), "SPRING"))
	wait("only the match", rows+` === 'spring-sale'`)
	run("search by URL", setValue("links-q", "blog.example"))
	wait("only the URL's match", rows+` === 'blog'`)
	run("search nothing", setValue("links-q", "no-such-thing"))
	wait("no match", rows+` === '' && !document.getElementById('links-empty').hidden && document.getElementById('links-empty').textContent === 'No links match.'`)
	run("clear the search", setValue("links-q", ""))
	wait("the tags in the filter", `Array.from(document.querySelectorAll('#links-tag option')).map(o => o.value).join(',') === ',docs,launch'`)
	run("filter by tag", setValue("links-tag", "docs"))
	wait("the tag's links", rows+` === 'blog,docs'`)
	run("sort by clicks", setValue("links-sort", "-clicks"))
	wait("the tag's links by clicks", rows+` === 'docs,blog'`)
	run("sort by slug", setValue("links-sort", "slug"))
	wait("the tag's links by slug", rows+` === 'blog,docs'`)
	run("filter by the other tag", setValue("links-tag", "launch"))
	wait("the other tag's links by slug", rows+` === 'blog,spring-sale'`)
	run("expired links", setValue("links-tag", ""), setValue("links-state", "expired"))
	wait("only the expired one", rows+` === 'gone-sale' && document.querySelector('#links-body .badge').textContent === 'expired'`)
	run("all tags and states, newest first", setValue("links-state", "all"), setValue("links-sort", "-created"))
	wait("the first page again", `document.querySelectorAll('#links-body tr').length === 50 && document.querySelector('#links-body tr').dataset.slug === 'careers'`)

	// Create with the advanced options.
	run("create with advanced options",
		chromedp.SendKeys(chromedp.CSS("#create-url"), "https://example.com/app"),
		chromedp.SendKeys(chromedp.CSS("#create-slug"), "app"),
		chromedp.Click(chromedp.CSS("#create-advanced summary")),
		chromedp.WaitVisible(chromedp.CSS("#create-title")),
		chromedp.SendKeys(chromedp.CSS("#create-title"), "Our app"),
		chromedp.SendKeys(chromedp.CSS("#create-tags"), "mobile, launch"),
		chromedp.SendKeys(chromedp.CSS("#create-max"), "100"),
		chromedp.SendKeys(chromedp.CSS("#create-password"), "open sesame"),
		chromedp.SendKeys(chromedp.CSS("#create-fallback"), "https://example.com/over"),
		chromedp.SendKeys(chromedp.CSS("#create-ios"), "https://apps.example.com/ios"),
		chromedp.SendKeys(chromedp.CSS("#create-android"), "https://apps.example.com/android"),
		chromedp.Click(chromedp.CSS("#create-submit")),
	)
	wait("the created link", `!document.getElementById('create-result').hidden && document.querySelector('#links-body tr').dataset.slug === 'app' && `+
		`document.querySelector('#links-body tr .lock svg') !== null`)
	if status, m := getLink("app"); status != http.StatusOK || m["title"] != "Our app" || fmt.Sprint(m["tags"]) != "[mobile launch]" ||
		m["max_clicks"] != 100.0 || m["password_protected"] != true || m["fallback_url"] != "https://example.com/over" ||
		fmt.Sprint(m["device_urls"]) != "map[android:https://apps.example.com/android ios:https://apps.example.com/ios]" {
		t.Fatalf("the advanced link through the API: %d %v", status, m)
	}

	// A link created elsewhere appears in the open list, without a reload.
	run("mark the page", js(`window.__lfMarker = 'still here'`))
	if r := e.do(http.MethodPost, "/api/v1/links", token, `{"slug":"from-api","url":"https://example.com/api","title":"Made by a script"}`); r.status != http.StatusCreated {
		t.Fatalf("create through the API: %s", r)
	}
	wait("the API's link in the list", `document.querySelector('#links-body tr').dataset.slug === 'from-api' && `+
		`document.querySelector('#links-body tr .row-title').textContent === 'Made by a script'`)

	// A link's panel.
	run("open a link", chromedp.Click(chromedp.CSS(`tr[data-slug="spring-sale"]`)))
	wait("its panel", `!document.getElementById('manage').hidden && document.getElementById('edit-url').value === 'https://shop.example.com/spring' && `+
		`document.getElementById('edit-title').value === 'Spring sale' && document.getElementById('edit-tags').value === 'launch'`)
	wait("its QR code", `!document.getElementById('qr-img').hidden && document.getElementById('qr-img').complete && document.getElementById('qr-img').naturalWidth > 0 && `+
		`document.getElementById('qr-img').src.startsWith('blob:')`)
	run("copy the short URL", chromedp.Click(chromedp.CSS("#copy-link")))
	wait("copied", `document.getElementById('copy-status').textContent === 'Copied.'`)

	// QR downloads, into a directory of the test's.
	dir := t.TempDir()
	run("allow downloads", chromedp.Func(func(c context.Context, _ *chromedp.Target) error {
		_, err := chromedp.CallBrowser(c, browser.SetDownloadBehavior, browser.SetDownloadBehaviorParams{
			Behavior: browser.SetDownloadBehaviorBehaviorAllow, DownloadPath: dir})
		return err
	}))
	run("download the PNG", chromedp.Click(chromedp.CSS("#qr-png")))
	mustDownload(t, filepath.Join(dir, "spring-sale-qr.png"), []byte("\x89PNG\r\n\x1a\n"))
	run("download the SVG", chromedp.Click(chromedp.CSS("#qr-svg")))
	mustDownload(t, filepath.Join(dir, "spring-sale-qr.svg"), []byte("<svg"))

	// The QR code's look: a pair a scanner cannot read is refused with the
	// server's reason; a colour picked redraws the preview (a new image
	// URL, the query, and pixels of that colour); the download follows.
	run("note the preview", js(`window.__qrSrc = document.getElementById('qr-img').src`))
	run("pick a light colour", setValue("qr-fg", "#eeeeee"))
	wait("the contrast refusal", `document.getElementById('qr-status').textContent.includes('contrast')`)
	run("pick navy and H", setValue("qr-fg", "#1a237e"), setValue("qr-ec", "H"))
	wait("the navy preview", `(() => { const i = document.getElementById('qr-img'); `+
		`if (i.hidden || !i.complete || i.src === window.__qrSrc || i.dataset.query !== '&fg=%231a237e&ec=H') return false; `+
		`const c = document.createElement('canvas'); c.width = i.naturalWidth; c.height = i.naturalHeight; `+
		`const x = c.getContext('2d'); x.drawImage(i, 0, 0); `+
		`for (let k = 0; k < c.width; k++) { const d = x.getImageData(k, k, 1, 1).data; `+
		`if (d[0] < 200) return d[0] === 0x1a && d[1] === 0x23 && d[2] === 0x7e; } return false; })()`)
	styled := t.TempDir()
	run("download the navy PNG", chromedp.Func(func(c context.Context, _ *chromedp.Target) error {
		_, err := chromedp.CallBrowser(c, browser.SetDownloadBehavior, browser.SetDownloadBehaviorParams{
			Behavior: browser.SetDownloadBehaviorBehaviorAllow, DownloadPath: styled})
		return err
	}), chromedp.Click(chromedp.CSS("#qr-png")))
	mustDownload(t, filepath.Join(styled, "spring-sale-qr.png"), []byte("\x89PNG\r\n\x1a\n"))
	if b, err := os.ReadFile(filepath.Join(styled, "spring-sale-qr.png")); err != nil {
		t.Fatal(err)
	} else if text, img := decodeQR(t, b); !strings.HasSuffix(text, "/spring-sale?qr=1") {
		t.Errorf("the downloaded code says %q", text)
	} else if _, fg := firstDark(img); fg != navy {
		t.Errorf("the downloaded code's colour is %v, want navy", fg)
	}
	run("back to the defaults", chromedp.Click(chromedp.CSS("#qr-style-reset")))
	wait("the default preview", `document.getElementById('qr-img').dataset.query === '' && !document.getElementById('qr-img').hidden`)

	// A change elsewhere arrives in the open, untouched form.
	if r := e.do(http.MethodPatch, "/api/v1/links/spring-sale", token, `{"title":"Spring sale (edited elsewhere)"}`); r.status != http.StatusOK {
		t.Fatalf("PATCH through the API: %s", r)
	}
	wait("the change in the form", `document.getElementById('edit-title').value === 'Spring sale (edited elsewhere)'`)

	// An edit the server refuses: the error next to the field, nothing
	// changed.
	run("a bad edit", setValue("edit-max", "-1"), setValue("edit-title", "Not saved"), chromedp.Click(chromedp.CSS("#edit-submit")))
	wait("the field's error", `!document.querySelector('#edit-form .field-error[data-field="max_clicks"]').hidden && `+
		`document.querySelector('#edit-form .field-error[data-field="max_clicks"]').textContent !== '' && `+
		`document.getElementById('edit-max').getAttribute('aria-invalid') === 'true' && document.getElementById('edit-error').hidden`)
	if _, m := getLink("spring-sale"); m["title"] != "Spring sale (edited elsewhere)" || m["max_clicks"] != nil {
		t.Fatalf("after a refused edit: %v, want it unchanged", m)
	}

	// An edit it takes.
	run("a good edit",
		setValue("edit-url", "https://shop.example.com/spring-2"),
		setValue("edit-title", "Spring sale 2"),
		setValue("edit-tags", "launch, spring"),
		setValue("edit-max", "10"),
		setValue("edit-fallback", "https://shop.example.com/"),
		setValue("edit-desktop", "https://shop.example.com/desktop"),
		setValue("edit-password", "hunter2"),
		chromedp.Click(chromedp.CSS("#edit-submit")))
	wait("saved", `document.getElementById('edit-status').textContent === 'Saved.' && document.querySelector('#edit-form .field-error[data-field="max_clicks"]').hidden && `+
		`!document.getElementById('edit-protected').hidden`)
	if _, m := getLink("spring-sale"); m["url"] != "https://shop.example.com/spring-2" || m["title"] != "Spring sale 2" || fmt.Sprint(m["tags"]) != "[launch spring]" ||
		m["max_clicks"] != 10.0 || m["fallback_url"] != "https://shop.example.com/" || m["password_protected"] != true ||
		fmt.Sprint(m["device_urls"]) != "map[desktop:https://shop.example.com/desktop]" {
		t.Fatalf("after the edit, the API answers %v", m)
	}
	run("remove the password", chromedp.Click(chromedp.CSS("#edit-nopass")), chromedp.Click(chromedp.CSS("#edit-submit")))
	wait("saved without", `document.getElementById('edit-status').textContent === 'Saved.' && document.getElementById('edit-protected').hidden`)
	if _, m := getLink("spring-sale"); m["password_protected"] != false {
		t.Fatalf("after removing the password: %v", m)
	}

	// Delete, after a confirmation (declined once).
	run("ask to delete", chromedp.Click(chromedp.CSS("#delete-link")))
	wait("the question", `!document.getElementById('delete-confirm').hidden && document.getElementById('delete-slug').textContent === '/spring-sale'`)
	run("decline", chromedp.Click(chromedp.CSS("#delete-no")))
	wait("no question", `document.getElementById('delete-confirm').hidden`)
	if status, _ := getLink("spring-sale"); status != http.StatusOK {
		t.Fatalf("after declining, GET = %d, want 200", status)
	}
	run("delete", chromedp.Click(chromedp.CSS("#delete-link")), chromedp.Click(chromedp.CSS("#delete-yes")))
	wait("the overview without it", `document.getElementById('view-title').textContent === 'All links' && document.querySelector('tr[data-slug="docs"]') !== null && `+
		`document.querySelector('tr[data-slug="spring-sale"]') === null`)
	if status, _ := getLink("spring-sale"); status != http.StatusNotFound {
		t.Fatalf("after the delete, GET = %d, want 404", status)
	}
	if got := eval(`String(window.__lfMarker)`); got != "still here" {
		t.Fatalf("the page was reloaded (marker %q)", got)
	}
}

// mustDownload waits for a downloaded file and checks how it starts.
func mustDownload(t *testing.T, path string, prefix []byte) {
	t.Helper()
	deadline := time.Now().Add(liveGuard)
	for {
		b, err := os.ReadFile(path)
		if err == nil && len(b) > 0 {
			if !bytes.HasPrefix(b, prefix) {
				t.Fatalf("%s starts %q, want %q", filepath.Base(path), b[:min(len(b), 16)], prefix)
			}
			return
		}
		if time.Now().After(deadline) {
			names, _ := filepath.Glob(filepath.Join(filepath.Dir(path), "*"))
			t.Fatalf("no download %s after %v (directory: %v)", filepath.Base(path), liveGuard, names)
		}
		time.Sleep(20 * time.Millisecond) // the browser writes the file: no event of ours to wait on
	}
}
