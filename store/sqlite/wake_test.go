package sqlite_test

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/internal/wake"
	"github.com/linkforge/linkforge/store/sqlite"
)

// TestWithWake: the hook given at Open is told of the deliveries a commit
// added, with their due time, and not of a write that added none.
func TestWithWake(t *testing.T) {
	ctx := t.Context()
	h := new(wake.Hook)
	var told []time.Time
	h.Set(func(due time.Time) { told = append(told, due) })
	db, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "linkforge.db"), sqlite.WithWake(h))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	must := func(_ any, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(nil, db.Migrate(ctx))
	ten, err := db.EnsureTenant(ctx, "a")
	must(nil, err)
	must(db.CreateLink(ctx, linkforge.Link{TenantID: ten.ID, Slug: "before", URL: "https://example.com/"}))
	must(db.CreateWebhook(ctx, linkforge.Webhook{ID: "wh_1", TenantID: ten.ID, URL: "https://example.com/hook",
		Events: []string{linkforge.EventLinkCreated}, Secret: "s"}))
	l, err := db.CreateLink(ctx, linkforge.Link{TenantID: ten.ID, Slug: "after", URL: "https://example.com/"})
	must(nil, err)
	if len(told) != 1 || !told[0].Equal(l.CreatedAt) {
		t.Errorf("told %v, want once, at %v", told, l.CreatedAt)
	}
}
