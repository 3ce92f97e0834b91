package storetest

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/linkforge/linkforge"
)

// QR settings (migration 00052): unset until written; the tenant's and
// each domain's kept apart and apart from other tenants'; an fn error
// stores nothing; a domain of another tenant is ENotFound; deleting the
// domain deletes its settings.

var testQRLogo = []byte("\x89PNG\r\n\x1a\nnot-checked-here\x00\xff")

func testQRSettings(t *testing.T, s linkforge.Store) {
	ctx := t.Context()
	ten := mustTenant(t, s, "qr-settings")
	other := mustTenant(t, s, "qr-other")
	d, err := s.CreateDomain(ctx, linkforge.Domain{TenantID: ten.ID, Host: "qr.acme.com"})
	if err != nil {
		t.Fatalf("CreateDomain: %v", err)
	}
	if got, err := s.QRSettings(ctx, ten.ID, linkforge.PublicDomainID); err != nil || got.FG != "" || got.Margin != nil || got.Logo != nil {
		t.Errorf("unset settings = %+v, %v; want the zero value", got, err)
	}
	zero := 0
	u, err := s.UpdateQRSettings(ctx, ten.ID, linkforge.PublicDomainID, func(q *linkforge.QRSettings) error {
		q.FG, q.BG, q.EC, q.Margin = "#112233", "#ffffff", "Q", &zero
		return nil
	})
	if err != nil || u.FG != "#112233" || u.Margin == nil || *u.Margin != 0 {
		t.Fatalf("UpdateQRSettings = %+v, %v", u, err)
	}
	if _, err := s.UpdateQRSettings(ctx, ten.ID, d.ID, func(q *linkforge.QRSettings) error {
		if q.FG != "" {
			t.Errorf("the domain's settings start as %+v, want unset", q)
		}
		q.Logo, q.LogoType = testQRLogo, linkforge.QRLogoPNG
		return nil
	}); err != nil {
		t.Fatalf("UpdateQRSettings of the domain: %v", err)
	}
	boom := errors.New("boom")
	if _, err := s.UpdateQRSettings(ctx, ten.ID, linkforge.PublicDomainID, func(q *linkforge.QRSettings) error {
		q.FG = "#000000"
		return boom
	}); !errors.Is(err, boom) {
		t.Errorf("fn's error: %v, want boom", err)
	}
	got, err := s.QRSettings(ctx, ten.ID, linkforge.PublicDomainID)
	if err != nil || got.FG != "#112233" || got.BG != "#ffffff" || got.EC != "Q" || got.Margin == nil || *got.Margin != 0 || got.Logo != nil || got.LogoType != "" {
		t.Errorf("tenant's settings = %+v, %v", got, err)
	}
	dom, err := s.QRSettings(ctx, ten.ID, d.ID)
	if err != nil || string(dom.Logo) != string(testQRLogo) || dom.LogoType != linkforge.QRLogoPNG || dom.FG != "" || dom.Margin != nil {
		t.Errorf("domain's settings = %+v, %v", dom, err)
	}
	if o, err := s.QRSettings(ctx, other.ID, linkforge.PublicDomainID); err != nil || o.FG != "" {
		t.Errorf("another tenant's settings = %+v, %v; want unset", o, err)
	}
	if _, err := s.UpdateQRSettings(ctx, other.ID, d.ID, func(*linkforge.QRSettings) error { return nil }); linkforge.ErrorCode(err) != linkforge.ENotFound {
		t.Errorf("another tenant's domain: %v, want ENotFound", err)
	}
	// Clearing the logo and the margin.
	if _, err := s.UpdateQRSettings(ctx, ten.ID, d.ID, func(q *linkforge.QRSettings) error {
		q.Logo, q.LogoType = nil, ""
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if dom, err := s.QRSettings(ctx, ten.ID, d.ID); err != nil || dom.Logo != nil || dom.LogoType != "" {
		t.Errorf("cleared logo = %+v, %v", dom, err)
	}
	if _, err := s.UpdateQRSettings(ctx, ten.ID, d.ID, func(q *linkforge.QRSettings) error {
		q.EC = "H"
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.DeleteDomain(ctx, ten.ID, d.Host); err != nil {
		t.Fatalf("DeleteDomain: %v", err)
	}
	if dom, err := s.QRSettings(ctx, ten.ID, d.ID); err != nil || dom.EC != "" {
		t.Errorf("a deleted domain's settings = %+v, %v; want none", dom, err)
	}
	if _, err := s.UpdateQRSettings(ctx, ten.ID, d.ID, func(*linkforge.QRSettings) error { return nil }); linkforge.ErrorCode(err) != linkforge.ENotFound {
		t.Errorf("a deleted domain: %v, want ENotFound", err)
	}

	// Made by an actor, each change is audited in its transaction: the
	// tenant's own as "tenant", a domain's by its host; a refused one not.
	actx := linkforge.WithActor(ctx, linkforge.Actor{Type: linkforge.ActorToken, ID: 7, Name: "ci"})
	d2, err := s.CreateDomain(ctx, linkforge.Domain{TenantID: ten.ID, Host: "qr2.acme.com"})
	if err != nil {
		t.Fatalf("CreateDomain: %v", err)
	}
	for _, id := range []int64{linkforge.PublicDomainID, d2.ID} {
		if _, err := s.UpdateQRSettings(actx, ten.ID, id, func(q *linkforge.QRSettings) error { q.EC = "M"; return nil }); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.UpdateQRSettings(actx, ten.ID, d2.ID, func(*linkforge.QRSettings) error { return boom }); !errors.Is(err, boom) {
		t.Errorf("fn's error: %v, want boom", err)
	}
	events, err := s.ListAudit(ctx, ten.ID, linkforge.AuditQuery{Limit: 10, Action: linkforge.AuditQRUpdate})
	if err != nil {
		t.Fatal(err)
	}
	var got2 []string
	for _, e := range events {
		got2 = append(got2, e.Action+" "+e.Target+" "+e.Actor.Name)
	}
	if want := []string{"qr.update qr2.acme.com ci", "qr.update tenant ci"}; !slices.Equal(got2, want) {
		t.Errorf("audit = %q, want %q", got2, want)
	}
}

// QRSettingsMigration checks migration 00052 with data: a tenant's
// settings with a logo, then down (down may check the table is gone) and
// up again: the tenant is there, its settings unset.
func QRSettingsMigration(t *testing.T, s linkforge.Store, down, up func(context.Context) error) {
	t.Helper()
	ctx := t.Context()
	ten := mustTenant(t, s, "qr-migration")
	if _, err := s.UpdateQRSettings(ctx, ten.ID, linkforge.PublicDomainID, func(q *linkforge.QRSettings) error {
		q.FG, q.Logo, q.LogoType = "#000000", testQRLogo, linkforge.QRLogoPNG
		return nil
	}); err != nil {
		t.Fatalf("UpdateQRSettings: %v", err)
	}
	if err := down(ctx); err != nil {
		t.Fatalf("down: %v", err)
	}
	if err := up(ctx); err != nil {
		t.Fatalf("up: %v", err)
	}
	got, err := s.QRSettings(ctx, ten.ID, linkforge.PublicDomainID)
	if err != nil || got.FG != "" || got.Logo != nil {
		t.Errorf("after down and up: %+v, %v; want unset", got, err)
	}
	if _, err := s.TenantByID(ctx, ten.ID); err != nil {
		t.Errorf("after down and up the tenant is gone: %v", err)
	}
}
