package storetest

import (
	"reflect"
	"testing"
	"time"

	"github.com/linkforge/linkforge"
)

// retentionView is everything a retention run must leave unchanged: the
// totals, the daily aggregates behind /stats, /stats/links and the
// breakdowns, the links' click totals and the per-node totals that
// max_clicks relies on.
type retentionView struct {
	TenantDays, LinkDays     linkforge.Stats
	TenantHours              linkforge.Stats
	Top                      linkforge.TopLinks
	Countries, LinkCountries linkforge.Breakdown
	Traffic                  linkforge.Breakdown
	Clicks, Total, NodeTotal []int64
}

func viewRetention(t *testing.T, s linkforge.Store, ten int64, links []linkforge.Link, from, to time.Time) retentionView {
	t.Helper()
	v := retentionView{
		TenantDays:  mustStats(t, s, linkforge.StatsQuery{TenantID: ten, From: from, To: to, Interval: linkforge.Day}),
		TenantHours: mustStats(t, s, linkforge.StatsQuery{TenantID: ten, From: from, To: to, Interval: linkforge.Hour}),
		LinkDays:    mustStats(t, s, linkforge.StatsQuery{TenantID: ten, LinkID: links[0].ID, From: from, To: to, Interval: linkforge.Day}),
		Top:         mustTopLinks(t, s, linkforge.TopLinksQuery{TenantID: ten, From: from, To: to, Limit: 10}),
		Countries: mustBreakdown(t, s, linkforge.BreakdownQuery{TenantID: ten, Dimension: linkforge.DimCountry,
			From: from, To: to, Limit: 10}),
		LinkCountries: mustBreakdown(t, s, linkforge.BreakdownQuery{TenantID: ten, LinkID: links[0].ID,
			Dimension: linkforge.DimCountry, From: from, To: to, Limit: 10}),
		Traffic: mustBreakdown(t, s, linkforge.BreakdownQuery{TenantID: ten, Dimension: linkforge.DimTraffic,
			From: from, To: to, Limit: 10}),
	}
	for _, l := range links {
		v.Clicks = append(v.Clicks, mustTenantLink(t, s, ten, l.Slug).Clicks)
		n, err := s.ClickTotal(t.Context(), l.ID)
		if err != nil {
			t.Fatal(err)
		}
		v.Total = append(v.Total, n)
		for _, node := range []string{"n1", "n2"} {
			n, err := s.NodeClickTotal(t.Context(), l.ID, node)
			if err != nil {
				t.Fatal(err)
			}
			v.NodeTotal = append(v.NodeTotal, n)
		}
	}
	return v
}

// runPrune runs every batch of one kind with a bound of limit, as the
// retention job does, and returns the rows removed.
func runPrune(t *testing.T, s linkforge.Store, kind linkforge.PruneKind, before time.Time, limit int) int64 {
	t.Helper()
	var removed int64
	p := linkforge.Prune{Kind: kind, Before: before, Limit: limit}
	for range 1000 {
		res, err := s.Prune(t.Context(), p)
		if err != nil {
			t.Fatalf("Prune(%+v): %v", p, err)
		}
		removed += res.Removed
		if res.Next == 0 {
			return removed
		}
		p.After = res.Next
	}
	t.Fatalf("Prune(%s) did not finish in 1000 batches", kind)
	return 0
}

