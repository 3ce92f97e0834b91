package web_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/internal/browsertest"
	"github.com/linkforge/linkforge/internal/testdb"
	"github.com/linkforge/linkforge/web"
)

// TestDashboardNotesArchive drives the link editor's notes, start date
// and archive controls in a real browser: the stored notes fill the
// form, an edit saves notes (several lines) and archives the link (the
// API then answers the new values, and the list leaves the link out), a
// notes search finds a link, and notes over the limit are refused next
// to their field with nothing changed.
func TestDashboardNotesArchive(t *testing.T) {
	b := browsertest.New(t, 1280, 900, chromedp.Flag("lang", "en-US"))
	st := testdb.SQLite(t)
	tenant, token := mustTenantToken(t, st, "acme")
	hub := mustLiveHub(t)
	e := newEnv(t, st, func(c *web.Config) { useHub(c, hub); c.Now = time.Now })
	mustStoreLink(t, st, linkforge.Link{TenantID: tenant, Slug: "flyer", URL: "https://example.com/flyer", Notes: "Printed in March"})
	mustStoreLink(t, st, linkforge.Link{TenantID: tenant, Slug: "other", URL: "https://example.com/other"})

	ctx, cancel := context.WithTimeout(b.Ctx, time.Minute)
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
			dump, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`JSON.stringify({rows: Array.from(document.querySelectorAll('#links-body tr')).map(r => r.dataset.slug), `+
				`errors: Array.from(document.querySelectorAll('.form-error:not([hidden]), .field-error:not([hidden])')).map(e => e.textContent), `+
				`status: document.getElementById('edit-status').textContent})`))
			t.Fatalf("wait for %s: %v (page: %s)", what, err, dump)
		}
	}
	setValue := func(id, v string) chromedp.Action[chromedp.Void] {
		return chromedp.Func(func(c context.Context, tg *chromedp.Target) error {
			_, err := chromedp.Evaluate[any](fmt.Sprintf(`(() => { const e = document.getElementById(%q); e.value = %q; `+
				`e.dispatchEvent(new Event('input', {bubbles: true})); e.dispatchEvent(new Event('change', {bubbles: true})); })()`, id, v))(c, tg)
			return err
		})
	}
	getLink := func(slug string) map[string]any {
		t.Helper()
		r := e.do(http.MethodGet, "/api/v1/links/"+slug, token, "")
		mustStatus(t, r, http.StatusOK)
		var m map[string]any
		if err := json.Unmarshal(r.body, &m); err != nil {
			t.Fatal(err)
		}
		return m
	}
	rows := `Array.from(document.querySelectorAll('#links-body tr')).map(r => r.dataset.slug).join(',')`

	run("sign in",
		chromedp.Navigate(e.url+"/dashboard"),
		chromedp.WaitVisible(chromedp.CSS("#token")),
		chromedp.SendKeys(chromedp.CSS("#token"), token),
		chromedp.Click(chromedp.CSS(`#token-form button[type="submit"]`)),
	)
	wait("the list", rows+` === 'other,flyer'`)
	run("search the notes", setValue("links-q", "march"))
	wait("the notes' match", rows+` === 'flyer'`)
	run("clear the search", setValue("links-q", ""))
	wait("the list again", rows+` === 'other,flyer'`)

	run("open the link", chromedp.Click(chromedp.CSS(`tr[data-slug="flyer"]`)))
	wait("its notes in the form", `!document.getElementById('manage').hidden && document.getElementById('edit-notes').value === 'Printed in March' && `+
		`!document.getElementById('edit-archived').checked && document.getElementById('edit-valid-since').value === ''`)

	// Too long: refused next to the field, nothing changed.
	run("a bad edit", setValue("edit-notes", fmt.Sprintf("%2001s", "x")),
		chromedp.Click(chromedp.CSS("#edit-archived")), chromedp.Click(chromedp.CSS("#edit-submit")))
	wait("the notes' error", `!document.querySelector('#edit-form .field-error[data-field="notes"]').hidden && `+
		`document.getElementById('edit-notes').getAttribute('aria-invalid') === 'true'`)
	if m := getLink("flyer"); m["notes"] != "Printed in March" || m["archived"] != false {
		t.Fatalf("after a refused edit: notes %q, archived %v", m["notes"], m["archived"])
	}

	run("a good edit", setValue("edit-notes", "Printed in March.\nReprint in May."), chromedp.Click(chromedp.CSS("#edit-submit")))
	wait("saved", `document.getElementById('edit-status').textContent === 'Saved.' && document.getElementById('edit-archived').checked`)
	if m := getLink("flyer"); m["notes"] != "Printed in March.\nReprint in May." || m["archived"] != true {
		t.Fatalf("after the edit: notes %q, archived %v", m["notes"], m["archived"])
	}
	wait("the archived link out of the list", rows+` === 'other'`)
}
