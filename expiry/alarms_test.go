package expiry_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/expiry"
	"github.com/linkforge/linkforge/internal/testdb"
	"github.com/linkforge/linkforge/internal/testlog"
	"github.com/linkforge/linkforge/schedule"
	"github.com/linkforge/linkforge/store/sqlite"
)

// TestRetrySchedule: a hook that always fails runs exactly 7 times, at 0, 2,
// 6, 14, 30, 62 and 126 s after the due time; then the alarm is dead,
// logged, counted and listed; a replay runs it again.
func TestRetrySchedule(t *testing.T) {
	inBubble(t, func(t *testing.T, s linkforge.Store) {
		ctx := t.Context()
		tenant := mustTenant(t, s, "acme")
		due := time.Now().Add(10 * time.Second)
		link := mustExpiringLink(t, s, tenant.ID, "doomed", due)

		failing := true
		rec := &recorder{fail: func(linkforge.Link, int) error {
			if failing {
				return errors.New("dashboard unavailable")
			}
			return nil
		}}
		logs := &testlog.Buffer{}
		reg := prometheus.NewRegistry()
		sch := mustStart(t, node{Store: s, Owner: "node-a", OnExpired: []expiry.Hook{rec.hook},
			Logger: logs.Logger(), Registry: reg})

		time.Sleep(10*time.Second + 200*time.Second)
		synctest.Wait()

		calls := rec.callsOf(link.ID)
		var offsets []time.Duration
		for _, c := range calls {
			offsets = append(offsets, c.at.Sub(due))
		}
		want := []time.Duration{0, 2 * time.Second, 6 * time.Second, 14 * time.Second, 30 * time.Second,
			62 * time.Second, 126 * time.Second}
		if !slices.Equal(offsets, want) {
			t.Fatalf("runs at offsets %v after the due time, want %v", offsets, want)
		}
		for i, c := range calls {
			if c.info.RetryCount != i || c.info.IsRetry != (i > 0) {
				t.Errorf("run %d: Info %+v, want RetryCount %d", i, c.info, i)
			}
		}

		// Dead, listed with every attempt's error.
		dead := mustAlarms(t, s, tenant.ID, linkforge.AlarmDead)
		if len(dead) != 1 || dead[0].LinkID != link.ID || dead[0].Slug != "doomed" {
			t.Fatalf("ListAlarms(dead) = %+v, want the link's alarm", dead)
		}
		a := dead[0]
		if a.Attempt != 7 || len(a.Errors) != 7 {
			t.Errorf("dead alarm: Attempt %d, %d errors; want 7 and 7", a.Attempt, len(a.Errors))
		}
		for i, e := range a.Errors {
			if e.Attempt != i+1 || !e.At.Equal(due.Add(want[i])) || !strings.Contains(e.Error, "dashboard unavailable") {
				t.Errorf("error %d = %+v, want attempt %d at %v: dashboard unavailable", i, e, i+1, due.Add(want[i]))
			}
		}
		if l := mustLink(t, s, tenant.ID, link.Slug); l.ExpiredAt == nil || !l.ExpiredAt.Equal(due) {
			t.Errorf("ExpiredAt = %v, want %v (set by the first run)", l.ExpiredAt, due)
		}

		// One alarm_failed per failure; the seventh is the alert.
		failed := logs.Records(t, "alarm_failed")
		if len(failed) != 7 {
			t.Fatalf("%d alarm_failed log records, want 7", len(failed))
		}
		for i, rec := range failed {
			last := i == 6
			if rec["retryCount"] != float64(i) || rec["lastAttempt"] != last || rec["alarm"] != "link_expiry" ||
				rec["link_id"] != float64(link.ID) || rec["alarm_id"] != float64(a.ID) ||
				rec["error"] != "dashboard unavailable" {
				t.Errorf("alarm_failed record %d = %v, want retryCount %d, lastAttempt %v, link %d, alarm %d",
					i, rec, i, last, link.ID, a.ID)
			}
			if wantLevel := map[bool]string{true: "ERROR", false: "WARN"}[last]; rec["level"] != wantLevel {
				t.Errorf("alarm_failed record %d level %v, want %s", i, rec["level"], wantLevel)
			}
		}
		if got := metricValue(t, reg, "linkforge_alarms_dead_total", nil); got != 1 {
			t.Errorf("linkforge_alarms_dead_total = %v, want 1", got)
		}
		if got := metricValue(t, reg, "linkforge_alarm_runs_total", map[string]string{"result": "failure"}); got != 7 {
			t.Errorf("linkforge_alarm_runs_total{result=failure} = %v, want 7", got)
		}

		// Nothing runs a dead alarm by itself.
		time.Sleep(10 * time.Minute)
		synctest.Wait()
		if n := rec.count(); n != 7 {
			t.Fatalf("%d runs ten minutes after the alarm died, want still 7", n)
		}

		// The replay runs it again, at once, from attempt 1.
		failing = false
		replayAt := time.Now()
		replayed, err := s.RetryAlarm(ctx, tenant.ID, a.ID, replayAt)
		if err != nil {
			t.Fatalf("RetryAlarm: %v", err)
		}
		sch.Reschedule(replayed.DueAt)
		time.Sleep(time.Second)
		synctest.Wait()
		calls = rec.callsOf(link.ID)
		if len(calls) != 8 || !calls[7].at.Equal(replayAt) || calls[7].failed || calls[7].info.RetryCount != 0 {
			t.Fatalf("after the replay: %d runs, last %+v; want an 8th, successful run at %v with retry count 0",
				len(calls), calls[len(calls)-1], replayAt)
		}
		done := mustOnlyAlarm(t, s, tenant.ID)
		if done.State != linkforge.AlarmDone || done.Attempt != 1 || len(done.Errors) != 7 {
			t.Errorf("after the replay: alarm %+v, want done at attempt 1 with the 7 errors kept", done)
		}
		if got := metricValue(t, reg, "linkforge_alarm_runs_total", map[string]string{"result": "success"}); got != 1 {
			t.Errorf("linkforge_alarm_runs_total{result=success} = %v, want 1", got)
		}
	})
}

