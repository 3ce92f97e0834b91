package retention

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/internal/pgtest"
	"github.com/linkforge/linkforge/internal/testdb"
	"github.com/linkforge/linkforge/schedule"
	"github.com/linkforge/linkforge/store/postgres"
)

func TestMain(m *testing.M) { pgtest.MainNoLeaks(m) }

// inBubble runs fn in a testing/synctest bubble once per backend, with a
// real store opened inside it: the schedulers' timers and the job's clock
// are the bubble's virtual clock (from 2000-01-01T00:00:00Z).
func inBubble(t *testing.T, fn func(t *testing.T, s linkforge.Store)) {
	t.Run("sqlite", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) { fn(t, testdb.SQLite(t)) })
	})
	t.Run("postgres", func(t *testing.T) {
		url := pgtest.New(t)
		db, err := postgres.Open(t.Context(), url)
		if err != nil {
			t.Fatal(err)
		}
		if err := db.Migrate(t.Context()); err != nil {
			t.Fatal(err)
		}
		db.Close()
		synctest.Test(t, func(t *testing.T) {
			db, err := postgres.Open(t.Context(), url)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { db.Close() })
			fn(t, db)
		})
	})
}

// logBuffer collects JSON log lines from several goroutines.
type logBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

// runs returns the "retention run" lines.
func (l *logBuffer) runs(t *testing.T) []map[string]any {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(l.b.String()), "\n") {
		var m map[string]any
		if line == "" {
			continue
		}
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("log line %q: %v", line, err)
		}
		if m["msg"] == "retention run" {
			out = append(out, m)
		}
	}
	return out
}

// TestDailyRetention: two nodes' schedulers share one store; each day one
// of them runs the job, which removes the minute rows past the bound and
// keeps the later ones, with every total unchanged; the run logs and
// counts what it removed.
func TestDailyRetention(t *testing.T) {
	inBubble(t, func(t *testing.T, s linkforge.Store) {
		ctx := t.Context()
		day0 := time.Now().UTC()
		ten, err := s.EnsureTenant(ctx, "acme")
		if err != nil {
			t.Fatal(err)
		}
		l, err := s.CreateLink(ctx, linkforge.Link{TenantID: ten.ID, Slug: "old", URL: "https://example.com/"})
		if err != nil {
			t.Fatal(err)
		}
		at := func(d time.Duration) time.Time { return day0.Add(d).Truncate(time.Minute) }
		const day = 24 * time.Hour
		// -40 d goes at the first run; -34.5 d (inside 35 days today) at
		// the second; -10 d and -1 h stay.
		seed := []time.Duration{-40 * day, -34*day - 12*time.Hour, -10 * day, -time.Hour}
		var rows []linkforge.RollupRow
		for i, d := range seed {
			rows = append(rows, linkforge.RollupRow{LinkID: l.ID, Bucket: at(d), Count: int64(10 + i)})
		}
		if err := s.UpsertRollup(ctx, "n1", rows); err != nil {
			t.Fatal(err)
		}
		totals := func() [3]int64 {
			st, err := s.Stats(ctx, linkforge.StatsQuery{TenantID: ten.ID, From: at(-60 * day), To: at(day), Interval: linkforge.Day})
			if err != nil {
				t.Fatal(err)
			}
			ct, err := s.ClickTotal(ctx, l.ID)
			if err != nil {
				t.Fatal(err)
			}
			got, err := s.TenantLink(ctx, ten.ID, linkforge.PublicDomainID, l.Slug)
			if err != nil {
				t.Fatal(err)
			}
			return [3]int64{st.Total, ct, got.Clicks}
		}
		want := totals()
		if want != [3]int64{46, 46, 46} {
			t.Fatalf("seeded totals %v, want 46 each", want)
		}
		minuteRows := func() int {
			r, _, err := s.NodeLinkClicks(ctx, "n1", l.ID, at(-60*day), at(day))
			if err != nil {
				t.Fatal(err)
			}
			return len(r)
		}

		var logs logBuffer
		var jobs []*Job
		for _, owner := range []string{"n1", "n2"} {
			j, err := New(Config{Store: s, Batch: 1, Logger: slog.New(slog.NewJSONHandler(&logs, nil))})
			if err != nil {
				t.Fatal(err)
			}
			jobs = append(jobs, j)
			sched, err := schedule.New(schedule.Config{Owner: owner, Work: []schedule.Work{j},
				PollInterval: time.Hour, Backoff: schedule.Backoff})
			if err != nil {
				t.Fatal(err)
			}
			if err := sched.Start(ctx); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() {
				sctx, cancel := context.WithTimeout(context.Background(), time.Minute)
				defer cancel()
				if err := sched.Stop(sctx); err != nil {
					t.Errorf("Stop: %v", err)
				}
				j.Wait()
			})
		}
		successes := func() float64 {
			var n float64
			for _, j := range jobs {
				n += testutil.ToFloat64(j.runs.WithLabelValues("success"))
			}
			return n
		}

		time.Sleep(time.Minute)
		synctest.Wait()
		if n := successes(); n != 1 {
			t.Fatalf("%v successful runs on the first day, want 1", n)
		}
		if n := minuteRows(); n != 3 {
			t.Errorf("%d minute rows after the first run, want 3", n)
		}
		if got := totals(); got != want {
			t.Errorf("totals after the first run %v, want %v", got, want)
		}
		// On PostgreSQL the run also made this month's partitions and the
		// next two.
		if pg, ok := s.(*postgres.DB); ok {
			parts, err := pg.Partitions(ctx, "click_rollup")
			if err != nil {
				t.Fatal(err)
			}
			for k := range postgres.PartitionsAhead + 1 {
				m := time.Date(day0.Year(), day0.Month()+time.Month(k), 1, 0, 0, 0, 0, time.UTC)
				if name := "click_rollup_" + m.Format("200601"); parts[name].IsZero() {
					t.Errorf("no partition %s after the run: %v", name, parts)
				}
			}
		}
		due, err := s.NextJobDue(ctx, JobName)
		if err != nil || due.Before(day0.Add(day)) || due.After(day0.Add(day+time.Minute)) {
			t.Errorf("next run due %v (%v), want a day after %v", due, err, day0)
		}

		time.Sleep(day)
		synctest.Wait()
		if n := successes(); n != 2 {
			t.Fatalf("%v successful runs after two days, want 2", n)
		}
		if n := minuteRows(); n != 2 {
			t.Errorf("%d minute rows after the second run, want 2", n)
		}
		if got := totals(); got != want {
			t.Errorf("totals after the second run %v, want %v", got, want)
		}
		runs := logs.runs(t)
		if len(runs) != 2 || runs[0]["removed_minutes"] != 1.0 || runs[1]["removed_minutes"] != 1.0 || runs[0]["result"] != "success" {
			t.Errorf("retention run log lines: %v, want two successes removing one minute row each", runs)
		}
		var removed float64
		for _, j := range jobs {
			removed += testutil.ToFloat64(j.removed.WithLabelValues(string(linkforge.PruneMinutes)))
		}
		if removed != 2 {
			t.Errorf("linkforge_retention_rows_removed_total{kind=minutes} = %v, want 2", removed)
		}
	})
}

