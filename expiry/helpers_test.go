package expiry_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/expiry"
	"github.com/linkforge/linkforge/internal/pgtest"
	"github.com/linkforge/linkforge/internal/testdb"
	"github.com/linkforge/linkforge/schedule"
	"github.com/linkforge/linkforge/store/postgres"
)

func TestMain(m *testing.M) { pgtest.MainNoLeaks(m) }

// The tests run in testing/synctest bubbles: the schedulers' timers, the
// stores' clocks and the retry backoff all use the bubble's virtual clock,
// which starts at 2000-01-01T00:00:00Z and advances only when every
// goroutine of the bubble is blocked. Store calls take no virtual time, so
// "fired at due + 2 s" is exact. The stores are real: SQLite is in-process;
// PostgreSQL is reached over the network, which synctest treats as not
// durably blocking, so virtual time simply waits for each query.

// inBubble runs fn in a bubble once per backend, each with a fresh store
// opened inside the bubble.
func inBubble(t *testing.T, fn func(t *testing.T, s linkforge.Store)) {
	t.Helper()
	t.Run("sqlite", func(t *testing.T) {
		t.Parallel()
		synctest.Test(t, func(t *testing.T) { fn(t, testdb.SQLite(t)) })
	})
	t.Run("postgres", func(t *testing.T) {
		t.Parallel()
		url := migratedPostgres(t)
		synctest.Test(t, func(t *testing.T) { fn(t, openPostgres(t, url)) })
	})
}

// migratedPostgres returns the URL of a fresh, migrated database. It runs
// outside any bubble: the first call starts the shared throwaway server,
// whose process-watching goroutine must not belong to a bubble.
func migratedPostgres(t *testing.T) string {
	t.Helper()
	url := pgtest.New(t)
	db, err := postgres.Open(t.Context(), url)
	if err != nil {
		t.Fatalf("open postgres: %v", err)
	}
	defer db.Close()
	if err := db.Migrate(t.Context()); err != nil {
		t.Fatalf("migrate postgres: %v", err)
	}
	return url
}