// testRetention: removing minute rows and hourly dimension rows past their
// bounds changes no total, daily aggregate or per-node total; the rows
// before the bound are gone and the later ones stay; a link deleted after
// a run still leaves every aggregate (its old days included); the job
// lease lets one owner at a time run a job.
func testRetention(t *testing.T, s linkforge.Store) {
	ctx := t.Context()
	ten := mustTenant(t, s, "retention")
	a := mustCreateLink(t, s, newLink(ten.ID, "ret-a"))
	b := mustCreateLink(t, s, newLink(ten.ID, "ret-b"))
	links := []linkforge.Link{a, b}
	// Hours -1200 (50 days back), -480 (20 days) and 0; bounds at -240
	// (minutes) and -960 (hours): the first hour loses both, the second
	// only its minutes.
	old, mid, cur := -1200, -480, 0
	for _, h := range []int{old, mid, cur} {
		for i, node := range []string{"n1", "n2"} {
			n := int64(h/-10 + 3 + i)
			rows := []linkforge.RollupRow{
				{LinkID: a.ID, Bucket: ahour(h).Add(5 * time.Minute), Count: n},
				{LinkID: a.ID, Bucket: ahour(h).Add(6 * time.Minute), Count: 2},
				{LinkID: b.ID, Bucket: ahour(h).Add(7 * time.Minute), Count: n + 1},
			}
			mustUpsertClicks(t, s, node, rows,
				dim(a.ID, h, linkforge.DimCountry, "DE", n), dim(a.ID, h, linkforge.DimCountry, "US", 2),
				dim(b.ID, h, linkforge.DimCountry, "FR", n+1),
				dim(a.ID, h, linkforge.DimTraffic, linkforge.TrafficHuman, n+2),
				dim(b.ID, h, linkforge.DimTraffic, linkforge.TrafficAutomated, n+1))
		}
	}
	from, to := ahour(-24*60).Truncate(24*time.Hour), ahour(48).Truncate(24*time.Hour)
	before := viewRetention(t, s, ten.ID, links, from, to)
	if before.TenantDays.Total == 0 || len(before.TenantDays.Buckets) != 3 {
		t.Fatalf("seeded stats: %+v", before.TenantDays)
	}

	minuteBound, hourBound := ahour(-240), ahour(-960)
	removed := map[linkforge.PruneKind]int64{}
	for _, k := range []linkforge.PruneKind{linkforge.PruneMinutes, linkforge.PruneLinkHours, linkforge.PruneTenantHours} {
		bound := hourBound
		if k == linkforge.PruneMinutes {
			bound = minuteBound
		}
		removed[k] = runPrune(t, s, k, bound, 1)
	}
	// Minutes: 3 rows per node in each of the two hours before -240.
	// Link hours: 5 rows per node in the hour before -960. Tenant hours:
	// DE, US, FR, human, automated of that hour.
	want := map[linkforge.PruneKind]int64{linkforge.PruneMinutes: 12, linkforge.PruneLinkHours: 10, linkforge.PruneTenantHours: 5}
	if !reflect.DeepEqual(removed, want) {
		t.Errorf("removed %v, want %v", removed, want)
	}
	after := viewRetention(t, s, ten.ID, links, from, to)
	if !reflect.DeepEqual(before, after) {
		t.Errorf("retention changed what it must keep:\nbefore %+v\nafter  %+v", before, after)
	}
	if again := runPrune(t, s, linkforge.PruneMinutes, minuteBound, 100); again != 0 {
		t.Errorf("a second run removed %d minute rows, want 0", again)
	}

	// The raw rows: gone before each bound, kept after it.
	raw := func(h int) (minutes, dims int) {
		r, d, err := s.NodeLinkClicks(ctx, "n1", a.ID, ahour(h), ahour(h+1))
		if err != nil {
			t.Fatal(err)
		}
		return len(r), len(d)
	}
	for _, c := range []struct{ h, minutes, dims int }{{old, 0, 0}, {mid, 0, 3}, {cur, 2, 3}} {
		if m, d := raw(c.h); m != c.minutes || d != c.dims {
			t.Errorf("hour %d: %d minute rows and %d dimension rows, want %d and %d", c.h, m, d, c.minutes, c.dims)
		}
	}

	// A link deleted after a run leaves every aggregate, its pruned days
	// included: what remains is b's alone.
	if _, err := s.DeleteLink(ctx, ten.ID, linkforge.PublicDomainID, a.Slug); err != nil {
		t.Fatal(err)
	}
	onlyB := viewRetention(t, s, ten.ID, []linkforge.Link{b}, from, to)
	if onlyB.TenantDays.Total != before.Total[1] {
		t.Errorf("after deleting %s the tenant's total is %d, want %s's %d", a.Slug, onlyB.TenantDays.Total, b.Slug, before.Total[1])
	}
	var days int64
	for _, bk := range onlyB.TenantDays.Buckets {
		days += bk.Count
	}
	if days != before.Total[1] {
		t.Errorf("after deleting %s the daily buckets sum to %d, want %d", a.Slug, days, before.Total[1])
	}
	for _, v := range onlyB.Countries.Values {
		if v.Value != "FR" {
			t.Errorf("country %q (%d) left by the deleted link", v.Value, v.Count)
		}
	}

	testJobLease(t, s)
}

