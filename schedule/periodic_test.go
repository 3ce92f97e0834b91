package schedule_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/linkforge/linkforge/internal/testdb"
	"github.com/linkforge/linkforge/internal/testlog"
	"github.com/linkforge/linkforge/schedule"
)

const (
	testJob   = "test_job"
	testLease = time.Minute
	testEvery = 24 * time.Hour
	testRetry = 15 * time.Minute
)

// t0 is the injected clock: the instant the scheduler claims at.
var t0 = time.Date(2026, 12, 6, 3, 0, 0, 0, time.UTC)

// periodicRig is a Periodic on a real SQLite store, with what its runs
// reported and the due times they woke the scheduler for.
type periodicRig struct {
	store    schedule.JobStore
	p        *schedule.Periodic[int]
	outcomes chan schedule.Outcome[int]
	logs     *testlog.Buffer

	mu    sync.Mutex
	wakes []time.Time
}

func newPeriodicRig(t *testing.T, store schedule.JobStore,
	run func(ctx context.Context, now time.Time, renew func() error) (int, error)) *periodicRig {
	t.Helper()
	r := &periodicRig{store: store, outcomes: make(chan schedule.Outcome[int], 10), logs: &testlog.Buffer{}}
	p, err := schedule.NewPeriodic(schedule.PeriodicConfig[int]{
		Name: testJob, Store: store, Lease: testLease, Every: testEvery, RetryDelay: testRetry,
		Run:       run,
		Report:    func(o schedule.Outcome[int]) { r.outcomes <- o },
		Logger:    r.logs.Logger(),
		FinishMsg: "test job: finish",
	})
	if err != nil {
		t.Fatal(err)
	}
	r.p = p
	t.Cleanup(p.Close)
	return r
}

func (r *periodicRig) claim(t *testing.T, owner string, now time.Time) int {
	t.Helper()
	n, err := r.p.Claim(t.Context(), schedule.Claim{Owner: owner, Now: now, Wake: func(due time.Time) {
		r.mu.Lock()
		defer r.mu.Unlock()
		r.wakes = append(r.wakes, due)
	}})
	if err != nil {
		t.Fatalf("Claim by %s at %v: %v", owner, now, err)
	}
	return n
}

func (r *periodicRig) woken() []time.Time {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]time.Time(nil), r.wakes...)
}

func (r *periodicRig) nextDue(t *testing.T) time.Time {
	t.Helper()
	due, ok, err := r.p.NextDue(t.Context())
	if err != nil || !ok {
		t.Fatalf("NextDue: %v %v", ok, err)
	}
	return due
}

// TestPeriodicOneRunAtATime: while its run is under way, a node claims
// nothing, even after the lease the run renews seems to end (the store
// would give its owner the job again), and another node claims nothing
// under the lease; a run that succeeds sets the job due Every after its
// start, frees the lease and wakes the scheduler for then.
func TestPeriodicOneRunAtATime(t *testing.T) {
	s := testdb.SQLite(t)
	started, release := make(chan time.Time, 4), make(chan struct{}) // buffered: a second run must not hang the test
	run := func(_ context.Context, now time.Time, _ func() error) (int, error) {
		started <- now
		<-release
		return 7, nil
	}
	n1, n2 := newPeriodicRig(t, s, run), newPeriodicRig(t, s, run)
	if n := n1.claim(t, "n1", t0); n != 1 {
		t.Fatalf("n1's first claim: %d, want 1", n)
	}
	if now := <-started; !now.Equal(t0) {
		t.Errorf("the run's now %v, want the claim's %v", now, t0)
	}
	if n := n1.claim(t, "n1", t0.Add(2*testLease)); n != 0 {
		t.Errorf("n1's claim while its run is under way: %d, want 0", n)
	}
	if n := n2.claim(t, "n2", t0.Add(testLease/2)); n != 0 {
		t.Errorf("n2's claim under n1's lease: %d, want 0", n)
	}
	close(release)
	n1.p.Wait()
	o := <-n1.outcomes
	if o.Err != nil || o.Result != 7 || o.Owner != "n1" || !o.Next.Equal(t0.Add(testEvery)) {
		t.Errorf("outcome %+v, want 7, no error, owner n1, next %v", o, t0.Add(testEvery))
	}
	if w := n1.woken(); len(w) != 1 || !w[0].Equal(t0.Add(testEvery)) {
		t.Errorf("woken for %v, want [%v]", w, t0.Add(testEvery))
	}
	if due := n2.nextDue(t); !due.Equal(t0.Add(testEvery)) {
		t.Errorf("NextDue %v, want %v", due, t0.Add(testEvery))
	}
	// The lease is free: the next day's run is anyone's.
	if n := n2.claim(t, "n2", t0.Add(testEvery)); n != 1 {
		t.Errorf("n2's claim the next day: %d, want 1", n)
	}
	<-started // release is closed: this run returns at once
	n2.p.Wait()
	if o := <-n2.outcomes; o.Err != nil || o.Owner != "n2" {
		t.Errorf("n2's outcome %+v", o)
	}
	if len(n1.outcomes) != 0 || len(n2.outcomes) != 0 {
		t.Errorf("%d and %d more outcomes, want none", len(n1.outcomes), len(n2.outcomes))
	}
}

