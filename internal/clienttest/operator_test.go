package clienttest_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/client"
)

// TestClientOperator runs the operator's methods with an operator token,
// and the tenant's link state through UpdateLink, against a real server:
// disable, block (the tenant's enable refused), the operator's list and
// log, suspend and resume; a tenant's token is refused every operator
// method.
func TestClientOperator(t *testing.T) {
	s := newServer(t, serverOpts{})
	ctx := context.Background()
	secret, hash, display := linkforge.NewToken()
	if _, err := s.store.CreateOperatorToken(ctx, linkforge.OperatorToken{Name: "ops", Hash: hash, Display: display}); err != nil {
		t.Fatal(err)
	}
	op, err := client.New(s.URL, secret)
	if err != nil {
		t.Fatal(err)
	}
	c := mustClient(t, s)
	l, err := c.CreateLink(ctx, client.NewLink{URL: "https://bad.example/x", Slug: "op1"})
	if err != nil || l.State != "active" || l.BlockedReason != nil {
		t.Fatalf("CreateLink = %+v, %v", l, err)
	}
	yes, no := true, false
	if l, err = c.UpdateLink(ctx, "op1", client.LinkUpdate{Disabled: &yes}); err != nil || l.State != "disabled" {
		t.Fatalf("disable = %+v, %v", l, err)
	}
	b, err := op.BlockLink(ctx, l.ID, "malware")
	if err != nil || b.State != "blocked" || b.Tenant != "acme" || b.BlockedReason == nil || *b.BlockedReason != "malware" {
		t.Fatalf("BlockLink = %+v, %v", b, err)
	}
	_, err = c.UpdateLink(ctx, "op1", client.LinkUpdate{Disabled: &no})
	mustAPIError(t, err, http.StatusConflict, client.CodeConflict)
	page, err := op.OperatorLinks(ctx, client.OperatorLinkOptions{TargetHost: "bad.example", State: "blocked"})
	if err != nil || len(page.Links) != 1 || page.Links[0].Slug != "op1" || page.NextCursor != "" {
		t.Errorf("OperatorLinks = %+v, %v", page, err)
	}
	if ls, err := c.ListLinks(ctx, client.ListOptions{State: "blocked"}); err != nil || len(ls.Links) != 1 {
		t.Errorf("ListLinks state=blocked = %+v, %v", ls, err)
	}
	if b, err = op.UnblockLink(ctx, l.ID); err != nil || b.State != "disabled" {
		t.Errorf("UnblockLink = %+v, %v", b, err)
	}
	ts, err := op.SuspendTenant(ctx, "acme")
	if err != nil || ts.State != "suspended" || ts.SuspendedAt == nil || ts.Links != 1 {
		t.Errorf("SuspendTenant = %+v, %v", ts, err)
	}
	_, err = c.Link(ctx, "op1")
	mustAPIError(t, err, http.StatusForbidden, client.CodeForbidden)
	if ts, err = op.ResumeTenant(ctx, "acme"); err != nil || ts.State != "active" {
		t.Errorf("ResumeTenant = %+v, %v", ts, err)
	}
	all, err := op.OperatorTenants(ctx)
	if err != nil || len(all) != 1 || all[0].Name != "acme" || all[0].State != "active" {
		t.Errorf("OperatorTenants = %+v, %v", all, err)
	}
	evs, next, err := op.OperatorAudit(ctx, 2, "")
	if err != nil || len(evs) != 2 || next == "" || evs[0].Action != "tenant.resume" || evs[0].Tenant != "acme" || evs[0].Actor.Type != "operator" {
		t.Errorf("OperatorAudit = %+v, %q, %v", evs, next, err)
	}
	// A tenant's token reaches none of it.
	_, err = c.OperatorTenants(ctx)
	mustAPIError(t, err, http.StatusForbidden, client.CodeForbidden)
	_, err = c.BlockLink(ctx, l.ID, "x")
	mustAPIError(t, err, http.StatusForbidden, client.CodeForbidden)
}
