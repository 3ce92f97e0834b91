package storetest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/linkforge/linkforge"
)

// a0 is the due time the alarm cases count from: the start of a UTC second.
var a0 = time.Date(2027, 3, 1, 12, 0, 0, 0, time.UTC)

// sec returns a0 plus i seconds.
func sec(i int) time.Time { return a0.Add(time.Duration(i) * time.Second) }

// alarmLease is the lease duration of the alarm cases.
const alarmLease = 30 * time.Second

func expiringLink(tenantID int64, slug string, at time.Time) linkforge.Link {
	l := newLink(tenantID, slug)
	l.ExpiresAt = &at
	return l
}

// mustAlarms returns the tenant's alarms in state ("" for all).
func mustAlarms(t *testing.T, s linkforge.Store, tenantID int64, state linkforge.AlarmState) []linkforge.Alarm {
	t.Helper()
	as, err := s.ListAlarms(t.Context(), tenantID, state, 1000)
	if err != nil {
		t.Fatalf("ListAlarms(%d, %q): %v", tenantID, state, err)
	}
	if as == nil {
		t.Errorf("ListAlarms(%d, %q) = nil, want a non-nil slice", tenantID, state)
	}
	return as
}

// mustAlarmOf returns the alarm of the link, failing if it has none.
func mustAlarmOf(t *testing.T, s linkforge.Store, l linkforge.Link) linkforge.Alarm {
	t.Helper()
	a, ok := alarmOf(t, s, l)
	if !ok {
		t.Fatalf("link %q has no alarm", l.Slug)
	}
	return a
}

func alarmOf(t *testing.T, s linkforge.Store, l linkforge.Link) (linkforge.Alarm, bool) {
	t.Helper()
	for _, a := range mustAlarms(t, s, l.TenantID, "") {
		if a.LinkID == l.ID {
			return a, true
		}
	}
	return linkforge.Alarm{}, false
}

func mustClaim(t *testing.T, s linkforge.Store, owner string, now time.Time, limit int) []linkforge.Alarm {
	t.Helper()
	as, err := s.ClaimAlarms(t.Context(), owner, now, alarmLease, limit)
	if err != nil {
		t.Fatalf("ClaimAlarms(%q, %v, %d): %v", owner, now, limit, err)
	}
	return as
}

func mustComplete(t *testing.T, s linkforge.Store, now time.Time, leases ...linkforge.AlarmLease) int {
	t.Helper()
	n, err := s.CompleteAlarms(t.Context(), leases, now)
	if err != nil {
		t.Fatalf("CompleteAlarms(%v): %v", leases, err)
	}
	return n
}

// mustFail records one failure and reports whether the lease still held.
func mustFail(t *testing.T, s linkforge.Store, lease linkforge.AlarmLease, f linkforge.AlarmFailure) bool {
	t.Helper()
	f.Lease = lease
	ids, err := s.FailAlarms(t.Context(), []linkforge.AlarmFailure{f})
	if err != nil {
		t.Fatalf("FailAlarms(%v): %v", lease, err)
	}
	switch {
	case len(ids) == 0:
		return false
	case len(ids) == 1 && ids[0] == lease.AlarmID:
		return true
	}
	t.Fatalf("FailAlarms(%v) changed alarms %v", lease, ids)
	return false
}

func mustNextDue(t *testing.T, s linkforge.Store) (time.Time, bool) {
	t.Helper()
	due, ok, err := s.NextAlarmDue(t.Context())
	if err != nil {
		t.Fatalf("NextAlarmDue: %v", err)
	}
	return due, ok
}

// wantNextDue checks NextAlarmDue; a zero want means none.
func wantNextDue(t *testing.T, s linkforge.Store, want time.Time, what string) {
	t.Helper()
	got, ok := mustNextDue(t, s)
	switch {
	case want.IsZero() && ok:
		t.Errorf("%s: NextAlarmDue = %v, want none", what, got)
	case !want.IsZero() && !ok:
		t.Errorf("%s: NextAlarmDue = none, want %v", what, want)
	case ok && !got.Equal(want):
		t.Errorf("%s: NextAlarmDue = %v, want %v", what, got, want)
	}
	if ok {
		checkTime(t, what+": NextAlarmDue", got)
	}
}

// alarmWant is what checkAlarm compares; the rest (ids, created and
// updated times) is checked for sanity only.
type alarmWant struct {
	link     linkforge.Link
	due      time.Time
	state    linkforge.AlarmState
	attempt  int
	owner    string      // "" : no lease
	leaseEnd time.Time   // zero: no lease
	errors   []string    // substrings of each error, in order
	errAt    []time.Time // times of each error, if not nil
}

