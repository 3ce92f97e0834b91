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
	if err := db.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	ten, err := db.EnsureTenant(ctx, "a")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.CreateLink(ctx, linkforge.Link{TenantID: ten.ID, Slug: "before", URL: "https://example.com/"}); err != nil {
		t.Fatal(err)
	}
	if _, err := db.CreateWebhook(ctx, linkforge.Webhook{ID: "wh_1", TenantID: ten.ID, URL: "https://example.com/hook",
		Events: []string{linkforge.EventLinkCreated}, Secret: "s"}); err != nil {
		t.Fatal(err)
	}
	l, err := db.CreateLink(ctx, linkforge.Link{TenantID: ten.ID, Slug: "after", URL: "https://example.com/"})
	if err != nil {
		t.Fatal(err)
	}
	if len(told) != 1 || !told[0].Equal(l.CreatedAt) {
		t.Errorf("told %v, want once, at %v", told, l.CreatedAt)
	}
}
