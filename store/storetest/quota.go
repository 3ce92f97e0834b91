package storetest

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/linkforge/linkforge"
)

// Tenant quotas and click grants (ADR 016).

func mustUsage(t *testing.T, s linkforge.Store, tenantID int64, month time.Time) linkforge.TenantUsage {
	t.Helper()
	u, err := s.TenantUsage(t.Context(), tenantID, month)
	if err != nil {
		t.Fatalf("TenantUsage: %v", err)
	}
	return u
}

func setQuota(t *testing.T, s linkforge.Store, tenantID int64, ch linkforge.QuotaChange) linkforge.TenantUsage {
	t.Helper()
	u, err := s.SetTenantQuota(t.Context(), tenantID, ch, linkforge.MonthStart(time.Now()))
	if err != nil {
		t.Fatalf("SetTenantQuota: %v", err)
	}
	return u
}

func limitOf(n int64) linkforge.QuotaValue { return linkforge.QuotaValue{Set: true, Value: &n} }

func limitString(l linkforge.Limit) string {
	if l == nil {
		return "none"
	}
	return fmt.Sprint(*l)
}

// testTenantQuota: setting one quota leaves the other; none removes it;
// the usage counts links and this month's flushed clicks only.
func testTenantQuota(t *testing.T, s linkforge.Store) {
	ctx := t.Context()
	ten := mustTenant(t, s, "acme")
	other := mustTenant(t, s, "other")
	month := linkforge.MonthStart(t0)

	u := mustUsage(t, s, ten.ID, month)
	if u.Name != "acme" || u.Links != 0 || u.MaxLinks != nil || u.MaxClicksPerMonth != nil || u.ClicksThisMonth != 0 {
		t.Fatalf("fresh tenant usage = %+v", u)
	}
	u = setQuota(t, s, ten.ID, linkforge.QuotaChange{MaxLinks: limitOf(5)})
	if limitString(u.MaxLinks) != "5" || u.MaxClicksPerMonth != nil {
		t.Fatalf("after max_links 5: %s / %s", limitString(u.MaxLinks), limitString(u.MaxClicksPerMonth))
	}
	u = setQuota(t, s, ten.ID, linkforge.QuotaChange{MaxClicksPerMonth: limitOf(100)})
	if limitString(u.MaxLinks) != "5" || limitString(u.MaxClicksPerMonth) != "100" {
		t.Fatalf("after max_clicks_per_month 100: %s / %s", limitString(u.MaxLinks), limitString(u.MaxClicksPerMonth))
	}
	u = setQuota(t, s, ten.ID, linkforge.QuotaChange{MaxLinks: linkforge.QuotaValue{Set: true}})
	if u.MaxLinks != nil || limitString(u.MaxClicksPerMonth) != "100" {
		t.Fatalf("after max_links none: %s / %s", limitString(u.MaxLinks), limitString(u.MaxClicksPerMonth))
	}
	if _, err := s.SetTenantQuota(ctx, ten.ID, linkforge.QuotaChange{MaxLinks: limitOf(-1)}, month); linkforge.ErrorCode(err) != linkforge.EInvalid {
		t.Fatalf("negative max_links: %v, want invalid", err)
	}
	if _, err := s.SetTenantQuota(ctx, 1<<40, linkforge.QuotaChange{MaxLinks: limitOf(1)}, month); linkforge.ErrorCode(err) != linkforge.ENotFound {
		t.Fatalf("unknown tenant: %v, want not_found", err)
	}

	a := mustCreateLink(t, s, newLink(ten.ID, "qa"))
	b := mustCreateLink(t, s, newLink(ten.ID, "qb"))
	mustCreateLink(t, s, newLink(other.ID, "qo"))
	if err := s.UpsertRollup(ctx, "n1", []linkforge.RollupRow{
		{LinkID: a.ID, Bucket: month.Add(-time.Minute), Count: 1000}, // last month
		{LinkID: a.ID, Bucket: month, Count: 7},
		{LinkID: b.ID, Bucket: month.Add(50 * time.Hour), Count: 5},
	}); err != nil {
		t.Fatalf("UpsertRollup: %v", err)
	}
	if err := s.UpsertRollup(ctx, "n2", []linkforge.RollupRow{{LinkID: b.ID, Bucket: month.Add(time.Hour), Count: 3}}); err != nil {
		t.Fatalf("UpsertRollup: %v", err)
	}
	u = mustUsage(t, s, ten.ID, month)
	if u.Links != 2 || u.ClicksThisMonth != 15 {
		t.Fatalf("usage = %d links, %d clicks this month; want 2, 15", u.Links, u.ClicksThisMonth)
	}
	if _, err := s.DeleteLink(ctx, ten.ID, linkforge.PublicDomainID, "qb"); err != nil {
		t.Fatalf("DeleteLink: %v", err)
	}
	if u = mustUsage(t, s, ten.ID, month); u.Links != 1 {
		t.Fatalf("after a delete: %d links, want 1", u.Links)
	}

	all, err := s.MonthlyQuotaUsage(ctx, month)
	if err != nil {
		t.Fatalf("MonthlyQuotaUsage: %v", err)
	}
	if len(all) != 1 || all[0].TenantID != ten.ID || limitString(all[0].MaxClicksPerMonth) != "100" {
		t.Fatalf("MonthlyQuotaUsage = %+v, want acme only", all)
	}
}