func checkAlarm(t *testing.T, what string, got linkforge.Alarm, w alarmWant) {
	t.Helper()
	var diffs []string
	add := func(field string, g, w any) { diffs = append(diffs, fmt.Sprintf("%s = %v, want %v", field, g, w)) }
	if got.ID == 0 {
		diffs = append(diffs, "ID is 0")
	}
	if got.LinkID != w.link.ID {
		add("LinkID", got.LinkID, w.link.ID)
	}
	if got.TenantID != w.link.TenantID {
		add("TenantID", got.TenantID, w.link.TenantID)
	}
	if !got.DueAt.Equal(w.due) {
		add("DueAt", got.DueAt, w.due)
	}
	if got.State != w.state {
		add("State", got.State, w.state)
	}
	if got.Attempt != w.attempt {
		add("Attempt", got.Attempt, w.attempt)
	}
	if got.LeaseOwner != w.owner {
		add("LeaseOwner", got.LeaseOwner, w.owner)
	}
	if w.leaseEnd.IsZero() != (got.LeaseExpiresAt == nil) ||
		(got.LeaseExpiresAt != nil && !got.LeaseExpiresAt.Equal(w.leaseEnd)) {
		add("LeaseExpiresAt", fmtTime(got.LeaseExpiresAt), w.leaseEnd)
	}
	if got.Errors == nil {
		diffs = append(diffs, "Errors is nil, want a non-nil slice")
	}
	if len(got.Errors) != len(w.errors) {
		add("len(Errors)", fmt.Sprintf("%d (%+v)", len(got.Errors), got.Errors), len(w.errors))
	} else {
		for i, e := range got.Errors {
			if !strings.Contains(e.Error, w.errors[i]) {
				add(fmt.Sprintf("Errors[%d].Error", i), e.Error, "containing "+w.errors[i])
			}
			if e.Attempt != i+1 && w.errAt != nil {
				add(fmt.Sprintf("Errors[%d].Attempt", i), e.Attempt, i+1)
			}
			if w.errAt != nil && !e.At.Equal(w.errAt[i]) {
				add(fmt.Sprintf("Errors[%d].At", i), e.At, w.errAt[i])
			}
			checkTime(t, what+": error time", e.At)
		}
	}
	if len(diffs) > 0 {
		t.Errorf("%s: alarm of %q:\n\t%s", what, w.link.Slug, strings.Join(diffs, "\n\t"))
	}
	checkTime(t, what+": DueAt", got.DueAt)
	checkTime(t, what+": CreatedAt", got.CreatedAt)
	checkTime(t, what+": UpdatedAt", got.UpdatedAt)
	if got.LeaseExpiresAt != nil {
		checkTime(t, what+": LeaseExpiresAt", *got.LeaseExpiresAt)
	}
}

