package web_test

import (
	"testing"
	"time"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/internal/testdb"
)

// TestDashboardBadgesUnsafeAndBroken: in real Chromium, the link table
// badges a link a check flagged unsafe and one whose target failed its
// health check, and the others active.
func TestDashboardBadgesUnsafeAndBroken(t *testing.T) {
	st := testdb.SQLite(t)
	e := newEnv(t, st)
	_, token := mustTenantToken(t, st, "acme")
	flagged := e.mustCreate(token, `{"slug":"flagged","url":"https://example.com/f"}`)
	broken := e.mustCreate(token, `{"slug":"broken","url":"https://example.com/b"}`)
	e.mustCreate(token, `{"slug":"fine","url":"https://example.com/ok"}`)
	for slug, set := range map[string]func(id int64) error{
		flagged.Slug: func(id int64) error {
			_, err := st.SetLinkUnsafe(t.Context(), id, "blocklist: example.com")
			return err
		},
		broken.Slug: func(id int64) error {
			_, err := st.SetLinkHealth(t.Context(), id, linkforge.LinkHealth{State: linkforge.HealthBroken, Status: 404, CheckedAt: time.Now()})
			return err
		},
	} {
		l, err := st.LinkBySlug(t.Context(), linkforge.PublicDomainID, slug)
		if err != nil {
			t.Fatal(err)
		}
		if err := set(l.ID); err != nil {
			t.Fatal(err)
		}
	}
	p := openDashboard(t, e, token, "/dashboard", 1280, 800)
	p.wait("the badges", `document.querySelectorAll('#links-body tr').length === 3`)
	badges := `['flagged', 'broken', 'fine'].map(s => document.querySelector('#links-body tr[data-slug="' + s + '"] .badge').textContent).join(',')`
	if got := p.eval(badges); got != "unsafe,broken,active" {
		t.Errorf("badges: %q, want unsafe,broken,active", got)
	}
}
