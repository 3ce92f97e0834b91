package storetest

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/linkforge/linkforge"
)

// testAudit: every write made with an actor in its context adds exactly
// one audit event, in its transaction (a refused write adds none); a
// write without an actor (the system's own) adds none; ListAudit answers
// a tenant's events newest first, by cursor, and no other tenant's.
func testAudit(t *testing.T, s linkforge.Store) {
	ctx := t.Context()
	ten, other := mustTenant(t, s, "audit"), mustTenant(t, s, "audit-other")
	actor := linkforge.Actor{Type: linkforge.ActorToken, ID: 42, Name: "ci"}
	actx := linkforge.WithActor(ctx, actor)
	must := func(what string, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	refused := func(what string, err error) {
		t.Helper()
		if err == nil {
			t.Fatalf("%s: no error, want a refusal", what)
		}
	}
	start := time.Now().Add(-time.Minute)

	_, err := s.CreateLink(ctx, newLink(ten.ID, "system"))
	must("CreateLink without an actor", err)
	_, err = s.CreateLink(actx, newLink(ten.ID, "a1"))
	must("CreateLink", err)
	_, err = s.CreateLink(actx, newLink(ten.ID, "a1"))
	refused("CreateLink of a taken slug", err)
	_, err = s.UpdateLink(actx, ten.ID, linkforge.PublicDomainID, "a1", func(l *linkforge.Link) error { l.Title = "t"; return nil })
	must("UpdateLink", err)
	_, err = s.UpdateLink(actx, ten.ID, linkforge.PublicDomainID, "a1", func(*linkforge.Link) error { return linkforge.Errorf(linkforge.EInvalid, "no") })
	refused("aborted UpdateLink", err)
	res, err := s.CreateLinks(actx, []linkforge.Link{newLink(ten.ID, "b1"), newLink(ten.ID, "a1")})
	must("CreateLinks", err)
	if len(res) != 2 || res[0].Err != nil || res[1].Err == nil {
		t.Fatalf("CreateLinks = %+v, want b1 created and a1 refused", res)
	}
	must("ImportLinks", s.ImportLinks(actx, []linkforge.Link{newLink(ten.ID, "i1"), newLink(ten.ID, "i2")}))
	_, err = s.DeleteLink(actx, ten.ID, linkforge.PublicDomainID, "b1")
	must("DeleteLink", err)
	_, err = s.DeleteLink(actx, ten.ID, linkforge.PublicDomainID, "b1")
	refused("DeleteLink of an unknown slug", err)

	w, err := s.CreateWebhook(actx, linkforge.Webhook{ID: "wh_audit", TenantID: ten.ID, URL: "https://example.com/hook",
		Events: []string{linkforge.EventLinkCreated}, Secret: "whsec_AAAA"})
	must("CreateWebhook", err)
	_, err = s.SetWebhookState(actx, ten.ID, w.ID, linkforge.WebhookDisabled, time.Now())
	must("SetWebhookState", err)
	_, err = s.SetWebhookState(actx, ten.ID, w.ID, linkforge.WebhookActive, time.Now())
	must("SetWebhookState", err)
	now := time.Now().UTC().Truncate(time.Microsecond)
	ev, err := linkforge.NewWebhookTestEvent(ten.ID, w.ID, now)
	must("NewWebhookTestEvent", err)
	_, err = s.EnqueueDelivery(actx, ten.ID, w.ID, ev, now)
	must("EnqueueDelivery", err)
	_, err = s.RetryDelivery(actx, ten.ID, 1<<40, now)
	refused("RetryDelivery of an unknown delivery", err)
	_, err = s.RetryAlarm(actx, ten.ID, 1<<40, now)
	refused("RetryAlarm of an unknown alarm", err)
	must("DeleteWebhook", s.DeleteWebhook(actx, ten.ID, w.ID))

	_, hash, display := linkforge.NewToken()
	tok, err := s.CreateToken(actx, linkforge.Token{TenantID: ten.ID, Name: "deploy", Hash: hash, Display: display, Role: linkforge.RoleEditor})
	must("CreateToken", err)
	must("RevokeTenantToken", s.RevokeTenantToken(actx, ten.ID, tok.ID))
	refused("RevokeTenantToken of another tenant", s.RevokeTenantToken(actx, other.ID, tok.ID))
	must("RevokeToken", s.RevokeToken(actx, tok.ID))
	_, err = s.SetTenantQuota(actx, ten.ID, linkforge.QuotaChange{MaxLinks: limitOf(100)}, linkforge.MonthStart(now))
	must("SetTenantQuota", err)

	_, err = s.CreateDomain(actx, linkforge.Domain{TenantID: ten.ID, Host: "go.audit.example"})
	must("CreateDomain", err)
	_, err = s.CreateDomain(actx, linkforge.Domain{TenantID: ten.ID, Host: "go.audit.example"})
	refused("CreateDomain of a taken host", err)
	_, err = s.UpdateDomain(actx, ten.ID, "go.audit.example", func(d *linkforge.Domain) error {
		d.RootURL = "https://example.com/"
		return nil
	})
	must("UpdateDomain", err)
	_, err = s.UpdateDomain(actx, ten.ID, "go.audit.example", func(*linkforge.Domain) error {
		return linkforge.Errorf(linkforge.EInvalid, "no")
	})
	refused("aborted UpdateDomain", err)
	_, err = s.DeleteDomain(actx, ten.ID, "go.audit.example")
	must("DeleteDomain", err)
	_, err = s.DeleteDomain(actx, ten.ID, "go.audit.example")
	refused("DeleteDomain of an unknown host", err)

	tokID := fmt.Sprint(tok.ID)
	want := []string{
		"link.create a1", "link.update a1", "link.create b1", "link.import 2 links", "link.delete b1",
		"webhook.create wh_audit", "webhook.update wh_audit disabled", "webhook.update wh_audit active",
		"webhook.test wh_audit", "webhook.delete wh_audit",
		"token.create " + tokID, "token.revoke " + tokID, "token.revoke " + tokID, "tenant.quota audit",
		"domain.create go.audit.example", "domain.update go.audit.example", "domain.delete go.audit.example",
	}
	slices.Reverse(want) // newest first
	events, err := s.ListAudit(ctx, ten.ID, linkforge.AuditQuery{Limit: 100, Before: 0})
	must("ListAudit", err)
	var got []string
	for _, e := range events {
		got = append(got, e.Action+" "+e.Target)
		if e.Actor != actor || e.TenantID != ten.ID || e.At.Before(start) || e.At.After(time.Now().Add(time.Minute)) {
			t.Errorf("event %+v: want actor %+v, tenant %d, about now", e, actor, ten.ID)
		}
		checkTime(t, "audit At", e.At)
	}
	if !slices.Equal(got, want) {
		t.Errorf("ListAudit =\n%q\nwant\n%q", got, want)
	}

	// Pages of 5 by cursor: the same events, in the same order.
	var paged []string
	before := int64(0)
	for range 10 {
		page, err := s.ListAudit(ctx, ten.ID, linkforge.AuditQuery{Limit: 5, Before: before})
		must("ListAudit page", err)
		for _, e := range page {
			paged = append(paged, e.Action+" "+e.Target)
		}
		if len(page) < 5 {
			break
		}
		before = page[len(page)-1].ID
	}
	if !slices.Equal(paged, want) {
		t.Errorf("paged ListAudit = %q, want %q", paged, want)
	}
	// Filtered: an action, every action of a prefix ("webhook."), an
	// actor; LIKE's wildcards in a filter match only themselves.
	filtered := func(q linkforge.AuditQuery) []string {
		t.Helper()
		q.Limit = 100
		evs, err := s.ListAudit(ctx, ten.ID, q)
		must("ListAudit filtered", err)
		var out []string
		for _, e := range evs {
			out = append(out, e.Action+" "+e.Target)
		}
		return out
	}
	if got := filtered(linkforge.AuditQuery{Action: "link.update"}); !slices.Equal(got, []string{"link.update a1"}) {
		t.Errorf("action link.update: %q", got)
	}
	if got, want := filtered(linkforge.AuditQuery{Action: "webhook."}), slices.DeleteFunc(slices.Clone(want), func(e string) bool { return !strings.HasPrefix(e, "webhook.") }); !slices.Equal(got, want) {
		t.Errorf("action webhook.: %q, want %q", got, want)
	}
	for _, q := range []linkforge.AuditQuery{{Action: "link"}, {Action: "link._reate"}, {Action: "%"}, {Actor: "nobody"}, {Action: "link.create", Actor: "nobody"}} {
		if got := filtered(q); len(got) != 0 {
			t.Errorf("%+v: %q, want none", q, got)
		}
	}
	if got := filtered(linkforge.AuditQuery{Actor: actor.Name, Action: "domain.delete"}); !slices.Equal(got, []string{"domain.delete go.audit.example"}) {
		t.Errorf("actor %q, action domain.delete: %q", actor.Name, got)
	}
	if evs, err := s.ListAudit(ctx, other.ID, linkforge.AuditQuery{Limit: 100, Before: 0}); err != nil || len(evs) != 0 {
		t.Errorf("another tenant's ListAudit = %+v, %v; want none", evs, err)
	}
	_, err = s.ListAudit(ctx, ten.ID, linkforge.AuditQuery{Limit: 0, Before: 0})
	wantCode(t, err, linkforge.EInvalid, "ListAudit with limit 0")

	// The CLI's events carry no id.
	cli := linkforge.Actor{Type: linkforge.ActorCLI, Name: "root"}
	_, err = s.CreateLink(linkforge.WithActor(ctx, cli), newLink(ten.ID, "c1"))
	must("CreateLink by the CLI", err)
	events, err = s.ListAudit(ctx, ten.ID, linkforge.AuditQuery{Limit: 1, Before: 0})
	if err != nil || len(events) != 1 || events[0].Actor != cli || events[0].Target != "c1" {
		t.Errorf("the CLI's event = %+v, %v; want %+v on c1", events, err, cli)
	}
}