func testAlarmsFollowLinks(t *testing.T, s linkforge.Store) {
	ctx := t.Context()
	acme := mustTenant(t, s, "alarm-links")

	t.Run("no expiry, no alarm", func(t *testing.T) {
		l := mustCreateLink(t, s, newLink(acme.ID, "al-none"))
		if a, ok := alarmOf(t, s, l); ok {
			t.Errorf("link without expiry has alarm %+v", a)
		}
	})

	t.Run("create schedules", func(t *testing.T) {
		l := mustCreateLink(t, s, expiringLink(acme.ID, "al-create", sec(10)))
		a := mustAlarmOf(t, s, l)
		checkAlarm(t, "after CreateLink", a, alarmWant{link: l, due: sec(10), state: linkforge.AlarmScheduled})
		if a.Slug != l.Slug {
			t.Errorf("ListAlarms: Slug = %q, want %q", a.Slug, l.Slug)
		}
	})

	t.Run("create of an already expired link", func(t *testing.T) {
		in := expiringLink(acme.ID, "al-was-expired", sec(10))
		in.ExpiredAt = ptr(sec(11))
		l := mustCreateLink(t, s, in)
		checkAlarm(t, "after CreateLink", mustAlarmOf(t, s, l), alarmWant{link: l, due: sec(10), state: linkforge.AlarmDone})
	})

	t.Run("unchanged expiry keeps the alarm", func(t *testing.T) {
		l := mustCreateLink(t, s, expiringLink(acme.ID, "al-keep", sec(10)))
		// A claimed alarm shows that nothing was reset: its lease stays.
		claimed := mustClaim(t, s, "node-keep", sec(10), 100)
		if len(claimed) == 0 {
			t.Fatalf("nothing claimed")
		}
		before := mustAlarmOf(t, s, l)
		if before.State != linkforge.AlarmRunning {
			t.Fatalf("alarm state %q after the claim, want running", before.State)
		}
		for _, fn := range []func(*linkforge.Link){
			func(l *linkforge.Link) { l.URL = "https://example.com/moved" },
			func(l *linkforge.Link) { l.Tags = []string{"x"} },
			func(l *linkforge.Link) { l.ExpiresAt = ptr(sec(10)) }, // same instant, new pointer
		} {
			if _, err := s.UpdateLink(ctx, acme.ID, linkforge.PublicDomainID, l.Slug, func(l *linkforge.Link) error { fn(l); return nil }); err != nil {
				t.Fatalf("UpdateLink: %v", err)
			}
		}
		after := mustAlarmOf(t, s, l)
		if after.State != before.State || after.Attempt != before.Attempt || after.LeaseSeq != before.LeaseSeq ||
			after.LeaseOwner != before.LeaseOwner || !after.DueAt.Equal(before.DueAt) || !after.UpdatedAt.Equal(before.UpdatedAt) {
			t.Errorf("alarm after updates that kept the expiry = %+v, want untouched %+v", after, before)
		}
		// Put the other claimed alarms of this case back out of the way.
		for _, a := range claimed {
			mustComplete(t, s, sec(10), a.Lease())
		}
	})

	t.Run("moved expiry reschedules", func(t *testing.T) {
		l := mustCreateLink(t, s, expiringLink(acme.ID, "al-move", sec(100)))
		claimed := mustClaim(t, s, "node-move", sec(100), 100)
		var lease linkforge.AlarmLease
		for _, a := range claimed {
			if a.LinkID == l.ID {
				lease = a.Lease()
			}
		}
		if lease.AlarmID == 0 {
			t.Fatalf("alarm of %q not claimed", l.Slug)
		}
		if !mustFail(t, s, lease, linkforge.AlarmFailure{At: sec(100), Error: "first failure", NextDue: sec(102)}) {
			t.Fatalf("FailAlarms of a fresh claim: lease lost")
		}
		// Mark the link expired, as the alarm would, then move the expiry.
		if _, err := s.ExpireLinks(ctx, []int64{l.ID}, sec(100)); err != nil {
			t.Fatalf("ExpireLinks: %v", err)
		}
		moved, err := s.UpdateLink(ctx, acme.ID, linkforge.PublicDomainID, l.Slug, func(l *linkforge.Link) error { l.ExpiresAt = ptr(sec(500)); return nil })
		if err != nil {
			t.Fatalf("UpdateLink: %v", err)
		}
		if moved.ExpiredAt != nil {
			t.Errorf("ExpiredAt = %v after the expiry moved, want nil: it recorded the old expiry", *moved.ExpiredAt)
		}
		if got := mustTenantLink(t, s, acme.ID, l.Slug); got.ExpiredAt != nil {
			t.Errorf("stored ExpiredAt = %v after the expiry moved, want nil", *got.ExpiredAt)
		}
		// Attempt back to 0, errors kept.
		checkAlarm(t, "after moving the expiry", mustAlarmOf(t, s, l), alarmWant{
			link: l, due: sec(500), state: linkforge.AlarmScheduled, errors: []string{"first failure"}})
		for _, a := range claimed {
			mustComplete(t, s, sec(100), a.Lease())
		}
	})

	t.Run("explicit ExpiredAt is kept", func(t *testing.T) {
		mustCreateLink(t, s, expiringLink(acme.ID, "al-explicit", sec(10)))
		got, err := s.UpdateLink(ctx, acme.ID, linkforge.PublicDomainID, "al-explicit", func(l *linkforge.Link) error {
			l.ExpiresAt = ptr(sec(20))
			l.ExpiredAt = ptr(sec(21))
			return nil
		})
		if err != nil {
			t.Fatalf("UpdateLink: %v", err)
		}
		if !sameTime(got.ExpiredAt, ptr(sec(21))) {
			t.Errorf("ExpiredAt = %s, want the one fn set, %v", fmtTime(got.ExpiredAt), sec(21))
		}
		if a := mustAlarmOf(t, s, got); a.State != linkforge.AlarmDone {
			t.Errorf("alarm state = %q for a link marked expired at its new expiry, want done", a.State)
		}
	})

	t.Run("cleared expiry deletes", func(t *testing.T) {
		l := mustCreateLink(t, s, expiringLink(acme.ID, "al-clear", sec(10)))
		mustAlarmOf(t, s, l)
		if _, err := s.UpdateLink(ctx, acme.ID, linkforge.PublicDomainID, l.Slug, func(l *linkforge.Link) error { l.ExpiresAt = nil; return nil }); err != nil {
			t.Fatalf("UpdateLink: %v", err)
		}
		if a, ok := alarmOf(t, s, l); ok {
			t.Errorf("alarm after clearing the expiry: %+v, want none", a)
		}
	})

	t.Run("set expiry creates", func(t *testing.T) {
		l := mustCreateLink(t, s, newLink(acme.ID, "al-set"))
		if _, err := s.UpdateLink(ctx, acme.ID, linkforge.PublicDomainID, l.Slug, func(l *linkforge.Link) error { l.ExpiresAt = ptr(sec(30)); return nil }); err != nil {
			t.Fatalf("UpdateLink: %v", err)
		}
		checkAlarm(t, "after setting the expiry", mustAlarmOf(t, s, l), alarmWant{link: l, due: sec(30), state: linkforge.AlarmScheduled})
	})

	t.Run("aborted update keeps the alarm", func(t *testing.T) {
		l := mustCreateLink(t, s, expiringLink(acme.ID, "al-abort", sec(10)))
		_, err := s.UpdateLink(ctx, acme.ID, linkforge.PublicDomainID, l.Slug, func(l *linkforge.Link) error { l.ExpiresAt = nil; return errAbort })
		if !errors.Is(err, errAbort) {
			t.Fatalf("UpdateLink = %v, want fn's error", err)
		}
		checkAlarm(t, "after an aborted update", mustAlarmOf(t, s, l), alarmWant{link: l, due: sec(10), state: linkforge.AlarmScheduled})
	})

	t.Run("delete deletes", func(t *testing.T) {
		other := mustTenant(t, s, "alarm-links-delete")
		l := mustCreateLink(t, s, expiringLink(other.ID, "al-delete", sec(-1000)))
		wantNextDue(t, s, sec(-1000), "before the delete")
		if _, err := s.DeleteLink(ctx, other.ID, linkforge.PublicDomainID, l.Slug); err != nil {
			t.Fatalf("DeleteLink: %v", err)
		}
		if as := mustAlarms(t, s, other.ID, ""); len(as) != 0 {
			t.Errorf("alarms after DeleteLink = %+v, want none", as)
		}
		for _, a := range mustClaim(t, s, "node-delete", sec(-1000), 100) {
			if a.LinkID == l.ID {
				t.Errorf("claimed the alarm of a deleted link: %+v", a)
			}
		}
	})
}

