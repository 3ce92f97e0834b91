package web_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/internal/browsertest"
	"github.com/linkforge/linkforge/internal/testdb"
	"github.com/linkforge/linkforge/web"
)

// pageGuard bounds each wait of these tests: generous, as CI runs them
// under -race on a small, loaded machine; each wait polls the page.
const pageGuard = 45 * time.Second

// waitFor polls expr in p's page until it is true, or fails the test with
// the page's visible errors.
func (p *dashPage) waitFor(what, expr string) {
	p.t.Helper()
	if err := browsertest.WaitTrue(p.ctx, expr, pageGuard); err != nil {
		dump, _ := chromedp.Run(p.ctx, chromedp.Evaluate[string](`JSON.stringify({hash: location.hash, `+
			`errors: Array.from(document.querySelectorAll('.form-error:not([hidden]), .field-error:not([hidden])')).map(e => e.textContent)})`))
		p.t.Fatalf("wait for %s: %v (page: %s)", what, err, dump)
	}
}

// verifyDomain marks the tenant's domain verified in the store, as a
// successful verification would.
func verifyDomain(t *testing.T, st linkforge.Store, tenant int64, host string) {
	t.Helper()
	if _, err := st.UpdateDomain(context.Background(), tenant, host, func(d *linkforge.Domain) error {
		d.State = linkforge.DomainVerified
		return nil
	}); err != nil {
		t.Fatalf("verify %s: %v", host, err)
	}
}

// TestDashboardDomains: on the domains page, in a real browser, a host
// with a port is refused with the error next to the field and nothing
// added; a domain added is listed pending with its verification URL;
// once verified (in the store, as the verifier would) it says so after a
// refresh and can be made the default domain, as the API then says.
func TestDashboardDomains(t *testing.T) {
	st := testdb.SQLite(t)
	tenant, token := mustTenantToken(t, st, "acme")
	e := newEnv(t, st, func(c *web.Config) { c.Now = time.Now })
	p := openDashboard(t, e, token, "/dashboard/domains", 1280, 900)
	p.waitFor("the empty list", `!document.getElementById('domains-empty').hidden`)

	p.setValue("dom-host", "go.acme.com:8080")
	p.run("add a host with a port", p.clickAction("#domain-submit"))
	p.waitFor("the host's error", `(() => { const e = document.querySelector('.field-error[data-field="host"]'); return !e.hidden && e.textContent !== ''; })()`)
	if n := e.domainCount(tenant); n != 0 {
		t.Fatalf("domains after a refused add: %d", n)
	}

	p.setValue("dom-host", "go.acme.com")
	p.run("add the domain", p.clickAction("#domain-submit"))
	row := `document.querySelector('#domains tr[data-host="go.acme.com"]')`
	p.waitFor("the domain, pending", row+` !== null && `+row+`.dataset.state === 'pending'`)
	if got := p.eval(row + `.querySelector('.dom-verify').textContent`); !strings.HasPrefix(got, "http://go.acme.com/.well-known/linkforge-domain/") {
		t.Errorf("verification URL shown: %q", got)
	}
	if got := p.eval(`document.querySelector('.field-error[data-field="host"]').hidden ? 'hidden' : 'shown'`); got != "hidden" {
		t.Errorf("the host's error after a good add: %s", got)
	}

	verifyDomain(t, st, tenant, "go.acme.com")
	p.run("refresh", p.clickAction("#domains-refresh"))
	p.waitFor("the domain, verified", row+`.dataset.state === 'verified' && `+row+`.querySelector('[data-action="verify"]') === null`)
	p.run("make it the default", p.clickAction(`#domains tr[data-host="go.acme.com"] [data-action="default"]`))
	p.waitFor("the default", row+`.querySelector('.dom-default').textContent === 'default'`)
	got := mustJSON[struct {
		Default bool
		State   string
	}](t, e.do(http.MethodGet, "/api/v1/domains/go.acme.com", token, ""))
	if !got.Default || got.State != "verified" {
		t.Errorf("the API's domain after the page's changes: %+v, want verified and default", got)
	}
}