// TestManyAlarmsWithRestarts: 10,000 alarms due at random instants over a
// minute, one in seven failing once, with the scheduler stopped and
// replaced by a new one (on the same store) every few seconds and pauses
// with no scheduler at all: every alarm fires, none succeeds twice, none is
// stranded, and none fires later than the resolution after it was due or
// after the pause it fell into.
//
// The resolution is 1 s rather than the default 100 ms: the claims, not the
// instants, are what is tested here, and each claim costs milliseconds of
// SQLite work that the race detector multiplies by twenty.
func TestManyAlarmsWithRestarts(t *testing.T) {
	const resolution = time.Second
	inBubble(t, func(t *testing.T, s linkforge.Store) {
		// On SQLite under -race the 10,000 alarms took minutes: a quarter
		// of them with a quarter of the batch keeps the alarms per batch,
		// and so the full batches and the claims per second, the same.
		n, batch := 10_000, schedule.DefaultBatchSize
		if _, ok := s.(*sqlite.DB); ok && raceEnabled {
			n, batch = n/4, batch/4
		}
		ctx := t.Context()
		rng := rand.New(rand.NewPCG(4, 2))
		tenant := mustTenant(t, s, "bulk")
		start := time.Now()
		in := make([]linkforge.Link, n)
		for i := range in {
			due := start.Add(time.Second + time.Duration(rng.Int64N(int64(time.Minute)))).Truncate(time.Microsecond)
			in[i] = linkforge.Link{TenantID: tenant.ID, Slug: fmt.Sprintf("bulk-%05d", i), URL: "https://example.com/", ExpiresAt: &due}
		}
		imp, ok := s.(importer)
		if !ok {
			t.Fatalf("%T has no ImportLinks", s)
		}
		if err := imp.ImportLinks(ctx, in); err != nil {
			t.Fatalf("ImportLinks: %v", err)
		}
		dueOf := map[int64]time.Time{}
		var cursor string
		for {
			page, err := s.QueryLinks(ctx, linkforge.ListQuery{TenantID: tenant.ID, Cursor: cursor, Limit: 1000})
			if err != nil {
				t.Fatalf("QueryLinks: %v", err)
			}
			for _, l := range page.Links {
				dueOf[l.ID] = *l.ExpiresAt
			}
			if cursor = page.NextCursor; cursor == "" {
				break
			}
		}
		if len(dueOf) != n {
			t.Fatalf("%d links imported, want %d", len(dueOf), n)
		}

		rec := &recorder{fail: func(l linkforge.Link, calls int) error {
			if l.ID%7 == 0 && calls == 0 {
				return errors.New("transient")
			}
			return nil
		}}
		type pause struct{ from, to time.Time }
		var pauses []pause
		for round := 0; time.Since(start) < 90*time.Second; round++ {
			sch := mustStart(t, node{Store: s, Owner: fmt.Sprintf("node-%d", round),
				OnExpired: []expiry.Hook{rec.hook}, Resolution: resolution, BatchSize: batch})
			time.Sleep(time.Duration(2000+rng.IntN(8000)) * time.Millisecond)
			mustStop(t, sch)
			if round%2 == 1 {
				p := pause{from: time.Now()}
				time.Sleep(time.Duration(rng.IntN(5000)) * time.Millisecond)
				p.to = time.Now()
				pauses = append(pauses, p)
			}
		}
		final := mustStart(t, node{Store: s, Owner: "node-final", OnExpired: []expiry.Hook{rec.hook}, Resolution: resolution,
			BatchSize: batch})
		time.Sleep(time.Minute)
		synctest.Wait()
		mustStop(t, final)

		succ := rec.successes()
		if len(succ) != n {
			t.Errorf("%d links expired by their alarm, want %d", len(succ), n)
		}
		twice := 0
		for id, c := range succ {
			if c != 1 {
				twice++
				if twice <= 5 {
					t.Errorf("link %d: hook succeeded %d times, want once", id, c)
				}
			}
		}
		// Every run on time: not before it is due, and at most the
		// resolution after its due time or after the end of the pause it
		// fell into.
		onTime := func(due, at time.Time) bool {
			deadline := due
			for _, p := range pauses {
				// Due during the pause, or so shortly before it that the
				// timer (rounded up to the resolution) had not fired yet.
				if p.from.Before(due.Add(resolution)) && due.Before(p.to) {
					deadline = p.to
				}
			}
			return !at.Before(due) && !at.After(deadline.Add(resolution))
		}
		late := 0
		for id, due := range dueOf {
			cs := rec.callsOf(id)
			if len(cs) == 0 {
				continue
			}
			want := 1
			if id%7 == 0 {
				want = 2 // the retry is due 2 s after the failed run
			}
			ok := len(cs) == want && onTime(due, cs[0].at) && (want == 1 || onTime(cs[0].at.Add(2*time.Second), cs[1].at))
			if !ok {
				late++
				if late <= 5 {
					t.Errorf("link %d due %v: runs %+v, want %d, each on time", id, due, cs, want)
				}
			}
		}
		// None stranded.
		for _, st := range []linkforge.AlarmState{linkforge.AlarmScheduled, linkforge.AlarmRunning,
			linkforge.AlarmRetrying, linkforge.AlarmDead} {
			if as := mustAlarms(t, s, tenant.ID, st); len(as) != 0 {
				t.Errorf("%d alarms left %s, e.g. %+v", len(as), st, as[0])
			}
		}
		if due, ok, err := s.NextAlarmDue(ctx); err != nil || ok {
			t.Errorf("NextAlarmDue = %v, %v, %v; want none", due, ok, err)
		}
		t.Logf("%d alarms, %d restarts with %d pauses, %d hook calls, %v of virtual time",
			n, len(pauses)*2, len(pauses), rec.count(), time.Since(start))
	})
}