func testClaimAlarms(t *testing.T, s linkforge.Store) {
	ctx := t.Context()
	acme := mustTenant(t, s, "claim-acme")
	other := mustTenant(t, s, "claim-other")
	l1 := mustCreateLink(t, s, expiringLink(acme.ID, "cl-1", sec(1)))
	l3 := mustCreateLink(t, s, expiringLink(acme.ID, "cl-3", sec(3)))
	l2 := mustCreateLink(t, s, expiringLink(other.ID, "cl-2", sec(2)))

	wantNextDue(t, s, sec(1), "fresh")
	if got := mustClaim(t, s, "node-a", sec(0), 10); len(got) != 0 {
		t.Fatalf("ClaimAlarms before any is due = %+v, want none", got)
	}

	// At 2 s the alarms of l1 and l2 are due, whatever their tenant,
	// earliest first.
	got := mustClaim(t, s, "node-a", sec(2), 10)
	if len(got) != 2 {
		t.Fatalf("ClaimAlarms at 2s claimed %d alarms, want 2: %+v", len(got), got)
	}
	lease := sec(2).Add(alarmLease)
	checkAlarm(t, "claimed first", got[0], alarmWant{link: l1, due: sec(1), state: linkforge.AlarmRunning,
		attempt: 1, owner: "node-a", leaseEnd: lease})
	checkAlarm(t, "claimed second", got[1], alarmWant{link: l2, due: sec(2), state: linkforge.AlarmRunning,
		attempt: 1, owner: "node-a", leaseEnd: lease})
	if got[0].LeaseSeq <= 0 || got[0].RetryCount() != 0 {
		t.Errorf("first claim: LeaseSeq %d, RetryCount %d; want a positive sequence and retry count 0", got[0].LeaseSeq, got[0].RetryCount())
	}
	a1, a2 := got[0], got[1]
	// The stored alarm is what the claim returned.
	checkAlarm(t, "listed while running", mustAlarmOf(t, s, l1), alarmWant{link: l1, due: sec(1),
		state: linkforge.AlarmRunning, attempt: 1, owner: "node-a", leaseEnd: lease})

	wantNextDue(t, s, sec(3), "with two leases running")
	if got := mustClaim(t, s, "node-b", sec(2), 10); len(got) != 0 {
		t.Errorf("second ClaimAlarms at 2s = %+v, want none: the due ones are leased", got)
	}

	// When the lease expires, another node takes the alarm over; the lost
	// attempt is recorded.
	takeover := mustClaim(t, s, "node-b", lease, 1)
	if len(takeover) != 1 {
		t.Fatalf("ClaimAlarms after the lease expired claimed %d, want 1 (limit)", len(takeover))
	}
	checkAlarm(t, "taken over", takeover[0], alarmWant{link: l1, due: sec(1), state: linkforge.AlarmRunning,
		attempt: 2, owner: "node-b", leaseEnd: lease.Add(alarmLease),
		errors: []string{"lease of node-a expired"}, errAt: []time.Time{lease}})
	if takeover[0].LeaseSeq <= a1.LeaseSeq {
		t.Errorf("LeaseSeq after the takeover = %d, want more than %d", takeover[0].LeaseSeq, a1.LeaseSeq)
	}

	// node-a's stale lease completes nothing; its lease of l2 still works.
	if n := mustComplete(t, s, lease, a1.Lease(), a2.Lease()); n != 1 {
		t.Errorf("CompleteAlarms(stale lease of l1, lease of l2) = %d, want 1", n)
	}
	if ok := mustFail(t, s, a1.Lease(), linkforge.AlarmFailure{At: lease, Error: "late", NextDue: sec(99)}); ok {
		t.Errorf("FailAlarms with a superseded lease changed the alarm")
	}
	checkAlarm(t, "l2 done", mustAlarmOf(t, s, l2), alarmWant{link: l2, due: sec(2), state: linkforge.AlarmDone, attempt: 1})
	if n := mustComplete(t, s, lease, takeover[0].Lease()); n != 1 {
		t.Errorf("CompleteAlarms(node-b's lease) = %d, want 1", n)
	}
	if n := mustComplete(t, s, lease, takeover[0].Lease()); n != 0 {
		t.Errorf("second CompleteAlarms of the same lease = %d, want 0", n)
	}
	checkAlarm(t, "l1 done", mustAlarmOf(t, s, l1), alarmWant{link: l1, due: sec(1), state: linkforge.AlarmDone,
		attempt: 2, errors: []string{"lease of node-a expired"}})
	wantNextDue(t, s, sec(3), "after completing")

	// A done alarm is never claimed again.
	rest := mustClaim(t, s, "node-c", sec(10000), 10)
	if len(rest) != 1 || rest[0].LinkID != l3.ID {
		t.Fatalf("ClaimAlarms far in the future = %+v, want only l3's", rest)
	}

	// The same owner claiming again after its lease expired (a node
	// restarted with its node id): the sequence tells the claims apart.
	again := mustClaim(t, s, "node-c", sec(10000).Add(alarmLease), 10)
	if len(again) != 1 || again[0].LeaseOwner != "node-c" || again[0].LeaseSeq == rest[0].LeaseSeq {
		t.Fatalf("second claim by node-c = %+v, want l3's with a new sequence", again)
	}
	if n := mustComplete(t, s, sec(10030), rest[0].Lease()); n != 0 {
		t.Errorf("CompleteAlarms with node-c's first, superseded lease = %d, want 0", n)
	}
	if mustFail(t, s, rest[0].Lease(), linkforge.AlarmFailure{At: sec(10030), Error: "late", NextDue: sec(10040)}) {
		t.Errorf("FailAlarms with node-c's first, superseded lease changed the alarm")
	}
	if n := mustComplete(t, s, sec(10030), again[0].Lease()); n != 1 {
		t.Errorf("CompleteAlarms with node-c's current lease = %d, want 1", n)
	}

	t.Run("bad arguments", func(t *testing.T) {
		for _, c := range []struct {
			owner string
			lease time.Duration
			limit int
		}{{"", alarmLease, 1}, {"n", 0, 1}, {"n", alarmLease, 0}} {
			if _, err := s.ClaimAlarms(ctx, c.owner, sec(0), c.lease, c.limit); err == nil {
				t.Errorf("ClaimAlarms(%q, lease %v, limit %d) succeeded, want an error", c.owner, c.lease, c.limit)
			}
		}
		if n, err := s.CompleteAlarms(ctx, nil, sec(0)); err != nil || n != 0 {
			t.Errorf("CompleteAlarms(nil) = %d, %v; want 0, nil", n, err)
		}
	})
}