// testJobLease: one owner at a time holds a job; its owner renews it; a
// finished job is due at its next instant; a lapsed lease goes to another.
func testJobLease(t *testing.T, s linkforge.Store) {
	ctx := t.Context()
	now := time.Date(2026, 12, 1, 3, 0, 0, 0, time.UTC)
	claim := func(owner string, at time.Time) bool {
		t.Helper()
		ok, err := s.ClaimJob(ctx, "retention", owner, at, time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		return ok
	}
	if due, err := s.NextJobDue(ctx, "retention"); err != nil || due.After(now) {
		t.Fatalf("a job never run is due at %v (%v), want at once", due, err)
	}
	if !claim("n1", now) || claim("n2", now) || !claim("n1", now.Add(10*time.Second)) {
		t.Fatal("claims of n1, n2, n1: want true, false, true")
	}
	if due, _ := s.NextJobDue(ctx, "retention"); !due.Equal(now.Add(70 * time.Second)) {
		t.Errorf("leased job due %v, want at the lease's end %v", due, now.Add(70*time.Second))
	}
	if claim("n2", now.Add(69*time.Second)) || !claim("n2", now.Add(70*time.Second)) {
		t.Error("n2 got the job before n1's lease lapsed, or not after")
	}
	if err := s.FinishJob(ctx, "retention", "n1", now.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	next := now.Add(24 * time.Hour)
	if err := s.FinishJob(ctx, "retention", "n2", next); err != nil {
		t.Fatal(err)
	}
	if due, _ := s.NextJobDue(ctx, "retention"); !due.Equal(next) {
		t.Errorf("finished job due %v, want %v (n1's stale finish must change nothing)", due, next)
	}
	if claim("n1", next.Add(-time.Second)) || !claim("n1", next) {
		t.Error("the finished job was claimable before its next instant, or not at it")
	}
}

// testRetentionDeliveriesAudit: delivered deliveries last updated before
// the bound go, the others (later, or not delivered) stay; audit events
// before the bound go.
func testRetentionDeliveriesAudit(t *testing.T, s linkforge.Store) {
	ctx := t.Context()
	ten := mustTenant(t, s, "ret-deliveries")
	w := mustWebhookRow(t, s, "wh_ret", ten.ID, linkforge.EventLinkCreated)
	start := time.Now().UTC().Truncate(time.Microsecond)
	for range 3 {
		ev, err := linkforge.NewWebhookTestEvent(ten.ID, w.ID, start)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.EnqueueDelivery(ctx, ten.ID, w.ID, ev, start); err != nil {
			t.Fatal(err)
		}
	}
	got, err := s.ClaimDeliveries(ctx, claim("n1", start.Add(time.Second), 2))
	if err != nil || len(got) != 2 {
		t.Fatalf("claim: %d, %v", len(got), err)
	}
	// One delivered a day after start, one ten days after; the third
	// stays pending.
	for i, d := range got {
		at := start.Add(24 * time.Hour * time.Duration(1+9*i))
		if ok, err := s.FinishDelivery(ctx, linkforge.DeliveryOutcome{Lease: d.Lease(), At: at,
			State: linkforge.DeliveryDelivered, Status: 200}); !ok || err != nil {
			t.Fatalf("finish: %v %v", ok, err)
		}
	}
	if n := runPrune(t, s, linkforge.PruneDeliveries, start.Add(5*24*time.Hour), 1); n != 1 {
		t.Errorf("pruned %d deliveries, want 1", n)
	}
	ds, err := s.ListDeliveries(ctx, ten.ID, w.ID, "", 10)
	if err != nil || len(ds) != 2 {
		t.Fatalf("deliveries left: %d (%v), want 2", len(ds), err)
	}
	for _, d := range ds {
		if d.ID == got[0].ID {
			t.Errorf("delivery %d delivered before the bound is still there", d.ID)
		}
	}

	actx := linkforge.WithActor(ctx, linkforge.Actor{Type: linkforge.ActorCLI})
	for _, slug := range []string{"ret-audit-1", "ret-audit-2", "ret-audit-3"} {
		if _, err := s.CreateLink(actx, newLink(ten.ID, slug)); err != nil {
			t.Fatal(err)
		}
	}
	if n := runPrune(t, s, linkforge.PruneAudit, time.Now().Add(-time.Hour), 2); n != 0 {
		t.Errorf("pruned %d audit events older than an hour, want 0", n)
	}
	if n := runPrune(t, s, linkforge.PruneAudit, time.Now().Add(time.Hour), 2); n < 3 {
		t.Errorf("pruned %d audit events, want all (at least 3)", n)
	}
	if evs, err := s.ListAudit(ctx, ten.ID, linkforge.AuditQuery{Limit: 10, Before: 0}); err != nil || len(evs) != 0 {
		t.Errorf("audit events left: %d (%v), want none", len(evs), err)
	}
}

// testRetentionTraffic: the human/automated split of every hour and day
// bucket, for a tenant and for a link, is the same after a retention run
// past both bounds as before it: the split of an hour whose dimension rows
// are gone is still the clicks' own, and count = human + automated holds.
// The clock is the bounds handed to Prune.
func testRetentionTraffic(t *testing.T, s linkforge.Store) {
	ten := mustTenant(t, s, "retention-traffic")
	a := mustCreateLink(t, s, newLink(ten.ID, "rett-a"))
	b := mustCreateLink(t, s, newLink(ten.ID, "rett-b"))
	// Hours -1200 (past both bounds), -480 (past the minute bound) and 0;
	// per minute the clicks and how many of them were automated.
	for _, h := range []int{-1200, -480, 0} {
		m := func(i int) time.Time { return ahour(h).Add(time.Duration(i) * time.Minute) }
		for _, f := range []struct {
			node    string
			link    int64
			minutes map[time.Time][2]int64
		}{
			{"n1", a.ID, map[time.Time][2]int64{m(5): {7, 3}, m(6): {2, 0}}},
			{"n2", a.ID, map[time.Time][2]int64{m(5): {4, 4}, m(59): {5, 1}}},
			{"n1", b.ID, map[time.Time][2]int64{m(7): {6, 6}}},
		} {
			rows, dims := trafficClicks(f.link, f.minutes)
			mustUpsertClicks(t, s, f.node, rows, dims...)
		}
	}
	from, to := ahour(-24*60).Truncate(24*time.Hour), ahour(48).Truncate(24*time.Hour)
	queries := []linkforge.StatsQuery{
		{TenantID: ten.ID, From: from, To: to, Interval: linkforge.Day},
		{TenantID: ten.ID, From: from, To: to, Interval: linkforge.Hour},
		{TenantID: ten.ID, LinkID: a.ID, From: from, To: to, Interval: linkforge.Day},
		{TenantID: ten.ID, LinkID: a.ID, From: from, To: to, Interval: linkforge.Hour},
		{TenantID: ten.ID, LinkID: b.ID, From: from, To: to, Interval: linkforge.Hour},
	}
	view := func() []linkforge.Stats {
		var out []linkforge.Stats
		for _, q := range queries {
			out = append(out, mustStats(t, s, q))
		}
		return out
	}
	before := view()
	// Each of the three hours (and days: h0 is 22:00, so each hour is
	// its own day) holds a's 18 clicks, 8 automated, and b's 6, all
	// automated.
	wantAutomated := []int64{14, 14, 8, 8, 6}
	for i, st := range before {
		if len(st.Buckets) != 3 {
			t.Fatalf("%+v before retention: %s, want 3 buckets", queries[i], fmtTraffic(st.Buckets))
		}
		for _, bk := range st.Buckets {
			if bk.Automated != wantAutomated[i] || bk.Human+bk.Automated != bk.Count {
				t.Fatalf("%+v before retention: %s, want %d automated in each", queries[i], fmtTraffic(st.Buckets), wantAutomated[i])
			}
		}
	}

	runPrune(t, s, linkforge.PruneMinutes, ahour(-240), 1)
	runPrune(t, s, linkforge.PruneLinkHours, ahour(-960), 1)
	runPrune(t, s, linkforge.PruneTenantHours, ahour(-960), 1)
	for i, st := range view() {
		if !reflect.DeepEqual(st, before[i]) {
			t.Errorf("%+v after retention:\n %s total %d=%d+%d, want\n %s total %d=%d+%d", queries[i],
				fmtTraffic(st.Buckets), st.Total, st.Human, st.Automated,
				fmtTraffic(before[i].Buckets), before[i].Total, before[i].Human, before[i].Automated)
		}
	}

	// A link deleted after the run takes its automated clicks out of the
	// tenant's hours, pruned ones included: what remains is a's.
	if _, err := s.DeleteLink(t.Context(), ten.ID, linkforge.PublicDomainID, b.Slug); err != nil {
		t.Fatal(err)
	}
	st := mustStats(t, s, queries[1])
	for _, bk := range st.Buckets {
		if bk.Count != 18 || bk.Automated != 8 {
			t.Errorf("after deleting %s the tenant's hours are %s, want 18=10+8 each", b.Slug, fmtTraffic(st.Buckets))
			break
		}
	}
}

// testRetentionSessions: sessions ended, idle or started before the bound
// and tickets used or expired before it are removed; a live session and an
// open ticket stay.
func testRetentionSessions(t *testing.T, s linkforge.Store) {
	ctx := t.Context()
	ten := mustTenant(t, s, "ret-sessions")
	res, err := s.InviteUser(ctx, linkforge.Invite{TenantID: ten.ID, Email: "ret@example.com", Role: linkforge.RoleViewer,
		Ticket: linkforge.UserTicket{Hash: linkforge.HashToken("ret-invite"), Kind: linkforge.TicketInvite, ExpiresAt: time.Now().Add(time.Hour)}})
	if err != nil {
		t.Fatal(err)
	}
	u := res.User
	mk := func(secret string) linkforge.Session {
		x, err := s.CreateSession(ctx, linkforge.Session{Hash: linkforge.HashToken(secret), UserID: u.ID, CSRF: "c"})
		if err != nil {
			t.Fatal(err)
		}
		return x
	}
	ended, live := mk("ret-ended"), mk("ret-live")
	if err := s.EndSession(ctx, ended.ID, time.Now()); err != nil {
		t.Fatal(err)
	}
	if err := s.CreateTicket(ctx, linkforge.UserTicket{Hash: linkforge.HashToken("ret-reset"), UserID: u.ID,
		Kind: linkforge.TicketReset, ExpiresAt: time.Now().Add(time.Hour)}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.UseTicket(ctx, linkforge.HashToken("ret-invite"), time.Now(), "$argon2id$x"); err != nil {
		t.Fatal(err)
	}
	// Nothing is before an hour ago.
	if n := runPrune(t, s, linkforge.PruneSessions, time.Now().Add(-time.Hour), 10); n != 0 {
		t.Errorf("pruned %d sessions older than an hour, want 0", n)
	}
	if n := runPrune(t, s, linkforge.PruneTickets, time.Now().Add(-time.Hour), 10); n != 0 {
		t.Errorf("pruned %d tickets older than an hour, want 0", n)
	}
	// A bound a minute ahead: the ended session goes, and so does the
	// live one, though used an hour ahead, because it started before the
	// bound (past the absolute lifetime, as the job's bound is); both
	// tickets were used by the password.
	if err := s.TouchSession(ctx, live.ID, time.Now().Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	bound := time.Now().Add(time.Minute)
	if n := runPrune(t, s, linkforge.PruneSessions, bound, 1); n != 2 {
		t.Errorf("pruned %d sessions, want 2", n)
	}
	if n := runPrune(t, s, linkforge.PruneTickets, bound, 1); n != 2 {
		t.Errorf("pruned %d tickets, want 2 (both used)", n)
	}
	if got, _ := s.UserSessions(ctx, u.ID, time.Now().Add(-time.Hour)); len(got) != 0 {
		t.Errorf("sessions left: %+v", got)
	}
}

// testRetentionExactBound: a row exactly at its bound stays; one a
// microsecond (a minute, an hour) before it goes. The bound is "older
// than", on both dialects, for every kind a run prunes by time.
func testRetentionExactBound(t *testing.T, s linkforge.Store) {
	ctx := t.Context()
	ten := mustTenant(t, s, "ret-exact")
	l := mustCreateLink(t, s, newLink(ten.ID, "ret-exact"))
	bound := ahour(-300)
	mustUpsertClicks(t, s, "n1", []linkforge.RollupRow{
		{LinkID: l.ID, Bucket: bound.Add(-time.Minute), Count: 1},
		{LinkID: l.ID, Bucket: bound, Count: 2},
	}, dim(l.ID, -301, linkforge.DimCountry, "DE", 1), dim(l.ID, -300, linkforge.DimCountry, "DE", 2))
	if n := runPrune(t, s, linkforge.PruneMinutes, bound, 10); n != 1 {
		t.Errorf("pruned %d minute rows at and before the bound, want 1 (the one before)", n)
	}
	if n := runPrune(t, s, linkforge.PruneLinkHours, bound, 10); n != 1 {
		t.Errorf("pruned %d hour rows at and before the bound, want 1 (the one before)", n)
	}
	rows, dims, err := s.NodeLinkClicks(ctx, "n1", l.ID, bound.Add(-2*time.Hour), bound.Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 1 || !rows[0].Bucket.Equal(bound) || len(dims) != 1 || !dims[0].Hour.Equal(bound) {
		t.Errorf("left %+v and %+v; want the minute and the hour at the bound", rows, dims)
	}

	actx := linkforge.WithActor(ctx, linkforge.Actor{Type: linkforge.ActorCLI})
	if _, err := s.CreateLink(actx, newLink(ten.ID, "ret-exact-audit")); err != nil {
		t.Fatal(err)
	}
	evs, err := s.ListAudit(ctx, ten.ID, linkforge.AuditQuery{Limit: 10, Before: 0})
	if err != nil || len(evs) != 1 {
		t.Fatalf("audit events: %d, %v", len(evs), err)
	}
	at := evs[0].At
	if n := runPrune(t, s, linkforge.PruneAudit, at, 10); n != 0 {
		t.Errorf("pruned %d audit events at the bound, want 0", n)
	}
	if n := runPrune(t, s, linkforge.PruneAudit, at.Add(time.Microsecond), 10); n != 1 {
		t.Errorf("pruned %d audit events a microsecond before the bound, want 1", n)
	}
}
