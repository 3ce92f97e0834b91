package storetest

import (
	"context"
	"slices"
	"testing"

	"github.com/linkforge/linkforge"
)

// testUnsafeLinks: a link a check flags (SetLinkUnsafe) keeps its clicks
// and fields, reads unsafe from every read (LinkBySlug for the redirect
// included), survives the tenant's updates, is listed by the unsafe
// filters of both listings, and is cleared; each change is audited in
// both logs, and a block wins over the flag.
func testUnsafeLinks(t *testing.T, s linkforge.Store) {
	ctx := t.Context()
	ten := mustTenant(t, s, "unsafe")
	l := mustCreateLink(t, s, newLink(ten.ID, "us-a"))
	mustCreateLink(t, s, newLink(ten.ID, "us-b"))
	mustUpsert(t, s, "n1", linkforge.RollupRow{LinkID: l.ID, Bucket: minute(0), Count: 5})
	checkCtx := linkforge.WithActor(ctx, linkforge.Actor{Type: linkforge.ActorOperator, Name: "target check"})

	if _, err := s.SetLinkUnsafe(ctx, 1<<40, "x"); linkforge.ErrorCode(err) != linkforge.ENotFound {
		t.Errorf("SetLinkUnsafe of an unknown id: %v, want not_found", err)
	}
	u, err := s.SetLinkUnsafe(checkCtx, l.ID, "blocklist: evil.example")
	if err != nil || u.State() != linkforge.LinkUnsafe || u.UnsafeReason != "blocklist: evil.example" || u.Clicks != 5 {
		t.Fatalf("SetLinkUnsafe = %+v, %v", u, err)
	}
	if got, err := s.LinkBySlug(ctx, linkforge.PublicDomainID, l.Slug); err != nil || got.UnsafeReason != "blocklist: evil.example" {
		t.Fatalf("LinkBySlug of an unsafe link = %+v, %v", got, err)
	}
	// The same flag again writes nothing (no second audit event).
	if _, err := s.SetLinkUnsafe(checkCtx, l.ID, "blocklist: evil.example"); err != nil {
		t.Fatal(err)
	}
	up, err := s.UpdateLink(ctx, ten.ID, linkforge.PublicDomainID, l.Slug, func(l *linkforge.Link) error {
		l.Title = "renamed"
		l.UnsafeReason = ""
		return nil
	})
	if err != nil || up.State() != linkforge.LinkUnsafe || up.Title != "renamed" {
		t.Fatalf("tenant's update of an unsafe link: %+v, %v", up, err)
	}
	if got := mustTenantLink(t, s, ten.ID, l.Slug); got.UnsafeReason != "blocklist: evil.example" {
		t.Fatalf("an update cleared the flag: %+v", got)
	}
	page := func(st linkforge.LinkState) []string {
		p, err := s.QueryLinks(ctx, linkforge.ListQuery{TenantID: ten.ID, State: st, Sort: linkforge.SortSlug})
		if err != nil {
			t.Fatalf("QueryLinks(%s): %v", st, err)
		}
		var out []string
		for _, l := range p.Links {
			out = append(out, l.Slug+":"+string(l.State()))
		}
		return out
	}
	if g := page(linkforge.StateUnsafe); !slices.Equal(g, []string{"us-a:unsafe"}) {
		t.Errorf("state=unsafe: %v", g)
	}
	if g := page(linkforge.StateActive); !slices.Equal(g, []string{"us-b:active"}) {
		t.Errorf("state=active: %v", g)
	}
	op, err := s.OperatorLinks(ctx, linkforge.OperatorQuery{State: linkforge.LinkUnsafe, Limit: 100})
	if err != nil || len(op.Links) != 1 || op.Links[0].ID != l.ID {
		t.Errorf("operator's state=unsafe: %+v, %v", op.Links, err)
	}
	// A block wins; lifting it gives the flag back.
	if b, err := s.BlockLink(ctx, l.ID, "spam"); err != nil || b.State() != linkforge.LinkBlocked {
		t.Fatalf("block an unsafe link: %+v, %v", b, err)
	}
	if g := page(linkforge.StateUnsafe); len(g) != 0 {
		t.Errorf("state=unsafe while blocked: %v", g)
	}
	if b, err := s.BlockLink(ctx, l.ID, ""); err != nil || b.State() != linkforge.LinkUnsafe {
		t.Fatalf("unblock: %+v, %v", b, err)
	}
	opCtx := linkforge.WithActor(ctx, linkforge.Actor{Type: linkforge.ActorOperator, ID: 3, Name: "ops"})
	if c, err := s.SetLinkUnsafe(opCtx, l.ID, ""); err != nil || c.State() != linkforge.LinkActive || c.Clicks != 5 {
		t.Fatalf("clear the flag: %+v, %v", c, err)
	}
	evs, err := s.ListAudit(ctx, ten.ID, linkforge.AuditQuery{Limit: 100, Before: 0})
	if err != nil {
		t.Fatal(err)
	}
	var actions []string
	for _, e := range slices.Backward(evs) {
		if e.Action == linkforge.AuditLinkUnsafe || e.Action == linkforge.AuditLinkSafe {
			actions = append(actions, e.Actor.Name+" "+e.Action+" "+e.Target)
		}
	}
	if want := []string{"target check link.unsafe us-a: blocklist: evil.example", "ops link.safe us-a"}; !slices.Equal(actions, want) {
		t.Errorf("tenant's audit:\n got %q\nwant %q", actions, want)
	}
	opEvs, err := s.OperatorAudit(ctx, 100, 0)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range opEvs {
		if e.TenantName == ten.Name && (e.Action == linkforge.AuditLinkUnsafe || e.Action == linkforge.AuditLinkSafe) {
			n++
		}
	}
	if n != 2 {
		t.Errorf("operator's log has %d unsafe events of the tenant, want 2", n)
	}
}