func testFailAndRetryAlarm(t *testing.T, s linkforge.Store) {
	ctx := t.Context()
	acme := mustTenant(t, s, "fail-acme")
	other := mustTenant(t, s, "fail-other")
	l := mustCreateLink(t, s, expiringLink(acme.ID, "fail-1", sec(0)))

	claim := mustClaim(t, s, "node-a", sec(0), 10)
	if len(claim) != 1 {
		t.Fatalf("claimed %d, want 1", len(claim))
	}
	if !mustFail(t, s, claim[0].Lease(), linkforge.AlarmFailure{At: sec(0), Error: "boom 1", NextDue: sec(2)}) {
		t.Fatalf("FailAlarms: lease lost")
	}
	checkAlarm(t, "after the first failure", mustAlarmOf(t, s, l), alarmWant{link: l, due: sec(2),
		state: linkforge.AlarmRetrying, attempt: 1, errors: []string{"boom 1"}, errAt: []time.Time{sec(0)}})
	if mustFail(t, s, claim[0].Lease(), linkforge.AlarmFailure{At: sec(0), Error: "twice", NextDue: sec(2)}) {
		t.Errorf("second FailAlarms of the same lease changed the alarm")
	}
	if as := mustAlarms(t, s, acme.ID, linkforge.AlarmRetrying); len(as) != 1 || as[0].LinkID != l.ID {
		t.Errorf("ListAlarms(retrying) = %+v, want l's", as)
	}
	wantNextDue(t, s, sec(2), "retrying")
	if got := mustClaim(t, s, "node-a", sec(1), 10); len(got) != 0 {
		t.Errorf("claimed %+v before the retry is due", got)
	}

	claim = mustClaim(t, s, "node-b", sec(2), 10)
	if len(claim) != 1 || claim[0].Attempt != 2 || claim[0].RetryCount() != 1 {
		t.Fatalf("retry claim = %+v, want one alarm at attempt 2", claim)
	}
	if !mustFail(t, s, claim[0].Lease(), linkforge.AlarmFailure{At: sec(3), Error: "boom 2", Dead: true}) {
		t.Fatalf("FailAlarms(dead): lease lost")
	}
	dead := alarmWant{link: l, due: sec(2), state: linkforge.AlarmDead, attempt: 2,
		errors: []string{"boom 1", "boom 2"}, errAt: []time.Time{sec(0), sec(3)}}
	checkAlarm(t, "dead", mustAlarmOf(t, s, l), dead)
	wantNextDue(t, s, time.Time{}, "with only a dead alarm")
	if got := mustClaim(t, s, "node-a", sec(100000), 10); len(got) != 0 {
		t.Errorf("claimed a dead alarm: %+v", got)
	}

	listed := mustAlarms(t, s, acme.ID, linkforge.AlarmDead)
	if len(listed) != 1 {
		t.Fatalf("ListAlarms(dead) = %+v, want l's alarm", listed)
	}
	checkAlarm(t, "ListAlarms(dead)", listed[0], dead)
	if listed[0].Slug != l.Slug {
		t.Errorf("Slug = %q, want %q", listed[0].Slug, l.Slug)
	}
	for _, st := range []linkforge.AlarmState{linkforge.AlarmScheduled, linkforge.AlarmRetrying, linkforge.AlarmDone, linkforge.AlarmRunning} {
		if as := mustAlarms(t, s, acme.ID, st); len(as) != 0 {
			t.Errorf("ListAlarms(%s) = %+v, want none", st, as)
		}
	}
	if as := mustAlarms(t, s, other.ID, linkforge.AlarmDead); len(as) != 0 {
		t.Errorf("another tenant's ListAlarms(dead) = %+v, want none", as)
	}
	_, err := s.ListAlarms(ctx, acme.ID, "sleeping", 10)
	wantCode(t, err, linkforge.EInvalid, "ListAlarms(unknown state)")

	id := listed[0].ID
	_, err = s.RetryAlarm(ctx, other.ID, id, sec(50))
	wantCode(t, err, linkforge.ENotFound, "RetryAlarm of another tenant's alarm")
	_, err = s.RetryAlarm(ctx, acme.ID, id+1_000_000, sec(50))
	wantCode(t, err, linkforge.ENotFound, "RetryAlarm of an unknown alarm")
	checkAlarm(t, "after the refused retries", mustAlarmOf(t, s, l), dead)

	replayed, err := s.RetryAlarm(ctx, acme.ID, id, sec(50))
	if err != nil {
		t.Fatalf("RetryAlarm: %v", err)
	}
	// Scheduled now, attempts from zero, history kept.
	want := alarmWant{link: l, due: sec(50), state: linkforge.AlarmScheduled,
		errors: []string{"boom 1", "boom 2"}, errAt: []time.Time{sec(0), sec(3)}}
	checkAlarm(t, "RetryAlarm's result", replayed, want)
	if replayed.Slug != l.Slug {
		t.Errorf("RetryAlarm: Slug = %q, want %q", replayed.Slug, l.Slug)
	}
	checkAlarm(t, "after RetryAlarm", mustAlarmOf(t, s, l), want)
	wantNextDue(t, s, sec(50), "replayed")

	_, err = s.RetryAlarm(ctx, acme.ID, id, sec(51))
	wantCode(t, err, linkforge.EConflict, "RetryAlarm of a scheduled alarm")
	claim = mustClaim(t, s, "node-a", sec(50), 10)
	if len(claim) != 1 || claim[0].Attempt != 1 {
		t.Fatalf("claim after the replay = %+v, want one alarm at attempt 1", claim)
	}
	_, err = s.RetryAlarm(ctx, acme.ID, id, sec(51))
	wantCode(t, err, linkforge.EConflict, "RetryAlarm of a running alarm")
}