// TestEarlierAlarmFiresOnTime: an alarm inserted earlier than the armed one
// moves the timer (Reschedule); a later one never strands an earlier one;
// without Reschedule (a write on another node) the periodic re-read finds
// it.
func TestEarlierAlarmFiresOnTime(t *testing.T) {
	inBubble(t, func(t *testing.T, s linkforge.Store) {
		tenant := mustTenant(t, s, "acme")
		t0 := time.Now()
		late := mustExpiringLink(t, s, tenant.ID, "late", t0.Add(60*time.Second))
		rec := &recorder{}
		sch := mustStart(t, node{Store: s, OnExpired: []expiry.Hook{rec.hook}, PollInterval: 20 * time.Second})
		synctest.Wait() // armed at 60 s

		time.Sleep(time.Second)
		early := mustExpiringLink(t, s, tenant.ID, "early", t0.Add(10*time.Second))
		sch.Reschedule(*early.ExpiresAt)
		// A later alarm, rescheduled after, must not push the timer back.
		later := mustExpiringLink(t, s, tenant.ID, "later", t0.Add(100*time.Second))
		sch.Reschedule(*later.ExpiresAt)

		// After the early one fired (and the timer went back to 60 s), an
		// alarm written as by another node: no Reschedule.
		time.Sleep(10 * time.Second)
		remote := mustExpiringLink(t, s, tenant.ID, "remote", t0.Add(15*time.Second))

		time.Sleep(2 * time.Minute)
		synctest.Wait()
		for _, c := range []struct {
			link linkforge.Link
			want time.Time
		}{
			{early, t0.Add(10 * time.Second)},
			{remote, t0.Add(20 * time.Second)}, // at the next re-read
			{late, t0.Add(60 * time.Second)},
			{later, t0.Add(100 * time.Second)},
		} {
			cs := rec.callsOf(c.link.ID)
			if len(cs) != 1 || !cs[0].at.Equal(c.want) {
				t.Errorf("link %q: runs %+v, want one at %v", c.link.Slug, cs, c.want.Sub(t0))
			}
		}
	})
}

