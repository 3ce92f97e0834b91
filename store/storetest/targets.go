package storetest

import (
	"context"
	"testing"

	"github.com/linkforge/linkforge"
)

// testTargetEntries: the operator's blocklist and allowlist entries are
// added, listed by list and host, refused twice in one list (but the
// same host may be in both), deleted once, and audited in the
// operator's log.
func testTargetEntries(t *testing.T, s linkforge.Store) {
	ctx := linkforge.WithActor(t.Context(), linkforge.Actor{Type: linkforge.ActorOperator, ID: 7, Name: "ops"})
	before, err := s.OperatorAudit(ctx, 100, 0)
	if err != nil {
		t.Fatal(err)
	}
	add := func(list, host, note string) linkforge.TargetEntry {
		t.Helper()
		e, err := s.AddTargetEntry(ctx, linkforge.TargetEntry{List: list, Host: host, Note: note})
		if err != nil {
			t.Fatalf("AddTargetEntry(%s, %s): %v", list, host, err)
		}
		if e.ID == 0 || e.CreatedAt.IsZero() || e.Host != host || e.Note != note {
			t.Errorf("AddTargetEntry returned %+v", e)
		}
		return e
	}
	add(linkforge.TargetBlock, "te-evil.example", "phishing")
	add(linkforge.TargetBlock, "te-ads.example", "")
	add(linkforge.TargetAllow, "te-evil.example", "")
	if _, err := s.AddTargetEntry(ctx, linkforge.TargetEntry{List: linkforge.TargetBlock, Host: "te-evil.example"}); linkforge.ErrorCode(err) != linkforge.EConflict {
		t.Errorf("the same host twice in the blocklist: %v, want conflict", err)
	}
	got, err := s.TargetEntries(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, e := range got {
		keys = append(keys, e.List+" "+e.Host)
	}
	want := []string{"allow te-evil.example", "block te-ads.example", "block te-evil.example"}
	if len(keys) != len(want) {
		t.Fatalf("TargetEntries: %v, want %v", keys, want)
	}
	for i := range want {
		if keys[i] != want[i] {
			t.Errorf("TargetEntries: %v, want %v", keys, want)
		}
	}
	if got[2].Note != "phishing" {
		t.Errorf("the note: %q", got[2].Note)
	}
	del, err := s.DeleteTargetEntry(ctx, linkforge.TargetBlock, "te-evil.example")
	if err != nil || del.Host != "te-evil.example" || del.Note != "phishing" {
		t.Errorf("DeleteTargetEntry: %+v, %v", del, err)
	}
	if _, err := s.DeleteTargetEntry(ctx, linkforge.TargetBlock, "te-evil.example"); linkforge.ErrorCode(err) != linkforge.ENotFound {
		t.Errorf("a second delete: %v, want not_found", err)
	}
	if got, _ := s.TargetEntries(ctx); len(got) != 2 {
		t.Errorf("after a delete: %d entries, want 2", len(got))
	}
	after, err := s.OperatorAudit(ctx, 100, 0)
	if err != nil {
		t.Fatal(err)
	}
	evs := after[:len(after)-len(before)]
	if len(evs) != 4 || evs[0].Action != linkforge.AuditTargetRemove || evs[0].Target != "block te-evil.example" ||
		evs[3].Action != linkforge.AuditTargetAdd || evs[3].Target != "block te-evil.example" || evs[0].Actor.Name != "ops" {
		t.Errorf("operator audit: %+v, want 3 adds and a remove", evs)
	}
}

// TargetEntriesMigration: migration 00041 with entries, down (which down
// checks leaves no table) and up again, empty and working.
func TargetEntriesMigration(t *testing.T, s linkforge.Store, down, up func(context.Context) error) {
	t.Helper()
	ctx := t.Context()
	if _, err := s.AddTargetEntry(ctx, linkforge.TargetEntry{List: linkforge.TargetBlock, Host: "mig.example"}); err != nil {
		t.Fatal(err)
	}
	if err := down(ctx); err != nil {
		t.Fatalf("migrate down: %v", err)
	}
	if err := up(ctx); err != nil {
		t.Fatalf("migrate up: %v", err)
	}
	if got, err := s.TargetEntries(ctx); err != nil || len(got) != 0 {
		t.Errorf("after down and up: %+v, %v, want no entries", got, err)
	}
	if _, err := s.AddTargetEntry(ctx, linkforge.TargetEntry{List: linkforge.TargetBlock, Host: "mig.example"}); err != nil {
		t.Errorf("add after down and up: %v", err)
	}
}