func testListAlarms(t *testing.T, s linkforge.Store) {
	acme := mustTenant(t, s, "list-acme")
	var links []linkforge.Link
	// Created out of due order: the list is by due time.
	for _, i := range []int{4, 1, 3, 0, 2} {
		links = append(links, mustCreateLink(t, s, expiringLink(acme.ID, fmt.Sprintf("list-%d", i), sec(i))))
	}
	got, err := s.ListAlarms(t.Context(), acme.ID, linkforge.AlarmScheduled, 2)
	if err != nil {
		t.Fatalf("ListAlarms: %v", err)
	}
	var slugs []string
	for _, a := range got {
		slugs = append(slugs, a.Slug)
	}
	if !slices.Equal(slugs, []string{"list-0", "list-1"}) {
		t.Errorf("ListAlarms(limit 2) = %q, want the two earliest, [list-0 list-1]", slugs)
	}
	if all := mustAlarms(t, s, acme.ID, ""); len(all) != len(links) {
		t.Errorf("ListAlarms(all) = %d alarms, want %d", len(all), len(links))
	}
}

func testExpireLinks(t *testing.T, s linkforge.Store) {
	ctx := t.Context()
	acme := mustTenant(t, s, "expire-acme")
	due := mustCreateLink(t, s, expiringLink(acme.ID, "ex-due", sec(0)))
	later := mustCreateLink(t, s, expiringLink(acme.ID, "ex-later", sec(3600)))
	never := mustCreateLink(t, s, newLink(acme.ID, "ex-never"))
	gone := mustCreateLink(t, s, expiringLink(acme.ID, "ex-gone", sec(0)))
	if _, err := s.DeleteLink(ctx, acme.ID, linkforge.PublicDomainID, gone.Slug); err != nil {
		t.Fatalf("DeleteLink: %v", err)
	}
	ids := []int64{due.ID, later.ID, never.ID, gone.ID, due.ID + 1_000_000}

	expire := func(at time.Time, ids ...int64) []linkforge.Link {
		t.Helper()
		ls, err := s.ExpireLinks(ctx, ids, at)
		if err != nil {
			t.Fatalf("ExpireLinks(%v): %v", at, err)
		}
		if ls == nil {
			t.Errorf("ExpireLinks = nil, want a non-nil slice")
		}
		return ls
	}
	if got := expire(sec(-1), ids...); len(got) != 0 {
		t.Errorf("ExpireLinks before the expiry = %v, want none", linkIDs(got))
	}
	wantDue := due
	wantDue.ExpiredAt = ptr(sec(0))
	for _, at := range []time.Time{sec(0), sec(5)} { // the second run changes nothing
		got := expire(at, ids...)
		if len(got) != 1 {
			t.Fatalf("ExpireLinks at %v = %v, want only %d", at, linkIDs(got), due.ID)
		}
		checkLink(t, "ExpireLinks", got[0], wantDue)
		checkLink(t, "TenantLink after ExpireLinks", mustTenantLink(t, s, acme.ID, due.Slug), wantDue)
	}
	if got := expire(sec(0)); len(got) != 0 {
		t.Errorf("ExpireLinks() = %v, want none", linkIDs(got))
	}

	// Moved later: no longer expired, and the old expired_at is gone.
	moved, err := s.UpdateLink(ctx, acme.ID, linkforge.PublicDomainID, due.Slug, func(l *linkforge.Link) error { l.ExpiresAt = ptr(sec(7200)); return nil })
	if err != nil {
		t.Fatalf("UpdateLink: %v", err)
	}
	if got := expire(sec(10), due.ID); len(got) != 0 {
		t.Errorf("ExpireLinks after the expiry moved later = %v, want none", linkIDs(got))
	}
	if got := mustTenantLink(t, s, acme.ID, due.Slug); got.ExpiredAt != nil {
		t.Errorf("ExpiredAt of a link moved later = %v, want nil", *got.ExpiredAt)
	}
	got := expire(sec(7300), due.ID)
	wantMoved := moved
	wantMoved.ExpiredAt = ptr(sec(7300))
	if len(got) != 1 {
		t.Fatalf("ExpireLinks at the new expiry = %v, want %d", linkIDs(got), due.ID)
	}
	checkLink(t, "ExpireLinks at the new expiry", got[0], wantMoved)
}

