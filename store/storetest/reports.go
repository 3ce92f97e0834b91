package storetest

import (
	"context"
	"testing"

	"github.com/linkforge/linkforge"
)

// testReports: reports are stored with their link (slug and tenant read
// back) or none, listed newest first, open ones alone on request, paged;
// a resolution is recorded once (EConflict after), audited in the
// operator's log; a deleted link leaves its reports without one.
func testReports(t *testing.T, s linkforge.Store) {
	ctx := t.Context()
	ten := mustTenant(t, s, "reports")
	l := mustCreateLink(t, s, newLink(ten.ID, "rp-a"))
	gone := mustCreateLink(t, s, newLink(ten.ID, "rp-b"))
	a, err := s.CreateReport(ctx, linkforge.Report{LinkID: l.ID, URL: "https://sho.rt/rp-a", Reason: "phishing", Email: "x@example.com"})
	if err != nil || a.ID == 0 || a.Slug != "rp-a" || a.Tenant != "reports" || a.CreatedAt.IsZero() || a.ResolvedAt != nil {
		t.Fatalf("CreateReport = %+v, %v", a, err)
	}
	b, err := s.CreateReport(ctx, linkforge.Report{URL: "https://sho.rt/nothing", Reason: "spam"})
	if err != nil || b.LinkID != 0 || b.Slug != "" {
		t.Fatalf("CreateReport without a link = %+v, %v", b, err)
	}
	c, err := s.CreateReport(ctx, linkforge.Report{LinkID: gone.ID, URL: "https://sho.rt/rp-b", Reason: "malware"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.DeleteLink(ctx, ten.ID, linkforge.PublicDomainID, gone.Slug); err != nil {
		t.Fatal(err)
	}
	all, err := s.Reports(ctx, false, 10, 0)
	if err != nil || len(all) != 3 || all[0].ID != c.ID || all[0].LinkID != 0 || all[2].ID != a.ID || all[2].Email != "x@example.com" {
		t.Fatalf("Reports = %+v, %v", all, err)
	}
	if page, err := s.Reports(ctx, false, 1, c.ID); err != nil || len(page) != 1 || page[0].ID != b.ID {
		t.Errorf("Reports before %d = %+v, %v", c.ID, page, err)
	}
	opCtx := linkforge.WithActor(ctx, linkforge.Actor{Type: linkforge.ActorOperator, ID: 2, Name: "ops"})
	r, err := s.ResolveReport(opCtx, a.ID, linkforge.ReportBlock)
	if err != nil || r.Resolution != linkforge.ReportBlock || r.ResolvedAt == nil {
		t.Fatalf("ResolveReport = %+v, %v", r, err)
	}
	wantCode(t, func() error { _, err := s.ResolveReport(opCtx, a.ID, linkforge.ReportDismiss); return err }(), linkforge.EConflict, "resolve twice")
	wantCode(t, func() error { _, err := s.ResolveReport(opCtx, 1<<40, linkforge.ReportDismiss); return err }(), linkforge.ENotFound, "resolve unknown")
	open, err := s.Reports(ctx, true, 10, 0)
	if err != nil || len(open) != 2 {
		t.Errorf("open reports = %+v, %v", open, err)
	}
	evs, err := s.OperatorAudit(ctx, 10, 0)
	if err != nil || len(evs) == 0 || evs[0].Action != linkforge.AuditReportBlock || evs[0].Actor.Name != "ops" {
		t.Errorf("operator audit = %+v, %v", evs, err)
	}
}

// ReportsMigration checks migration 00043 with a report: down (which may
// check the schema) and up again leave no report, and reports work.
func ReportsMigration(t *testing.T, s linkforge.Store, down, up func(context.Context) error) {
	t.Helper()
	ctx := t.Context()
	ten := mustTenant(t, s, "rep-migration")
	l := mustCreateLink(t, s, newLink(ten.ID, "rpm-a"))
	if _, err := s.CreateReport(ctx, linkforge.Report{LinkID: l.ID, URL: "https://sho.rt/rpm-a", Reason: "x"}); err != nil {
		t.Fatal(err)
	}
	if err := down(ctx); err != nil {
		t.Fatalf("migrate down: %v", err)
	}
	if err := up(ctx); err != nil {
		t.Fatalf("migrate up: %v", err)
	}
	if got, err := s.Reports(ctx, false, 10, 0); err != nil || len(got) != 0 {
		t.Errorf("after down and up: %+v, %v", got, err)
	}
	if _, err := s.CreateReport(ctx, linkforge.Report{LinkID: l.ID, URL: "https://sho.rt/rpm-a", Reason: "x"}); err != nil {
		t.Errorf("report after up: %v", err)
	}
}