// TestCancelRacesHandler: a cancel (expires_at moved later) that commits
// just before the alarm fires, or between its claim and its re-read of the
// link, leaves the link active and unexpired; the alarm then fires at the
// new time.
func TestCancelRacesHandler(t *testing.T) {
	inBubble(t, func(t *testing.T, s linkforge.Store) {
		ctx := t.Context()
		tenant := mustTenant(t, s, "acme")
		t0 := time.Now()
		before := mustExpiringLink(t, s, tenant.ID, "moved-before", t0.Add(10*time.Second))
		during := mustExpiringLink(t, s, tenant.ID, "moved-during", t0.Add(10*time.Second))
		newExpiry := t0.Add(time.Hour)
		move := func(slug string) {
			if _, err := s.UpdateLink(ctx, tenant.ID, linkforge.PublicDomainID, slug, func(l *linkforge.Link) error {
				l.ExpiresAt = &newExpiry
				return nil
			}); err != nil {
				t.Errorf("UpdateLink(%q): %v", slug, err)
			}
		}
		rs := &raceStore{Store: s, before: func() { move(during.Slug) }}
		rec := &recorder{}
		reg := prometheus.NewRegistry()
		sch := mustStart(t, node{Store: rs, OnExpired: []expiry.Hook{rec.hook}, Registry: reg})

		time.Sleep(10*time.Second - time.Millisecond)
		move(before.Slug)
		sch.Reschedule(newExpiry) // what the API does; later, so no effect
		time.Sleep(20 * time.Second)
		synctest.Wait()

		for _, l := range []linkforge.Link{before, during} {
			if cs := rec.callsOf(l.ID); len(cs) != 0 {
				t.Errorf("%q: hook ran %+v for a link whose expiry moved later", l.Slug, cs)
			}
			got := mustLink(t, s, tenant.ID, l.Slug)
			if got.ExpiredAt != nil || got.Expired(time.Now()) {
				t.Errorf("%q: expired_at %v, expired %v at %v; want an active, unexpired link",
					l.Slug, got.ExpiredAt, got.Expired(time.Now()), time.Since(t0))
			}
		}
		for _, a := range mustAlarms(t, s, tenant.ID, "") {
			if a.State != linkforge.AlarmScheduled || !a.DueAt.Equal(newExpiry) || a.Attempt != 0 {
				t.Errorf("alarm of %q = %+v, want scheduled at the new expiry, attempt 0", a.Slug, a)
			}
		}
		// The claim of "during" was superseded by the move: not completed.
		if got := metricValue(t, reg, "linkforge_alarm_runs_total", map[string]string{"result": "superseded"}); got != 1 {
			t.Errorf("linkforge_alarm_runs_total{result=superseded} = %v, want 1", got)
		}

		time.Sleep(time.Hour)
		synctest.Wait()
		for _, l := range []linkforge.Link{before, during} {
			if cs := rec.callsOf(l.ID); len(cs) != 1 || !cs[0].at.Equal(newExpiry) {
				t.Errorf("%q: runs %+v, want one at the new expiry", l.Slug, cs)
			}
		}
	})
}