// testClaimConcurrency claims from several goroutines at once: every alarm
// is claimed exactly once (SKIP LOCKED on PostgreSQL, the single writer on
// SQLite).
func testClaimConcurrency(t *testing.T, s linkforge.Store) {
	acme := mustTenant(t, s, "claim-conc")
	const n = 120
	want := map[int64]bool{}
	for i := range n {
		l := mustCreateLink(t, s, expiringLink(acme.ID, fmt.Sprintf("cc-%03d", i), sec(i%7)))
		want[l.ID] = true
	}
	var (
		mu      sync.Mutex
		claimed = map[int64]int{}
		wg      sync.WaitGroup
		errs    = make(chan error, 8)
	)
	for w := range 8 {
		wg.Go(func() {
			owner := fmt.Sprintf("node-%d", w)
			for {
				as, err := s.ClaimAlarms(t.Context(), owner, sec(10), alarmLease, 5)
				if err != nil {
					errs <- err
					return
				}
				if len(as) == 0 {
					return
				}
				mu.Lock()
				for _, a := range as {
					claimed[a.LinkID]++
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Errorf("ClaimAlarms: %v", err)
	}
	if len(claimed) != n {
		t.Errorf("%d alarms claimed, want %d", len(claimed), n)
	}
	for id, c := range claimed {
		if c != 1 || !want[id] {
			t.Errorf("alarm of link %d claimed %d times (known link: %v), want once", id, c, want[id])
		}
	}
}

// testFailAlarmsBatch records several failures in one call: retrying, dead
// and a superseded lease side by side.
func testFailAlarmsBatch(t *testing.T, s linkforge.Store) {
	acme := mustTenant(t, s, "failbatch")
	retry := mustCreateLink(t, s, expiringLink(acme.ID, "fb-retry", sec(0)))
	dead := mustCreateLink(t, s, expiringLink(acme.ID, "fb-dead", sec(1)))
	stale := mustCreateLink(t, s, expiringLink(acme.ID, "fb-stale", sec(2)))
	claimed := mustClaim(t, s, "node-a", sec(2), 10)
	if len(claimed) != 3 {
		t.Fatalf("claimed %d, want 3", len(claimed))
	}
	staleLease := claimed[2].Lease()
	staleLease.Seq++ // as if another claim had superseded it
	ids, err := s.FailAlarms(t.Context(), []linkforge.AlarmFailure{
		{Lease: claimed[0].Lease(), At: sec(3), Error: "one", NextDue: sec(5)},
		{Lease: claimed[1].Lease(), At: sec(3), Error: "two", Dead: true},
		{Lease: staleLease, At: sec(3), Error: "three", NextDue: sec(5)},
	})
	if err != nil {
		t.Fatalf("FailAlarms: %v", err)
	}
	slices.Sort(ids)
	if want := []int64{claimed[0].ID, claimed[1].ID}; !slices.Equal(ids, want) {
		t.Errorf("FailAlarms changed %v, want %v", ids, want)
	}
	checkAlarm(t, "retrying", mustAlarmOf(t, s, retry), alarmWant{link: retry, due: sec(5), state: linkforge.AlarmRetrying,
		attempt: 1, errors: []string{"one"}, errAt: []time.Time{sec(3)}})
	checkAlarm(t, "dead", mustAlarmOf(t, s, dead), alarmWant{link: dead, due: sec(1), state: linkforge.AlarmDead,
		attempt: 1, errors: []string{"two"}, errAt: []time.Time{sec(3)}})
	checkAlarm(t, "stale lease", mustAlarmOf(t, s, stale), alarmWant{link: stale, due: sec(2), state: linkforge.AlarmRunning,
		attempt: 1, owner: "node-a", leaseEnd: sec(2).Add(alarmLease)})
	if ids, err := s.FailAlarms(t.Context(), nil); err != nil || ids == nil || len(ids) != 0 {
		t.Errorf("FailAlarms(nil) = %v, %v; want an empty slice", ids, err)
	}
}

// importer is the bulk loader both stores offer beside linkforge.Store
// (benchmarks and imports load millions of links with it).
type importer interface {
	ImportLinks(ctx context.Context, links []linkforge.Link) error
}

// testImportLinksSchedulesAlarms: the bulk loader gives every expiring link
// its alarm (done for one already expired), in the import's transaction: a
// failed import leaves no alarm behind.
func testImportLinksSchedulesAlarms(t *testing.T, s linkforge.Store) {
	imp, ok := s.(importer)
	if !ok {
		t.Skip("this store has no ImportLinks")
	}
	ctx := t.Context()
	tenant := mustTenant(t, s, "bulk")
	due := time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC)
	expired := due.Add(time.Second)
	if err := imp.ImportLinks(ctx, []linkforge.Link{
		{TenantID: tenant.ID, Slug: "imp-c", URL: "https://example.com/c", ExpiresAt: &due},
		{TenantID: tenant.ID, Slug: "imp-a", URL: "https://example.com/a"},
		{TenantID: tenant.ID, Slug: "imp-b", URL: "https://example.com/b", ExpiresAt: &due, ExpiredAt: &expired},
	}); err != nil {
		t.Fatalf("ImportLinks: %v", err)
	}
	got, err := s.ListAlarms(ctx, tenant.ID, "", 100)
	if err != nil {
		t.Fatalf("ListAlarms: %v", err)
	}
	states := map[string]linkforge.AlarmState{}
	for _, a := range got {
		l, err := s.LinkBySlug(ctx, linkforge.PublicDomainID, a.Slug)
		if err != nil || l.ID != a.LinkID {
			t.Errorf("alarm %+v: its slug names link %+v (%v), want link %d", a, l, err, a.LinkID)
		}
		if !a.DueAt.Equal(due) {
			t.Errorf("alarm of %s due %v, want %v", a.Slug, a.DueAt, due)
		}
		states[a.Slug] = a.State
	}
	if len(states) != 2 || states["imp-c"] != linkforge.AlarmScheduled || states["imp-b"] != linkforge.AlarmDone {
		t.Errorf("alarm states by slug = %v, want imp-c scheduled and imp-b done", states)
	}

	err = imp.ImportLinks(ctx, []linkforge.Link{
		{TenantID: tenant.ID, Slug: "imp-0", URL: "https://example.com/0", ExpiresAt: &due},
		{TenantID: tenant.ID, Slug: "imp-a", URL: "https://example.com/dup", ExpiresAt: &due},
	})
	if code := linkforge.ErrorCode(err); code != linkforge.EConflict {
		t.Fatalf("ImportLinks with a taken slug = %v, want a conflict", err)
	}
	if got, err := s.ListAlarms(ctx, tenant.ID, "", 100); err != nil || len(got) != 2 {
		t.Errorf("alarms after the failed import = %d (%v), want the 2 from before", len(got), err)
	}
}
