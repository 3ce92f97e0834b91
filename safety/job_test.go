package safety_test

import (
	"testing"
	"time"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/blocklist"
	"github.com/linkforge/linkforge/internal/pgtest"
	"github.com/linkforge/linkforge/internal/testdb"
	"github.com/linkforge/linkforge/links"
	"github.com/linkforge/linkforge/safety"
	"github.com/linkforge/linkforge/schedule"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// newJob is a Job on s with the operator's entries of s as its policy,
// writing through the links service, as serve builds it.
func newJob(t *testing.T, s linkforge.Store, dns safety.Filter) (*safety.Job, *blocklist.Files) {
	t.Helper()
	files := blocklist.NewFiles(nil, nil)
	files.UseStore(s)
	svc, err := links.New(links.Config{Store: s})
	if err != nil {
		t.Fatal(err)
	}
	j, err := safety.New(safety.Config{Store: s, Flag: svc.SetUnsafe, Check: &safety.Checker{Targets: files, DNS: dns}, Concurrency: 2})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(j.Close)
	return j, files
}

// TestRecheckBlocklist: links made before their host was blocklisted turn
// unsafe at the next run (a rule's target too), with the entry as reason
// and link.unsafe; an allowlist entry clears them at the run after; a
// flag the operator set by hand and a blocked link are left alone.
func TestRecheckBlocklist(t *testing.T) {
	testdb.Each(t, func(t *testing.T, s linkforge.Store) {
		t.Parallel()
		ctx := t.Context()
		ten, err := s.EnsureTenant(ctx, "acme")
		if err != nil {
			t.Fatal(err)
		}
		mk := func(slug, url string) linkforge.Link {
			l, err := s.CreateLink(ctx, linkforge.Link{TenantID: ten.ID, Slug: slug, URL: url})
			if err != nil {
				t.Fatal(err)
			}
			return l
		}
		bad := mk("bad", "https://x.evil.example/login")
		good := mk("good", "https://good.example/")
		byHand := mk("hand", "https://good.example/hand")
		blocked := mk("blk", "https://evil.example/")
		for i := range 120 { // more than a page
			mk("p"+string(rune('a'+i/26))+string(rune('a'+i%26)), "https://good.example/p")
		}
		if _, err := s.SetLinkUnsafe(ctx, byHand.ID, "reported twice"); err != nil {
			t.Fatal(err)
		}
		if _, err := s.BlockLink(ctx, blocked.ID, "spam"); err != nil {
			t.Fatal(err)
		}
		j, files := newJob(t, s, nil)
		res, err := j.Run(ctx, nil)
		if err != nil || res.Flagged != 0 || res.Cleared != 0 || res.Checked != 123 {
			t.Fatalf("run before any entry: %+v, %v", res, err)
		}
		if _, err := s.AddTargetEntry(ctx, linkforge.TargetEntry{List: linkforge.TargetBlock, Host: "evil.example"}); err != nil {
			t.Fatal(err)
		}
		if err := files.RefreshOperator(ctx); err != nil {
			t.Fatal(err)
		}
		renewed := 0
		res, err = j.Run(ctx, func() error { renewed++; return nil })
		if err != nil || res.Flagged != 1 || res.Cleared != 0 || renewed != 1 {
			t.Fatalf("run after the entry: %+v, %v (renewed %d)", res, err, renewed)
		}
		state := func(l linkforge.Link) (linkforge.ModerationState, string) {
			got, err := s.TenantLink(ctx, ten.ID, linkforge.PublicDomainID, l.Slug)
			if err != nil {
				t.Fatal(err)
			}
			return got.State(), got.UnsafeReason
		}
		if st, why := state(bad); st != linkforge.LinkUnsafe || why != "blocklist: evil.example" {
			t.Errorf("bad after the run: %s %q", st, why)
		}
		for _, l := range []linkforge.Link{good, byHand, blocked} {
			if st, why := state(l); l.Slug == "good" && st != linkforge.LinkActive || l.Slug == "hand" && why != "reported twice" ||
				l.Slug == "blk" && st != linkforge.LinkBlocked {
				t.Errorf("%s after the run: %s %q", l.Slug, st, why)
			}
		}
		// Again: nothing changes, nothing is written twice.
		if res, err := j.Run(ctx, nil); err != nil || res.Flagged != 0 || res.Cleared != 0 {
			t.Errorf("second run: %+v, %v", res, err)
		}
		if _, err := s.AddTargetEntry(ctx, linkforge.TargetEntry{List: linkforge.TargetAllow, Host: "x.evil.example"}); err != nil {
			t.Fatal(err)
		}
		if err := files.RefreshOperator(ctx); err != nil {
			t.Fatal(err)
		}
		if res, err := j.Run(ctx, nil); err != nil || res.Cleared != 1 || res.Flagged != 0 {
			t.Errorf("run after the allowlist entry: %+v, %v", res, err)
		}
		if st, _ := state(bad); st != linkforge.LinkActive {
			t.Errorf("bad after the allowlist: %s", st)
		}
		if _, why := state(byHand); why != "reported twice" {
			t.Errorf("the operator's flag after the runs: %q", why)
		}
		evs, err := s.OperatorAudit(ctx, 100, 0)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, e := range evs {
			if e.Actor == safety.Actor {
				got = append(got, e.Action+" "+e.Target)
			}
		}
		if len(got) != 2 || got[0] != "link.safe bad" || got[1] != "link.unsafe bad: blocklist: evil.example" {
			t.Errorf("the check's audit events: %q", got)
		}
	})
}

// TestRecheckOneNodeAtATime: the run's lease is the store's; while one
// node runs it, another's Claim gets nothing, and the next is due Every
// after the run.
func TestRecheckOneNodeAtATime(t *testing.T) {
	testdb.Each(t, func(t *testing.T, s linkforge.Store) {
		t.Parallel()
		ctx := t.Context()
		now := time.Date(2026, 12, 6, 3, 0, 0, 0, time.UTC)
		if ok, err := s.ClaimJob(ctx, safety.JobName, "node-a", now, time.Hour); err != nil || !ok {
			t.Fatalf("node-a's claim: %v %v", ok, err)
		}
		j, _ := newJob(t, s, nil)
		if n, err := j.Claim(ctx, schedule.Claim{Owner: "node-b", Now: now.Add(time.Minute)}); err != nil || n != 0 {
			t.Errorf("node-b's claim while node-a holds the lease: %d, %v", n, err)
		}
		if err := s.FinishJob(ctx, safety.JobName, "node-a", now.Add(24*time.Hour)); err != nil {
			t.Fatal(err)
		}
		due, ok, err := j.NextDue(ctx)
		if err != nil || !ok || !due.Equal(now.Add(24*time.Hour)) {
			t.Errorf("NextDue = %v %v %v", due, ok, err)
		}
	})
}