// TestDeleteLinkDeletesAlarm: no alarm fires for a deleted link, whether it
// was deleted before its alarm fired or between the claim and the re-read.
func TestDeleteLinkDeletesAlarm(t *testing.T) {
	inBubble(t, func(t *testing.T, s linkforge.Store) {
		ctx := t.Context()
		tenant := mustTenant(t, s, "acme")
		t0 := time.Now()
		early := mustExpiringLink(t, s, tenant.ID, "deleted-early", t0.Add(10*time.Second))
		racing := mustExpiringLink(t, s, tenant.ID, "deleted-racing", t0.Add(20*time.Second))
		del := func(slug string) {
			if _, err := s.DeleteLink(ctx, tenant.ID, linkforge.PublicDomainID, slug); err != nil {
				t.Errorf("DeleteLink(%q): %v", slug, err)
			}
		}
		rs := &raceStore{Store: s, before: func() { del(racing.Slug) }}
		rec := &recorder{}
		logs := &testlog.Buffer{}
		mustStart(t, node{Store: rs, OnExpired: []expiry.Hook{rec.hook}, Logger: logs.Logger()})

		time.Sleep(5 * time.Second)
		del(early.Slug)
		time.Sleep(time.Minute)
		synctest.Wait()
		if n := rec.count(); n != 0 {
			t.Errorf("%d hook runs for deleted links, want none", n)
		}
		if as := mustAlarms(t, s, tenant.ID, ""); len(as) != 0 {
			t.Errorf("alarms of deleted links: %+v", as)
		}
		if due, ok, err := s.NextAlarmDue(ctx); err != nil || ok {
			t.Errorf("NextAlarmDue = %v, %v, %v; want none", due, ok, err)
		}
		if f := logs.Records(t, "alarm_failed"); len(f) != 0 {
			t.Errorf("alarm_failed logged for a deleted link: %v", f)
		}
	})
}

// TestRestartFiresOverdue: alarms that fell due while no scheduler ran fire
// as soon as one starts; start-up changes no stored due time.
func TestRestartFiresOverdue(t *testing.T) {
	inBubble(t, func(t *testing.T, s linkforge.Store) {
		tenant := mustTenant(t, s, "acme")
		t0 := time.Now()
		overdue1 := mustExpiringLink(t, s, tenant.ID, "overdue-1", t0.Add(10*time.Second))
		overdue2 := mustExpiringLink(t, s, tenant.ID, "overdue-2", t0.Add(20*time.Second))
		future := mustExpiringLink(t, s, tenant.ID, "future", t0.Add(time.Hour))

		time.Sleep(30 * time.Second) // the node is down
		rec := &recorder{}
		startAt := time.Now()
		mustStart(t, node{Store: s, OnExpired: []expiry.Hook{rec.hook}})
		time.Sleep(time.Second)
		synctest.Wait()
		for _, l := range []linkforge.Link{overdue1, overdue2} {
			if cs := rec.callsOf(l.ID); len(cs) != 1 || !cs[0].at.Equal(startAt) {
				t.Errorf("%q: runs %+v, want one at start-up (%v)", l.Slug, cs, startAt.Sub(t0))
			}
		}
		if cs := rec.callsOf(future.ID); len(cs) != 0 {
			t.Errorf("future alarm ran at start-up: %+v", cs)
		}
		for _, a := range mustAlarms(t, s, tenant.ID, linkforge.AlarmScheduled) {
			if a.LinkID != future.ID || !a.DueAt.Equal(*future.ExpiresAt) {
				t.Errorf("scheduled alarm after start-up = %+v, want only the future one, due %v", a, *future.ExpiresAt)
			}
		}
	})
}