// testMaxLinks: single, bulk (per item) and import creates stop at
// max_links with quota_exceeded; 0 allows none; a delete frees a place.
func testMaxLinks(t *testing.T, s linkforge.Store) {
	ctx := t.Context()
	ten := mustTenant(t, s, "acme")
	other := mustTenant(t, s, "other")
	setQuota(t, s, ten.ID, linkforge.QuotaChange{MaxLinks: limitOf(3)})
	for i := range 3 {
		mustCreateLink(t, s, newLink(ten.ID, fmt.Sprintf("m%d", i)))
	}
	exp := time.Now().Add(time.Hour)
	for _, l := range []linkforge.Link{newLink(ten.ID, "m3"), {TenantID: ten.ID, Slug: "m4", URL: "https://example.com/", ExpiresAt: &exp}} {
		if _, err := s.CreateLink(ctx, l); linkforge.ErrorCode(err) != linkforge.EQuotaExceeded {
			t.Fatalf("CreateLink %s past max_links: %v, want quota_exceeded", l.Slug, err)
		}
	}
	if _, err := s.TenantLink(ctx, ten.ID, linkforge.PublicDomainID, "m3"); linkforge.ErrorCode(err) != linkforge.ENotFound {
		t.Fatalf("refused link exists: %v", err)
	}
	mustCreateLink(t, s, newLink(other.ID, "o1")) // other tenants are not limited
	imp, ok := s.(importer)
	if !ok {
		t.Fatalf("%T has no ImportLinks", s)
	}
	if err := imp.ImportLinks(ctx, []linkforge.Link{newLink(ten.ID, "i1")}); linkforge.ErrorCode(err) != linkforge.EQuotaExceeded {
		t.Fatalf("ImportLinks past max_links: %v, want quota_exceeded", err)
	}

	if _, err := s.DeleteLink(ctx, ten.ID, linkforge.PublicDomainID, "m0"); err != nil {
		t.Fatalf("DeleteLink: %v", err)
	}
	setQuota(t, s, ten.ID, linkforge.QuotaChange{MaxLinks: limitOf(5)}) // 2 links, room for 3
	// Bulk: a taken slug gives its place to a later item.
	res, err := s.CreateLinks(ctx, []linkforge.Link{
		newLink(ten.ID, "b0"), newLink(ten.ID, "o1"), newLink(ten.ID, "b1"), newLink(ten.ID, "b2"), newLink(ten.ID, "b3"),
	})
	if err != nil {
		t.Fatalf("CreateLinks: %v", err)
	}
	want := []string{"", linkforge.EConflict, "", "", linkforge.EQuotaExceeded}
	for i, r := range res {
		if got := linkforge.ErrorCode(r.Err); got != want[i] {
			t.Errorf("bulk item %d: %q, want %q", i, got, want[i])
		}
	}
	if u := mustUsage(t, s, ten.ID, linkforge.MonthStart(t0)); u.Links != 5 {
		t.Fatalf("links = %d, want 5", u.Links)
	}
	setQuota(t, s, ten.ID, linkforge.QuotaChange{MaxLinks: linkforge.QuotaValue{Set: true}})
	if err := imp.ImportLinks(ctx, []linkforge.Link{newLink(ten.ID, "i1"), newLink(ten.ID, "i2")}); err != nil {
		t.Fatalf("ImportLinks without a limit: %v", err)
	}
	t2 := mustTenant(t, s, "zero")
	setQuota(t, s, t2.ID, linkforge.QuotaChange{MaxLinks: limitOf(0)})
	if _, err := s.CreateLink(ctx, newLink(t2.ID, "z0")); linkforge.ErrorCode(err) != linkforge.EQuotaExceeded {
		t.Fatalf("max_links 0: %v, want quota_exceeded", err)
	}
}

// testMaxLinksConcurrent: 50 concurrent creates against max_links 20
// create exactly 20.
func testMaxLinksConcurrent(t *testing.T, s linkforge.Store) {
	ten := mustTenant(t, s, "acme")
	setQuota(t, s, ten.ID, linkforge.QuotaChange{MaxLinks: limitOf(20)})
	var (
		wg            sync.WaitGroup
		mu            sync.Mutex
		created, quot int
	)
	for i := range 50 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var err error
			if i%5 == 0 { // some through the bulk path
				var res []linkforge.BulkResult
				res, err = s.CreateLinks(t.Context(), []linkforge.Link{newLink(ten.ID, fmt.Sprintf("c%d", i))})
				if err == nil {
					err = res[0].Err
				}
			} else {
				_, err = s.CreateLink(t.Context(), newLink(ten.ID, fmt.Sprintf("c%d", i)))
			}
			mu.Lock()
			defer mu.Unlock()
			switch linkforge.ErrorCode(err) {
			case "":
				created++
			case linkforge.EQuotaExceeded:
				quot++
			default:
				t.Errorf("create %d: %v", i, err)
			}
		}()
	}
	wg.Wait()
	if created != 20 || quot != 30 {
		t.Fatalf("created %d, refused %d; want 20, 30", created, quot)
	}
	if u := mustUsage(t, s, ten.ID, linkforge.MonthStart(t0)); u.Links != 20 {
		t.Fatalf("link_count = %d, want 20", u.Links)
	}
}