// UnsafeMigration checks migration 00042 with an unsafe link, on a store
// migrated to the latest version: down (which may check the schema) and
// up again leave the link active with its clicks, and the flag works on
// the new column.
func UnsafeMigration(t *testing.T, s linkforge.Store, down, up func(context.Context) error) {
	t.Helper()
	ctx := t.Context()
	ten := mustTenant(t, s, "unsafe-migration")
	l := mustCreateLink(t, s, newLink(ten.ID, "usm-a"))
	mustUpsert(t, s, "n1", linkforge.RollupRow{LinkID: l.ID, Bucket: minute(0), Count: 4})
	if _, err := s.SetLinkUnsafe(ctx, l.ID, "threat-dns"); err != nil {
		t.Fatal(err)
	}
	if err := down(ctx); err != nil {
		t.Fatalf("migrate down: %v", err)
	}
	if err := up(ctx); err != nil {
		t.Fatalf("migrate up: %v", err)
	}
	if got := mustTenantLink(t, s, ten.ID, "usm-a"); got.State() != linkforge.LinkActive || got.Clicks != 4 {
		t.Errorf("after down and up: state %q clicks %d, want active 4", got.State(), got.Clicks)
	}
	if got, err := s.SetLinkUnsafe(ctx, l.ID, "threat-dns"); err != nil || got.State() != linkforge.LinkUnsafe {
		t.Errorf("flag after up: %+v, %v", got, err)
	}
}

// testLinkHealth: a link is unchecked until SetLinkHealth records a
// check, which every read returns (LinkBySlug too); the health filter of
// the listing; a tenant's update keeps it; ENotFound for no link.
func testLinkHealth(t *testing.T, s linkforge.Store) {
	ctx := t.Context()
	ten := mustTenant(t, s, "health")
	l := mustCreateLink(t, s, newLink(ten.ID, "hl-a"))
	mustCreateLink(t, s, newLink(ten.ID, "hl-b"))
	if l.Health.Stated() != linkforge.HealthUnchecked {
		t.Fatalf("new link's health: %+v", l.Health)
	}
	if _, err := s.SetLinkHealth(ctx, 1<<40, linkforge.LinkHealth{State: linkforge.HealthOK}); linkforge.ErrorCode(err) != linkforge.ENotFound {
		t.Errorf("SetLinkHealth of an unknown id: %v", err)
	}
	at := minute(3)
	h := linkforge.LinkHealth{State: linkforge.HealthBroken, Status: 404, CheckedAt: at, Error: "HTTP 404"}
	got, err := s.SetLinkHealth(ctx, l.ID, h)
	if err != nil || got.Health == nil || *got.Health != h {
		t.Fatalf("SetLinkHealth = %+v, %v", got.Health, err)
	}
	if r, err := s.LinkBySlug(ctx, linkforge.PublicDomainID, l.Slug); err != nil || r.Health == nil || *r.Health != h {
		t.Errorf("LinkBySlug health = %+v, %v", r.Health, err)
	}
	if _, err := s.UpdateLink(ctx, ten.ID, linkforge.PublicDomainID, l.Slug, func(l *linkforge.Link) error {
		l.Title = "x"
		l.Health = nil
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if r := mustTenantLink(t, s, ten.ID, l.Slug); r.Health == nil || *r.Health != h {
		t.Errorf("after an update: %+v", r.Health)
	}
	for state, want := range map[string]string{linkforge.HealthBroken: "hl-a", linkforge.HealthUnchecked: "hl-b", linkforge.HealthOK: ""} {
		p, err := s.QueryLinks(ctx, linkforge.ListQuery{TenantID: ten.ID, Health: state})
		if err != nil || (want == "" && len(p.Links) != 0) || (want != "" && (len(p.Links) != 1 || p.Links[0].Slug != want)) {
			t.Errorf("health=%s: %+v, %v; want %q", state, p.Links, err, want)
		}
	}
}