// TestLeaseTakeover: a node that claimed alarms and died (never completed
// them) loses them when the lease expires; a new scheduler on the same
// store completes them then, once each, and the lost attempt is on record.
func TestLeaseTakeover(t *testing.T) {
	inBubble(t, func(t *testing.T, s linkforge.Store) {
		ctx := t.Context()
		tenant := mustTenant(t, s, "acme")
		t0 := time.Now()
		var links []linkforge.Link
		for i := range 5 {
			links = append(links, mustExpiringLink(t, s, tenant.ID, fmt.Sprintf("orphan-%d", i), t0.Add(time.Second)))
		}
		time.Sleep(time.Second)
		const lease = 30 * time.Second
		claimed, err := s.ClaimAlarms(ctx, "node-dead", time.Now(), lease, 100)
		if err != nil || len(claimed) != len(links) {
			t.Fatalf("ClaimAlarms by the doomed node = %d alarms, %v; want %d", len(claimed), err, len(links))
		}
		leaseEnd := time.Now().Add(lease)

		rec := &recorder{}
		mustStart(t, node{Store: s, Owner: "node-b", OnExpired: []expiry.Hook{rec.hook}, Lease: lease})
		time.Sleep(time.Minute)
		synctest.Wait()
		for _, l := range links {
			if cs := rec.callsOf(l.ID); len(cs) != 1 || !cs[0].at.Equal(leaseEnd) {
				t.Errorf("%q: runs %+v, want one when the lease expired (%v)", l.Slug, cs, leaseEnd.Sub(t0))
			}
		}
		for _, a := range mustAlarms(t, s, tenant.ID, "") {
			if a.State != linkforge.AlarmDone || a.Attempt != 2 || len(a.Errors) != 1 ||
				!strings.Contains(a.Errors[0].Error, "lease of node-dead expired") {
				t.Errorf("alarm %+v, want done at attempt 2 with the lost lease on record", a)
			}
		}
	})
}

