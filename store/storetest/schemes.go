package storetest

import (
	"context"
	"slices"
	"testing"

	"github.com/linkforge/linkforge"
)

// testTargetSchemes: a tenant's allowlist is empty at first, replaced
// whole, audited, and another tenant's is its own.
func testTargetSchemes(t *testing.T, s linkforge.Store) {
	ctx := linkforge.WithActor(t.Context(), linkforge.Actor{Type: linkforge.ActorToken, ID: 1, Name: "ci"})
	ten, other := mustTenant(t, s, "schemes"), mustTenant(t, s, "schemes-other")
	if got, err := s.TargetSchemes(ctx, ten.ID); err != nil || len(got) != 0 {
		t.Fatalf("new tenant's schemes = %q, %v; want none", got, err)
	}
	if err := s.SetTargetSchemes(ctx, ten.ID, []string{"mailto", "myapp"}); err != nil {
		t.Fatal(err)
	}
	if got, err := s.TargetSchemes(ctx, ten.ID); err != nil || !slices.Equal(got, []string{"mailto", "myapp"}) {
		t.Errorf("schemes = %q, %v; want mailto myapp", got, err)
	}
	if got, err := s.TargetSchemes(ctx, other.ID); err != nil || len(got) != 0 {
		t.Errorf("other tenant's schemes = %q, %v; want none", got, err)
	}
	if err := s.SetTargetSchemes(ctx, ten.ID, nil); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.TargetSchemes(ctx, ten.ID); len(got) != 0 {
		t.Errorf("after clearing: %q", got)
	}
	if err := s.SetTargetSchemes(ctx, 1<<40, nil); linkforge.ErrorCode(err) != linkforge.ENotFound {
		t.Errorf("unknown tenant: %v, want not found", err)
	}
	events, err := s.ListAudit(ctx, ten.ID, linkforge.AuditQuery{Limit: 10, Action: linkforge.AuditTenantSchemes})
	if err != nil || len(events) != 2 || events[0].Target != "" || events[1].Target != "mailto myapp" {
		t.Errorf("audit %+v, %v; want the two changes", events, err)
	}
}

// TargetSchemesMigration: migration 00055 with data: down drops the
// column and keeps the tenant; up brings it back empty.
func TargetSchemesMigration(t *testing.T, s linkforge.Store, down, up func(context.Context) error) {
	t.Helper()
	ctx := t.Context()
	ten := mustTenant(t, s, "schemes-migration")
	if err := s.SetTargetSchemes(ctx, ten.ID, []string{"tel"}); err != nil {
		t.Fatal(err)
	}
	if err := down(ctx); err != nil {
		t.Fatalf("down: %v", err)
	}
	if err := up(ctx); err != nil {
		t.Fatalf("up: %v", err)
	}
	if got, err := s.TargetSchemes(ctx, ten.ID); err != nil || len(got) != 0 {
		t.Errorf("after down and up: %q, %v; want the tenant, without schemes", got, err)
	}
}