// TestPeriodicLeaseLost: a run whose lease another node took over (it
// outlived the lease without renewing it) stops with ErrLeaseLost at its
// next renewal, and leaves the job to the new owner: no next due time
// written, no lease freed, no wake-up.
func TestPeriodicLeaseLost(t *testing.T) {
	s := testdb.SQLite(t)
	ctx := t.Context()
	started, proceed := make(chan struct{}), make(chan struct{})
	r := newPeriodicRig(t, s, func(_ context.Context, _ time.Time, renew func() error) (int, error) {
		close(started)
		<-proceed
		if err := renew(); err != nil {
			return 3, err
		}
		return 4, nil
	})
	if n := r.claim(t, "n1", t0); n != 1 {
		t.Fatalf("n1's claim: %d, want 1", n)
	}
	<-started
	takeover := t0.Add(2 * testLease)
	if ok, err := s.ClaimJob(ctx, testJob, "n2", takeover, testLease); err != nil || !ok {
		t.Fatalf("n2's claim past n1's lease: %v %v", ok, err)
	}
	close(proceed)
	r.p.Wait()
	o := <-r.outcomes
	if !errors.Is(o.Err, schedule.ErrLeaseLost) || o.Result != 3 {
		t.Errorf("outcome %+v, want ErrLeaseLost and the run's result 3", o)
	}
	if w := r.woken(); len(w) != 0 {
		t.Errorf("woken for %v, want no wake-up", w)
	}
	if due := r.nextDue(t); !due.Equal(takeover.Add(testLease)) {
		t.Errorf("NextDue %v, want the end of n2's lease %v", due, takeover.Add(testLease))
	}
	if ok, err := s.ClaimJob(ctx, testJob, "n3", takeover.Add(testLease/2), testLease); err != nil || ok {
		t.Errorf("n3's claim under n2's lease: %v %v, want false", ok, err)
	}
}

// TestPeriodicRetry: a run that fails sets the job due RetryDelay after
// its start, frees the lease and wakes the scheduler for then.
func TestPeriodicRetry(t *testing.T) {
	s := testdb.SQLite(t)
	boom := errors.New("boom")
	r := newPeriodicRig(t, s, func(_ context.Context, _ time.Time, renew func() error) (int, error) {
		if err := renew(); err != nil {
			return 0, err
		}
		return 1, boom
	})
	if n := r.claim(t, "n1", t0); n != 1 {
		t.Fatalf("claim: %d, want 1", n)
	}
	r.p.Wait()
	o := <-r.outcomes
	if !errors.Is(o.Err, boom) || o.Result != 1 || !o.Next.Equal(t0.Add(testRetry)) {
		t.Errorf("outcome %+v, want boom, 1, next %v", o, t0.Add(testRetry))
	}
	if w := r.woken(); len(w) != 1 || !w[0].Equal(t0.Add(testRetry)) {
		t.Errorf("woken for %v, want [%v]", w, t0.Add(testRetry))
	}
	if due := r.nextDue(t); !due.Equal(t0.Add(testRetry)) {
		t.Errorf("NextDue %v, want %v", due, t0.Add(testRetry))
	}
	if ok, err := s.ClaimJob(t.Context(), testJob, "n2", t0.Add(testRetry), testLease); err != nil || !ok {
		t.Errorf("n2's claim at the retry: %v %v, want true", ok, err)
	}
}

// TestPeriodicClose: Close cancels the run in flight and returns once it
// has returned; the job is left to its lease (the finish fails, logged),
// and the closed Periodic claims nothing more.
func TestPeriodicClose(t *testing.T) {
	s := testdb.SQLite(t)
	started := make(chan struct{})
	var returned bool // written by the run, read after Close
	r := newPeriodicRig(t, s, func(ctx context.Context, _ time.Time, _ func() error) (int, error) {
		close(started)
		<-ctx.Done()
		returned = true
		return 0, ctx.Err()
	})
	if n := r.claim(t, "n1", t0); n != 1 {
		t.Fatalf("claim: %d, want 1", n)
	}
	<-started
	r.p.Close()
	if !returned {
		t.Fatal("Close returned before the run did")
	}
	if o := <-r.outcomes; !errors.Is(o.Err, context.Canceled) {
		t.Errorf("outcome %+v, want context.Canceled", o)
	}
	if logs := r.logs.String(); !strings.Contains(logs, `"msg":"test job: finish"`) {
		t.Errorf("no finish failure logged: %q", logs)
	}
	if due := r.nextDue(t); !due.Equal(t0.Add(testLease)) {
		t.Errorf("NextDue %v, want the lease's end %v", due, t0.Add(testLease))
	}
	if n := r.claim(t, "n1", t0.Add(testEvery)); n != 0 {
		t.Errorf("claim after Close: %d, want 0", n)
	}
}

func TestNewPeriodicChecksConfig(t *testing.T) {
	s := testdb.SQLite(t)
	run := func(context.Context, time.Time, func() error) (int, error) { return 0, nil }
	ok := schedule.PeriodicConfig[int]{Name: testJob, Store: s, Lease: testLease, Every: testEvery, RetryDelay: testRetry, Run: run}
	for name, edit := range map[string]func(*schedule.PeriodicConfig[int]){
		"no name":     func(c *schedule.PeriodicConfig[int]) { c.Name = "" },
		"no store":    func(c *schedule.PeriodicConfig[int]) { c.Store = nil },
		"no run":      func(c *schedule.PeriodicConfig[int]) { c.Run = nil },
		"no lease":    func(c *schedule.PeriodicConfig[int]) { c.Lease = 0 },
		"no interval": func(c *schedule.PeriodicConfig[int]) { c.Every = 0 },
		"no retry":    func(c *schedule.PeriodicConfig[int]) { c.RetryDelay = -time.Second },
	} {
		c := ok
		edit(&c)
		if _, err := schedule.NewPeriodic(c); err == nil {
			t.Errorf("NewPeriodic(%s) succeeded", name)
		}
	}
	p, err := schedule.NewPeriodic(ok)
	if err != nil {
		t.Fatal(err)
	}
	p.Close()
	if p.Name() != testJob {
		t.Errorf("Name() = %q", p.Name())
	}
}