// TestTwoNodesOnPostgres: two schedulers on one PostgreSQL, each with its
// own pool and owner, share the alarms: each alarm's handler succeeds
// exactly once. Then a node dies in the middle of its handlers (its work is
// cancelled, nothing is recorded): the other node takes the alarms over
// when the lease expires, and completes each once.
func TestTwoNodesOnPostgres(t *testing.T) {
	t.Parallel()
	url := migratedPostgres(t)
	synctest.Test(t, func(t *testing.T) {
		ctx := t.Context()
		a, b := openPostgres(t, url), openPostgres(t, url)
		tenant := mustTenant(t, a, "shared")
		t0 := time.Now()
		rng := rand.New(rand.NewPCG(7, 7))
		const n = 400
		var links []linkforge.Link
		in := make([]linkforge.Link, n)
		for i := range in {
			// Many share a due time, so both nodes claim at the same instant.
			due := t0.Add(time.Second + time.Duration(rng.IntN(20))*time.Second)
			in[i] = linkforge.Link{TenantID: tenant.ID, Slug: fmt.Sprintf("shared-%03d", i), URL: "https://example.com/", ExpiresAt: &due}
		}
		if err := a.ImportLinks(ctx, in); err != nil {
			t.Fatalf("ImportLinks: %v", err)
		}
		page, err := a.QueryLinks(ctx, linkforge.ListQuery{TenantID: tenant.ID, Limit: 1000})
		if err != nil || len(page.Links) != n {
			t.Fatalf("QueryLinks = %d links, %v; want %d", len(page.Links), err, n)
		}
		links = page.Links

		byNode := map[string]*recorder{"node-a": {}, "node-b": {}}
		all := &recorder{}
		var nodes []*schedule.Scheduler
		for owner, st := range map[string]linkforge.Store{"node-a": a, "node-b": b} {
			rec := byNode[owner]
			// A small batch: a due second's alarms take several claims,
			// which the two nodes race for.
			nodes = append(nodes, mustStart(t, node{Store: st, Owner: owner, BatchSize: 7,
				OnExpired: []expiry.Hook{rec.hook, all.hook}}))
		}
		time.Sleep(time.Minute)
		synctest.Wait()
		for _, n := range nodes {
			mustStop(t, n)
		}

		succ := all.successes()
		for _, l := range links {
			if succ[l.ID] != 1 {
				t.Errorf("link %d: hook succeeded %d times across the nodes, want once", l.ID, succ[l.ID])
			}
		}
		if as := mustAlarms(t, a, tenant.ID, linkforge.AlarmDone); len(as) != n {
			t.Errorf("%d alarms done, want %d", len(as), n)
		}
		t.Logf("node-a ran %d alarms, node-b %d", byNode["node-a"].count(), byNode["node-b"].count())

		// node-b claims the next alarms alone, and dies in its hooks.
		const lease = 30 * time.Second
		t1 := time.Now()
		var doomed []linkforge.Link
		for i := range 10 {
			doomed = append(doomed, mustExpiringLink(t, a, tenant.ID, fmt.Sprintf("doomed-%d", i), t1.Add(5*time.Second)))
		}
		hanging := make(chan struct{}, len(doomed))
		dying := mustStart(t, node{Store: b, Owner: "node-b", Lease: lease,
			OnExpired: []expiry.Hook{func(ctx context.Context, l linkforge.Link) error {
				hanging <- struct{}{}
				<-ctx.Done()
				return ctx.Err()
			}}})
		time.Sleep(6 * time.Second)
		if len(hanging) == 0 {
			t.Fatalf("node-b is not running the alarms")
		}
		killed, kill := context.WithCancel(ctx)
		kill()
		if err := dying.Stop(killed); !errors.Is(err, context.Canceled) {
			t.Errorf("Stop with a cancelled context = %v, want context.Canceled", err)
		}
		for _, al := range mustAlarms(t, a, tenant.ID, linkforge.AlarmRunning) {
			if al.LeaseOwner != "node-b" {
				t.Errorf("running alarm %+v, want node-b's", al)
			}
		}

		heir := &recorder{}
		mustStart(t, node{Store: a, Owner: "node-a", Lease: lease, OnExpired: []expiry.Hook{heir.hook}})
		time.Sleep(time.Minute)
		synctest.Wait()
		leaseEnd := t1.Add(5*time.Second + lease)
		for _, l := range doomed {
			if cs := heir.callsOf(l.ID); len(cs) != 1 || !cs[0].at.Equal(leaseEnd) {
				t.Errorf("%q: node-a ran %+v, want once when node-b's lease expired (%v)", l.Slug, cs, leaseEnd.Sub(t1))
			}
			al, ok := findAlarm(mustAlarms(t, a, tenant.ID, ""), l.ID)
			if !ok || al.State != linkforge.AlarmDone || al.Attempt != 2 || len(al.Errors) != 1 ||
				!strings.Contains(al.Errors[0].Error, "lease of node-b expired") {
				t.Errorf("%q: alarm %+v, want done at attempt 2, node-b's lost lease on record", l.Slug, al)
			}
		}
	})
}

func findAlarm(as []linkforge.Alarm, linkID int64) (linkforge.Alarm, bool) {
	for _, a := range as {
		if a.LinkID == linkID {
			return a, true
		}
	}
	return linkforge.Alarm{}, false
}

// TestStoreOutage: claims that fail (the database is away) are retried with
// a growing delay; the alarm fires once the store answers again.
func TestStoreOutage(t *testing.T) {
	inBubble(t, func(t *testing.T, s linkforge.Store) {
		tenant := mustTenant(t, s, "acme")
		due := time.Now().Add(10 * time.Second)
		l := mustExpiringLink(t, s, tenant.ID, "outage", due)
		rec := &recorder{}
		reg := prometheus.NewRegistry()
		mustStart(t, node{Store: &flakyStore{Store: s, n: 3}, OnExpired: []expiry.Hook{rec.hook}, Registry: reg})
		time.Sleep(time.Minute)
		synctest.Wait()
		// Claims at 10 s, then 1, 2 and 4 s after each failure.
		if cs := rec.callsOf(l.ID); len(cs) != 1 || !cs[0].at.Equal(due.Add(7*time.Second)) {
			t.Errorf("runs %+v, want one at due + 7 s", cs)
		}
		if got := metricValue(t, reg, "linkforge_alarm_store_errors_total", nil); got != 3 {
			t.Errorf("linkforge_alarm_store_errors_total = %v, want 3", got)
		}
	})
}