// slowStore makes the first Prune of a run take longer than the job's
// lease, and counts the runs started.
type slowStore struct {
	linkforge.Store
	mu     sync.Mutex
	starts int
}

func (s *slowStore) Prune(ctx context.Context, p linkforge.Prune) (linkforge.PruneResult, error) {
	if p.Kind == linkforge.PruneMinutes && p.After == 0 {
		s.mu.Lock()
		s.starts++
		s.mu.Unlock()
		time.Sleep(3 * time.Minute)
	}
	return s.Store.Prune(ctx, p)
}

// TestLongRunStartsOnce: a run whose batch outlasts the lease is not
// started a second time on its own node when the scheduler wakes at the
// lease's end (its owner may renew the lease, so the store would let it).
func TestLongRunStartsOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := &slowStore{Store: testdb.SQLite(t)}
		j, err := New(Config{Store: s, Lease: time.Minute})
		if err != nil {
			t.Fatal(err)
		}
		sched, err := schedule.New(schedule.Config{Owner: "n1", Work: []schedule.Work{j}, Backoff: schedule.Backoff})
		if err != nil {
			t.Fatal(err)
		}
		if err := sched.Start(t.Context()); err != nil {
			t.Fatal(err)
		}
		time.Sleep(10 * time.Minute)
		synctest.Wait()
		if err := sched.Stop(t.Context()); err != nil {
			t.Fatal(err)
		}
		j.Close()
		if s.starts != 1 {
			t.Errorf("%d runs started in 10 minutes, want 1", s.starts)
		}
		if n := testutil.ToFloat64(j.runs.WithLabelValues("success")); n != 1 {
			t.Errorf("%v successful runs, want 1", n)
		}
	})
}