// testClickGrants: the grants of a limited link never sum past max_clicks;
// a release gives clicks back; an unlimited link is granted nothing.
func testClickGrants(t *testing.T, s linkforge.Store) {
	ctx := t.Context()
	ten := mustTenant(t, s, "acme")
	l := newLink(ten.ID, "lim")
	l.MaxClicks = ptr(int64(10))
	l = mustCreateLink(t, s, l)

	g, left, err := s.ReserveClicks(ctx, l.ID, "a", 4)
	if err != nil || g != 4 || left != 6 {
		t.Fatalf("reserve 4 for a: %d, %d, %v; want 4, 6", g, left, err)
	}
	if g, left, err = s.ReserveClicks(ctx, l.ID, "b", 8); err != nil || g != 6 || left != 0 {
		t.Fatalf("reserve 8 for b: %d, %d, %v; want 6 (all that is left), 0", g, left, err)
	}
	if g, _, err = s.ReserveClicks(ctx, l.ID, "a", 1); err != nil || g != 4 {
		t.Fatalf("reserve past the limit: %d, %v; want a's 4 unchanged", g, err)
	}
	if err := s.ReleaseClicks(ctx, l.ID, "b", 2); err != nil {
		t.Fatalf("ReleaseClicks: %v", err)
	}
	if err := s.ReleaseClicks(ctx, l.ID, "b", 5); err != nil { // never raises
		t.Fatalf("ReleaseClicks: %v", err)
	}
	if g, left, err = s.ReserveClicks(ctx, l.ID, "a", 10); err != nil || g != 8 || left != 0 {
		t.Fatalf("reserve after b released 4: %d, %d, %v; want 8, 0", g, left, err)
	}
	if err := s.UpsertRollup(ctx, "a", []linkforge.RollupRow{{LinkID: l.ID, Bucket: t0, Count: 3}}); err != nil {
		t.Fatalf("UpsertRollup: %v", err)
	}
	if n, err := s.NodeClickTotal(ctx, l.ID, "a"); err != nil || n != 3 {
		t.Fatalf("NodeClickTotal(a) = %d, %v; want 3", n, err)
	}
	if n, err := s.NodeClickTotal(ctx, l.ID, "b"); err != nil || n != 0 {
		t.Fatalf("NodeClickTotal(b) = %d, %v; want 0", n, err)
	}

	// Clicks counted without a grant (before the link had a limit) count.
	old := newLink(ten.ID, "old")
	old.MaxClicks = ptr(int64(10))
	old = mustCreateLink(t, s, old)
	if err := s.UpsertRollup(ctx, "legacy", []linkforge.RollupRow{{LinkID: old.ID, Bucket: t0, Count: 6}}); err != nil {
		t.Fatalf("UpsertRollup: %v", err)
	}
	if g, left, err := s.ReserveClicks(ctx, old.ID, "n", 10); err != nil || g != 4 || left != 0 {
		t.Fatalf("reserve beside 6 ungranted clicks: %d, %d, %v; want 4, 0", g, left, err)
	}
	if g, _, err := s.ReserveClicks(ctx, old.ID, "legacy", 1); err != nil || g != 6 {
		t.Fatalf("legacy node's share: %d, %v; want its 6 clicks", g, err)
	}

	free := mustCreateLink(t, s, newLink(ten.ID, "free"))
	if g, _, err := s.ReserveClicks(ctx, free.ID, "a", 5); err != nil || g != 0 {
		t.Fatalf("reserve on an unlimited link: %d, %v; want 0", g, err)
	}
	if _, _, err := s.ReserveClicks(ctx, 1<<40, "a", 5); linkforge.ErrorCode(err) != linkforge.ENotFound {
		t.Fatalf("reserve on an unknown link: %v; want not_found", err)
	}

	// Concurrent reservations of three nodes sum to exactly max_clicks.
	hot := newLink(ten.ID, "hot")
	hot.MaxClicks = ptr(int64(100))
	hot = mustCreateLink(t, s, hot)
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		final = map[string]int64{}
	)
	for _, node := range []string{"x", "y", "z"} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 30 {
				g, _, err := s.ReserveClicks(ctx, hot.ID, node, 3)
				if err != nil {
					t.Errorf("reserve: %v", err)
					return
				}
				mu.Lock()
				final[node] = g
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if sum := final["x"] + final["y"] + final["z"]; sum != 100 {
		t.Fatalf("grants %v sum to %d, want 100", final, sum)
	}
}