// TestHookFailures: a panicking hook fails the run rather than the node, a
// hung hook is cut off before the lease ends, and every hook runs even
// after another failed.
func TestHookFailures(t *testing.T) {
	inBubble(t, func(t *testing.T, s linkforge.Store) {
		tenant := mustTenant(t, s, "acme")
		due := time.Now().Add(10 * time.Second)
		panicky := mustExpiringLink(t, s, tenant.ID, "panicky", due)
		hung := mustExpiringLink(t, s, tenant.ID, "hung", due)
		calls := map[int64]int{}
		first := func(ctx context.Context, l linkforge.Link) error {
			calls[l.ID]++ // hooks of one scheduler run one at a time
			if calls[l.ID] > 1 {
				return nil
			}
			switch l.ID {
			case panicky.ID:
				panic("boom")
			case hung.ID:
				<-ctx.Done()
				return ctx.Err()
			}
			return nil
		}
		rec := &recorder{}
		logs := &testlog.Buffer{}
		const lease = 30 * time.Second
		mustStart(t, node{Store: s, OnExpired: []expiry.Hook{first, rec.hook}, Lease: lease, Logger: logs.Logger()})
		time.Sleep(time.Minute)
		synctest.Wait()

		// The second hook ran on the first run too: right away after the
		// panic, and when the hung hook was cut off at half the lease.
		// Both succeeded on the retry, 2 s after that batch ended.
		retry := due.Add(lease/2 + 2*time.Second)
		for _, c := range []struct {
			l     linkforge.Link
			first time.Time
		}{{panicky, due}, {hung, due.Add(lease / 2)}} {
			cs := rec.callsOf(c.l.ID)
			if len(cs) != 2 || !cs[0].at.Equal(c.first) || !cs[1].at.Equal(retry) {
				t.Errorf("%q: second hook's runs %+v, want at %v and %v", c.l.Slug, cs, c.first.Sub(due), retry.Sub(due))
			}
		}
		errs := map[float64]string{}
		for _, rec := range logs.Records(t, "alarm_failed") {
			errs[rec["link_id"].(float64)] = rec["error"].(string)
		}
		if !strings.Contains(errs[float64(panicky.ID)], "hook panicked: boom") {
			t.Errorf("panicky hook's logged error = %q, want the panic", errs[float64(panicky.ID)])
		}
		if !strings.Contains(errs[float64(hung.ID)], "deadline exceeded") {
			t.Errorf("hung hook's logged error = %q, want the deadline", errs[float64(hung.ID)])
		}
		for _, a := range mustAlarms(t, s, tenant.ID, "") {
			if a.State != linkforge.AlarmDone || a.Attempt != 2 || len(a.Errors) != 1 || len(a.Errors[0].Error) > 1100 {
				t.Errorf("alarm %+v, want done at attempt 2 with one error of at most ~1 KiB", a)
			}
		}
	})
}

// TestNewChecksConfig: the Alarms need a store and no nil hook, and
// register their metrics once per registry.
func TestNewChecksConfig(t *testing.T) {
	s := testdb.SQLite(t)
	for name, cfg := range map[string]expiry.Config{
		"no store": {},
		"nil hook": {Store: s, OnExpired: []expiry.Hook{nil}},
	} {
		if _, err := expiry.New(cfg); err == nil {
			t.Errorf("New(%s) succeeded", name)
		}
	}
	reg := prometheus.NewRegistry()
	if _, err := expiry.New(expiry.Config{Store: s, Registry: reg}); err != nil {
		t.Fatalf("New with a registry: %v", err)
	}
	if _, err := expiry.New(expiry.Config{Store: s, Registry: reg}); err == nil {
		t.Errorf("second New on the same registry succeeded: duplicate metrics went unnoticed")
	}
}
