package storetest

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/linkforge/linkforge"
)

// testLinkStates: a link disabled by its tenant (UpdateLink) and blocked by
// the operator (BlockLink) keeps its clicks, tags and fields in every
// state; the tenant cannot change the switch under a block, which lifting
// gives back; the listing filters by state; every change is audited with
// its actor, the operator's in both logs.
func testLinkStates(t *testing.T, s linkforge.Store) {
	ctx := t.Context()
	ten := mustTenant(t, s, "states")
	l := newLink(ten.ID, "st-a")
	l.Tags = []string{"keep"}
	l = mustCreateLink(t, s, l)
	other := mustCreateLink(t, s, newLink(ten.ID, "st-b"))
	mustUpsert(t, s, "n1", linkforge.RollupRow{LinkID: l.ID, Bucket: minute(0), Count: 7})
	if got := mustTenantLink(t, s, ten.ID, l.Slug); got.State() != linkforge.LinkActive || got.Clicks != 7 {
		t.Fatalf("new link: state %q clicks %d, want active 7", got.State(), got.Clicks)
	}
	tenantCtx := linkforge.WithActor(ctx, linkforge.Actor{Type: linkforge.ActorToken, ID: 1, Name: "ci"})
	opCtx := linkforge.WithActor(ctx, linkforge.Actor{Type: linkforge.ActorOperator, ID: 9, Name: "ops"})

	up, err := s.UpdateLink(tenantCtx, ten.ID, linkforge.PublicDomainID, l.Slug, func(l *linkforge.Link) error {
		l.Disabled = true
		return nil
	})
	if err != nil || up.State() != linkforge.LinkDisabled || up.Clicks != 7 || !slices.Equal(up.Tags, []string{"keep"}) {
		t.Fatalf("disable: %+v, %v", up, err)
	}
	if got, err := s.LinkBySlug(ctx, linkforge.PublicDomainID, l.Slug); err != nil || !got.Disabled || got.TenantSuspended {
		t.Fatalf("LinkBySlug of a disabled link = %+v, %v", got, err)
	}

	if _, err := s.BlockLink(ctx, 1<<40, "phishing"); linkforge.ErrorCode(err) != linkforge.ENotFound {
		t.Errorf("BlockLink of an unknown id: %v, want not_found", err)
	}
	b, err := s.BlockLink(opCtx, l.ID, "phishing")
	if err != nil || b.State() != linkforge.LinkBlocked || b.BlockedReason != "phishing" || b.Clicks != 7 {
		t.Fatalf("BlockLink = %+v, %v", b, err)
	}
	got := mustTenantLink(t, s, ten.ID, l.Slug)
	if got.State() != linkforge.LinkBlocked || !got.Disabled || got.Clicks != 7 {
		t.Fatalf("blocked link reads %q disabled=%v clicks=%d", got.State(), got.Disabled, got.Clicks)
	}
	// The tenant's switch is frozen under the block; other fields are not,
	// and no update lifts the block.
	_, err = s.UpdateLink(tenantCtx, ten.ID, linkforge.PublicDomainID, l.Slug, func(l *linkforge.Link) error {
		l.Disabled = false
		return nil
	})
	wantCode(t, err, linkforge.EConflict, "enable a blocked link")
	up, err = s.UpdateLink(tenantCtx, ten.ID, linkforge.PublicDomainID, l.Slug, func(l *linkforge.Link) error {
		l.Title = "renamed"
		l.BlockedReason = ""
		return nil
	})
	if err != nil || up.State() != linkforge.LinkBlocked || up.Title != "renamed" {
		t.Fatalf("update of a blocked link: %+v, %v", up, err)
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
	if g := page(linkforge.StateBlocked); !slices.Equal(g, []string{"st-a:blocked"}) {
		t.Errorf("state=blocked: %v", g)
	}
	if g := page(linkforge.StateActive); !slices.Equal(g, []string{"st-b:active"}) {
		t.Errorf("state=active: %v", g)
	}
	if g := page(linkforge.StateDisabled); len(g) != 0 {
		t.Errorf("state=disabled while blocked: %v", g)
	}

	if b, err = s.BlockLink(opCtx, l.ID, ""); err != nil || b.State() != linkforge.LinkDisabled {
		t.Fatalf("lift the block: %+v, %v", b, err)
	}
	if g := page(linkforge.StateDisabled); !slices.Equal(g, []string{"st-a:disabled"}) {
		t.Errorf("state=disabled after the block: %v", g)
	}
	if up, err = s.UpdateLink(tenantCtx, ten.ID, linkforge.PublicDomainID, l.Slug, func(l *linkforge.Link) error {
		l.Disabled = false
		return nil
	}); err != nil || up.State() != linkforge.LinkActive || up.Clicks != 7 {
		t.Fatalf("enable: %+v, %v", up, err)
	}
	_ = other

	var actions []string
	evs, err := s.ListAudit(ctx, ten.ID, linkforge.AuditQuery{Limit: 100, Before: 0})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range slices.Backward(evs) {
		actions = append(actions, string(e.Actor.Type)+" "+e.Action+" "+e.Target)
	}
	want := []string{
		"token link.disable st-a", "token link.update st-a",
		"operator link.block st-a: phishing",
		"token link.update st-a",
		"operator link.unblock st-a",
		"token link.enable st-a", "token link.update st-a",
	}
	if !slices.Equal(actions, want) {
		t.Errorf("tenant's audit:\n got %q\nwant %q", actions, want)
	}
	ops, err := s.OperatorAudit(ctx, 100, 0)
	if err != nil {
		t.Fatal(err)
	}
	actions = nil
	for _, e := range slices.Backward(ops) {
		actions = append(actions, e.Actor.Name+" "+e.Action+" "+e.Target+" @"+e.TenantName)
	}
	if want := []string{"ops link.block st-a: phishing @states", "ops link.unblock st-a @states"}; !slices.Equal(actions, want) {
		t.Errorf("operator's audit:\n got %q\nwant %q", actions, want)
	}
}

// testOperator: operator tokens; the tenants' summaries; the links of
// every tenant by text, target host and state, paged; a suspension seen by
// the tenant's tokens, memberships and links, and lifted; operator users.
func testOperator(t *testing.T, s linkforge.Store) {
	ctx := t.Context()
	cli := linkforge.WithActor(ctx, linkforge.Actor{Type: linkforge.ActorCLI, Name: "root"})
	secret, hash, display := linkforge.NewToken()
	ot, err := s.CreateOperatorToken(cli, linkforge.OperatorToken{Name: "ops", Hash: hash, Display: display})
	if err != nil || ot.ID == 0 {
		t.Fatalf("CreateOperatorToken = %+v, %v", ot, err)
	}
	if got, err := s.OperatorTokenByHash(ctx, linkforge.HashToken(secret)); err != nil || got.ID != ot.ID || got.Name != "ops" {
		t.Fatalf("OperatorTokenByHash = %+v, %v", got, err)
	}
	_, tenantHash, _ := linkforge.NewToken()
	if _, err := s.OperatorTokenByHash(ctx, tenantHash); linkforge.ErrorCode(err) != linkforge.ENotFound {
		t.Errorf("OperatorTokenByHash of an unknown hash: %v", err)
	}
	_, h2, d2 := linkforge.NewToken()
	gone, err := s.CreateOperatorToken(ctx, linkforge.OperatorToken{Name: "gone", Hash: h2, Display: d2})
	if err != nil {
		t.Fatal(err)
	}
	wantCode(t, s.RevokeOperatorToken(ctx, gone.ID+1000), linkforge.ENotFound, "RevokeOperatorToken of an unknown id")
	for range 2 { // again: still revoked, no error
		if err := s.RevokeOperatorToken(ctx, gone.ID); err != nil {
			t.Fatalf("RevokeOperatorToken: %v", err)
		}
	}
	if _, err := s.OperatorTokenByHash(ctx, h2); linkforge.ErrorCode(err) != linkforge.ENotFound {
		t.Errorf("OperatorTokenByHash of a revoked token: %v", err)
	}

	acme, globex := mustTenant(t, s, "op-acme"), mustTenant(t, s, "op-globex")
	tok, err := s.CreateToken(ctx, linkforge.Token{TenantID: acme.ID, Hash: tenantHash, Display: "x", Role: linkforge.RoleEditor})
	if err != nil {
		t.Fatal(err)
	}
	a1 := mustCreateLink(t, s, linkforge.Link{TenantID: acme.ID, Slug: "op-a1", URL: "https://evil.test/login"})
	a2 := mustCreateLink(t, s, linkforge.Link{TenantID: acme.ID, Slug: "op-a2", URL: "https://good.test/x?q=evil.test"})
	g1 := mustCreateLink(t, s, linkforge.Link{TenantID: globex.ID, Slug: "op-g1", URL: "http://EVIL.test:8080"})
	now := time.Now().UTC()
	mustUpsert(t, s, "n1",
		linkforge.RollupRow{LinkID: a1.ID, Bucket: now.Truncate(time.Minute), Count: 4},
		linkforge.RollupRow{LinkID: a2.ID, Bucket: now.Truncate(time.Minute), Count: 1},
		linkforge.RollupRow{LinkID: g1.ID, Bucket: now.Truncate(time.Minute), Count: 2},
		// before this month: not counted
		linkforge.RollupRow{LinkID: a1.ID, Bucket: time.Date(now.Year(), now.Month(), 1, 0, 0, 0, 0, time.UTC).Add(-time.Minute), Count: 50})
	if _, err := s.InviteUser(ctx, linkforge.Invite{TenantID: acme.ID, Email: "op@example.com", Role: linkforge.RoleViewer}); err != nil {
		t.Fatal(err)
	}

	sums, err := s.OperatorTenants(ctx, now)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, ts := range sums {
		if ts.Name == "op-acme" || ts.Name == "op-globex" {
			got = append(got, ts.Name+" "+fmtInt(&ts.Links)+" "+fmtInt(&ts.ClicksMonth)+" "+fmtInt(&ts.Users)+" "+fmtTime(ts.SuspendedAt))
		}
	}
	if want := []string{"op-acme 2 5 1 nil", "op-globex 1 2 0 nil"}; !slices.Equal(got, want) {
		t.Errorf("OperatorTenants: %q, want %q", got, want)
	}

	slugs := func(q linkforge.OperatorQuery) ([]string, string) {
		t.Helper()
		p, err := s.OperatorLinks(ctx, q)
		if err != nil {
			t.Fatalf("OperatorLinks(%+v): %v", q, err)
		}
		var out []string
		for _, l := range p.Links {
			out = append(out, l.Slug)
		}
		return out, p.NextCursor
	}
	if g, _ := slugs(linkforge.OperatorQuery{TargetHost: "evil.test"}); !slices.Equal(g, []string{"op-g1", "op-a1"}) {
		t.Errorf("target_host=evil.test: %v", g)
	}
	if g, _ := slugs(linkforge.OperatorQuery{Q: "EVIL"}); !slices.Equal(g, []string{"op-g1", "op-a2", "op-a1"}) {
		t.Errorf("q=EVIL: %v", g)
	}
	g, cur := slugs(linkforge.OperatorQuery{Q: "op-", Limit: 2})
	g2, cur2 := slugs(linkforge.OperatorQuery{Q: "op-", Limit: 2, Cursor: cur})
	if !slices.Equal(g, []string{"op-g1", "op-a2"}) || cur == "" || !slices.Equal(g2, []string{"op-a1"}) || cur2 != "" {
		t.Errorf("pages: %v %q, %v %q", g, cur, g2, cur2)
	}
	if _, err := s.BlockLink(ctx, a1.ID, "phishing"); err != nil {
		t.Fatal(err)
	}
	if g, _ := slugs(linkforge.OperatorQuery{State: linkforge.LinkBlocked}); !slices.Equal(g, []string{"op-a1"}) {
		t.Errorf("state=blocked: %v", g)
	}
	_, err = s.OperatorLinks(ctx, linkforge.OperatorQuery{State: "gone"})
	wantCode(t, err, linkforge.EInvalid, "state=gone")
	_, err = s.OperatorLinks(ctx, linkforge.OperatorQuery{Cursor: "x"})
	wantCode(t, err, linkforge.EInvalid, "cursor=x")
	_, err = s.OperatorLinks(ctx, linkforge.OperatorQuery{TargetHost: "a b"})
	wantCode(t, err, linkforge.EInvalid, "target_host with a space")

	// Suspension.
	opCtx := linkforge.WithActor(ctx, linkforge.Actor{Type: linkforge.ActorOperator, ID: ot.ID, Name: "ops"})
	_, _, err = s.SetTenantSuspended(opCtx, "nobody", true)
	wantCode(t, err, linkforge.ENotFound, "suspend an unknown tenant")
	ten, keys, err := s.SetTenantSuspended(opCtx, "op-acme", true)
	if err != nil || ten.ID != acme.ID || len(keys) != 2 {
		t.Fatalf("SetTenantSuspended = %+v, %v, %v", ten, keys, err)
	}
	if tk, err := s.TokenByHash(ctx, tenantHash); err != nil || tk.ID != tok.ID || !tk.TenantSuspended {
		t.Errorf("TokenByHash of a suspended tenant's token = %+v, %v", tk, err)
	}
	// The live feeds' check drops the suspended tenant's open sockets.
	if ids, err := s.ActiveTokens(ctx, []int64{tok.ID}); err != nil || len(ids) != 0 {
		t.Errorf("ActiveTokens of a suspended tenant's token = %v, %v", ids, err)
	}
	if l, err := s.LinkBySlug(ctx, linkforge.PublicDomainID, "op-a2"); err != nil || !l.TenantSuspended {
		t.Errorf("LinkBySlug of a suspended tenant's link = %+v, %v", l, err)
	}
	if l, err := s.LinkBySlug(ctx, linkforge.PublicDomainID, "op-g1"); err != nil || l.TenantSuspended {
		t.Errorf("LinkBySlug of another tenant's link = %+v, %v", l, err)
	}
	u, err := s.UserByEmail(ctx, "op@example.com")
	if err != nil {
		t.Fatal(err)
	}
	if ms, err := s.Memberships(ctx, u.ID); err != nil || len(ms) != 1 || !ms[0].Suspended {
		t.Errorf("Memberships of a suspended tenant's user = %+v, %v", ms, err)
	}
	sums, _ = s.OperatorTenants(ctx, now)
	for _, ts := range sums {
		if (ts.Name == "op-acme") != (ts.SuspendedAt != nil) {
			t.Errorf("%s suspended at %v", ts.Name, fmtTime(ts.SuspendedAt))
		}
	}
	if _, _, err := s.SetTenantSuspended(opCtx, "op-acme", true); err != nil { // again: nothing written
		t.Fatal(err)
	}
	if _, _, err := s.SetTenantSuspended(opCtx, "op-acme", false); err != nil {
		t.Fatal(err)
	}
	if tk, err := s.TokenByHash(ctx, tenantHash); err != nil || tk.TenantSuspended {
		t.Errorf("TokenByHash after resume = %+v, %v", tk, err)
	}
	if ids, err := s.ActiveTokens(ctx, []int64{tok.ID}); err != nil || len(ids) != 1 {
		t.Errorf("ActiveTokens after resume = %v, %v", ids, err)
	}
	evs, err := s.ListAudit(ctx, acme.ID, linkforge.AuditQuery{Limit: 10, Before: 0})
	if err != nil || len(evs) < 2 || evs[0].Action != linkforge.AuditTenantResume || evs[1].Action != linkforge.AuditTenantSuspend ||
		evs[0].Actor != (linkforge.Actor{Type: linkforge.ActorOperator, ID: ot.ID, Name: "ops"}) {
		t.Errorf("tenant's audit after suspend and resume: %+v, %v", evs, err)
	}
	ops, err := s.OperatorAudit(ctx, 10, 0)
	if err != nil || len(ops) != 3 || ops[0].Action != linkforge.AuditTenantResume || ops[0].TenantName != "op-acme" ||
		ops[1].Action != linkforge.AuditTenantSuspend || ops[2].Action != linkforge.AuditOperatorToken || ops[2].Actor.Type != linkforge.ActorCLI {
		t.Errorf("operator's audit: %+v, %v", ops, err)
	}
	if page, err := s.OperatorAudit(ctx, 1, ops[0].ID); err != nil || len(page) != 1 || page[0].ID != ops[1].ID {
		t.Errorf("operator's audit before %d: %+v, %v", ops[0].ID, page, err)
	}

	// Operator users.
	if err := s.SetUserOperator(ctx, "OP@example.com", true); err != nil {
		t.Fatal(err)
	}
	if u, err := s.UserByID(ctx, u.ID); err != nil || !u.Operator {
		t.Errorf("user after SetUserOperator = %+v, %v", u, err)
	}
	wantCode(t, s.SetUserOperator(ctx, "none@example.com", true), linkforge.ENotFound, "SetUserOperator of an unknown user")
}

// OperatorMigration checks migration 00040 with data, on a store migrated
// to the latest version: a disabled link, a blocked one, a suspended
// tenant and an operator's audit event; then down (which may check the
// schema) and up again. The states are the migration's columns and go
// with its Down (the links answer again, as the release before knew
// them); the audit event stays, its actor a token named "operator: ...".
func OperatorMigration(t *testing.T, s linkforge.Store, down, up func(context.Context) error) {
	t.Helper()
	ctx := t.Context()
	ten := mustTenant(t, s, "op-migration")
	a := mustCreateLink(t, s, newLink(ten.ID, "opm-a"))
	b := mustCreateLink(t, s, newLink(ten.ID, "opm-b"))
	mustUpsert(t, s, "n1", linkforge.RollupRow{LinkID: a.ID, Bucket: minute(0), Count: 3})
	if _, err := s.UpdateLink(ctx, ten.ID, linkforge.PublicDomainID, a.Slug, func(l *linkforge.Link) error {
		l.Disabled = true
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	opCtx := linkforge.WithActor(ctx, linkforge.Actor{Type: linkforge.ActorOperator, ID: 4, Name: "ops"})
	if _, err := s.BlockLink(opCtx, b.ID, "spam"); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.SetTenantSuspended(ctx, ten.Name, true); err != nil {
		t.Fatal(err)
	}
	if err := down(ctx); err != nil {
		t.Fatalf("migrate down: %v", err)
	}
	if err := up(ctx); err != nil {
		t.Fatalf("migrate up: %v", err)
	}
	for _, slug := range []string{"opm-a", "opm-b"} {
		l, err := s.LinkBySlug(ctx, linkforge.PublicDomainID, slug)
		if err != nil || l.State() != linkforge.LinkActive || l.TenantSuspended {
			t.Errorf("%s after down and up: %+v, %v", slug, l, err)
		}
	}
	if got := mustTenantLink(t, s, ten.ID, "opm-a"); got.Clicks != 3 {
		t.Errorf("opm-a's clicks after down and up: %d, want 3", got.Clicks)
	}
	evs, err := s.ListAudit(ctx, ten.ID, linkforge.AuditQuery{Limit: 10, Before: 0})
	if err != nil || len(evs) != 1 || evs[0].Action != linkforge.AuditLinkBlock ||
		evs[0].Actor != (linkforge.Actor{Type: linkforge.ActorToken, Name: "operator: ops"}) {
		t.Errorf("audit after down and up: %+v, %v", evs, err)
	}
	// The states work again on the new columns.
	if _, err := s.BlockLink(opCtx, b.ID, "spam"); err != nil {
		t.Fatal(err)
	}
	if evs, err := s.ListAudit(ctx, ten.ID, linkforge.AuditQuery{Limit: 1, Before: 0}); err != nil || len(evs) != 1 || evs[0].Actor.Type != linkforge.ActorOperator {
		t.Errorf("operator audit after up: %+v, %v", evs, err)
	}
}