// openPostgres opens a store on url, closed when t ends; inside a bubble,
// its pool belongs to the bubble.
func openPostgres(t *testing.T, url string) *postgres.DB {
	t.Helper()
	db, err := postgres.Open(t.Context(), url)
	if err != nil {
		t.Fatalf("open postgres: %v", err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// node is one node's scheduler with the expiry alarms as its one work:
// the fields of schedule.Config and expiry.Config the tests set.
type node struct {
	Store                           linkforge.AlarmStore
	Owner                           string
	OnExpired                       []expiry.Hook
	Logger                          *slog.Logger
	Registry                        prometheus.Registerer
	Lease, PollInterval, Resolution time.Duration
	BatchSize                       int
}

// mustStart returns a started scheduler, stopped when t ends (a no-op if
// the test stopped it). No jitter; unset Owner gets a test value.
func mustStart(t *testing.T, n node) *schedule.Scheduler {
	t.Helper()
	if n.Owner == "" {
		n.Owner = "node-test"
	}
	alarms, err := expiry.New(expiry.Config{Store: n.Store, OnExpired: n.OnExpired, Logger: n.Logger, Registry: n.Registry})
	if err != nil {
		t.Fatalf("expiry.New: %v", err)
	}
	s, err := schedule.New(schedule.Config{Owner: n.Owner, Work: []schedule.Work{alarms}, Logger: n.Logger,
		Registry: n.Registry, Lease: n.Lease, PollInterval: n.PollInterval, Resolution: n.Resolution,
		BatchSize: n.BatchSize, Backoff: schedule.Backoff})
	if err != nil {
		t.Fatalf("schedule.New: %v", err)
	}
	if err := s.Start(t.Context()); err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(func() { mustStop(t, s) })
	return s
}

func mustStop(t *testing.T, s *schedule.Scheduler) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := s.Stop(ctx); err != nil {
		t.Errorf("Stop: %v", err)
	}
}

func mustTenant(t *testing.T, s linkforge.Store, name string) linkforge.Tenant {
	t.Helper()
	tn, err := s.EnsureTenant(t.Context(), name)
	if err != nil {
		t.Fatalf("EnsureTenant(%q): %v", name, err)
	}
	return tn
}

// mustExpiringLink creates a link that expires at at.
func mustExpiringLink(t *testing.T, s linkforge.Store, tenantID int64, slug string, at time.Time) linkforge.Link {
	t.Helper()
	l, err := s.CreateLink(t.Context(), linkforge.Link{TenantID: tenantID, Slug: slug,
		URL: "https://example.com/" + slug, ExpiresAt: &at})
	if err != nil {
		t.Fatalf("CreateLink(%q): %v", slug, err)
	}
	return l
}

func mustLink(t *testing.T, s linkforge.Store, tenantID int64, slug string) linkforge.Link {
	t.Helper()
	l, err := s.TenantLink(t.Context(), tenantID, linkforge.PublicDomainID, slug)
	if err != nil {
		t.Fatalf("TenantLink(%q): %v", slug, err)
	}
	return l
}

func mustAlarms(t *testing.T, s linkforge.Store, tenantID int64, state linkforge.AlarmState) []linkforge.Alarm {
	t.Helper()
	as, err := s.ListAlarms(t.Context(), tenantID, state, 1000)
	if err != nil {
		t.Fatalf("ListAlarms(%q): %v", state, err)
	}
	return as
}

// mustOnlyAlarm returns the tenant's one alarm.
func mustOnlyAlarm(t *testing.T, s linkforge.Store, tenantID int64) linkforge.Alarm {
	t.Helper()
	as := mustAlarms(t, s, tenantID, "")
	if len(as) != 1 {
		t.Fatalf("tenant has %d alarms, want 1: %+v", len(as), as)
	}
	return as[0]
}

// call is one hook invocation.
type call struct {
	linkID int64
	at     time.Time
	info   expiry.Info
	failed bool
}

// recorder is a hook that records its calls and fails when fail says so.
type recorder struct {
	mu     sync.Mutex
	calls  []call
	byLink map[int64][]int                     // indexes into calls
	fail   func(l linkforge.Link, n int) error // n: earlier calls for l
}

func (r *recorder) hook(ctx context.Context, l linkforge.Link) error {
	info, ok := expiry.InfoFrom(ctx)
	if !ok {
		return errors.New("recorder: no expiry.Info in the hook's context")
	}
	if l.ExpiredAt == nil || l.ExpiresAt == nil || l.ExpiredAt.Before(*l.ExpiresAt) {
		return fmt.Errorf("recorder: hook called with link %d not marked expired (expires %v, expired %v)",
			l.ID, l.ExpiresAt, l.ExpiredAt)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	var err error
	if r.fail != nil {
		err = r.fail(l, len(r.byLink[l.ID]))
	}
	if r.byLink == nil {
		r.byLink = map[int64][]int{}
	}
	r.byLink[l.ID] = append(r.byLink[l.ID], len(r.calls))
	r.calls = append(r.calls, call{linkID: l.ID, at: time.Now(), info: info, failed: err != nil})
	return err
}

// callsOf returns the calls for link id.
func (r *recorder) callsOf(id int64) []call {
	r.mu.Lock()
	defer r.mu.Unlock()
	var cs []call
	for _, i := range r.byLink[id] {
		cs = append(cs, r.calls[i])
	}
	return cs
}

// successes counts the successful calls per link.
func (r *recorder) successes() map[int64]int {
	r.mu.Lock()
	defer r.mu.Unlock()
	m := map[int64]int{}
	for _, c := range r.calls {
		if !c.failed {
			m[c.linkID]++
		}
	}
	return m
}

func (r *recorder) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.calls)
}

// metricValue returns the value of the counter or gauge name whose labels
// include want, 0 if absent.
func metricValue(t *testing.T, reg *prometheus.Registry, name string, want map[string]string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatalf("gather metrics: %v", err)
	}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			if hasLabels(m, want) {
				switch {
				case m.Counter != nil:
					return m.Counter.GetValue()
				case m.Gauge != nil:
					return m.Gauge.GetValue()
				case m.Histogram != nil:
					return float64(m.Histogram.GetSampleCount())
				}
			}
		}
	}
	return 0
}

func hasLabels(m *dto.Metric, want map[string]string) bool {
	for k, v := range want {
		if !slices.ContainsFunc(m.GetLabel(), func(l *dto.LabelPair) bool { return l.GetName() == k && l.GetValue() == v }) {
			return false
		}
	}
	return true
}

// raceStore runs before once, just before the first ExpireLinks: a write
// that commits between a claim and the handler's re-read of the link.
type raceStore struct {
	linkforge.Store
	once   sync.Once
	before func()
}

func (r *raceStore) ExpireLinks(ctx context.Context, ids []int64, now time.Time) ([]linkforge.Link, error) {
	r.once.Do(r.before)
	return r.Store.ExpireLinks(ctx, ids, now)
}

// flakyStore fails the first n claims, as an unreachable database does.
type flakyStore struct {
	linkforge.Store
	mu sync.Mutex
	n  int
}

func (f *flakyStore) ClaimAlarms(ctx context.Context, owner string, now time.Time, lease time.Duration, limit int) ([]linkforge.Alarm, error) {
	f.mu.Lock()
	fail := f.n > 0
	f.n--
	f.mu.Unlock()
	if fail {
		return nil, errors.New("flaky: connection refused")
	}
	return f.Store.ClaimAlarms(ctx, owner, now, lease, limit)
}

// importer is the bulk loader both stores have.
type importer interface {
	ImportLinks(ctx context.Context, links []linkforge.Link) error
}
