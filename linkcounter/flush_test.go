package linkcounter

import (
	"context"
	"errors"
	"reflect"
	"testing"
	"testing/synctest"
	"time"

	"github.com/linkforge/linkforge/internal/testdb"
	"github.com/linkforge/linkforge/internal/testlog"
	"github.com/linkforge/linkforge/linkcounter/clicklog"
)

// Debounce: the alarm is armed by the first unflushed click and never pushed
// back, so 1,000 clicks over 10 s give exactly one flush, at first click +
// 30 s, holding all of them. The bubble's clock starts on a minute boundary
// (2000-01-01 00:00:00 UTC), so the clicks fall in one bucket that is
// exactly 30 s old when the alarm fires: the flush writes it (a flush skips
// only buckets younger than the interval).
func TestDebounce(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) {
		synctest.Test(t, func(t *testing.T) {
			st := b.open(t)
			l := mustLink(t, st, -1)
			rec := &recordingStore{Store: st}
			c := mustStart(t, Config{Store: rec, Journal: mustJournal(t, t.TempDir())}, nil)

			first := time.Now()
			for range 1000 {
				mustRecord(t, c, &l, time.Now())
				time.Sleep(10 * time.Millisecond)
			}
			due := first.Add(DefaultFlushInterval)
			time.Sleep(time.Until(due) - time.Nanosecond)
			synctest.Wait()
			if n := len(rec.snapshot()); n != 0 {
				t.Fatalf("%d flushes before first click + 30 s, want 0", n)
			}
			time.Sleep(time.Nanosecond)
			synctest.Wait()
			calls := rec.snapshot()
			if len(calls) != 1 {
				t.Fatalf("%d flushes at first click + 30 s, want 1", len(calls))
			}
			if !calls[0].at.Equal(due) {
				t.Errorf("flush at %v, want %v (first click + 30 s)", calls[0].at, due)
			}
			var sum int64
			for _, r := range calls[0].rows {
				sum += r.Count
			}
			if sum != 1000 {
				t.Errorf("flush wrote %d clicks, want 1000", sum)
			}

			// Nothing is left to flush: no alarm fires again, Stop writes nothing.
			time.Sleep(10 * time.Minute)
			synctest.Wait()
			mustStop(t, c)
			if n := len(rec.snapshot()); n != 1 {
				t.Errorf("%d flushes in all, want 1", n)
			}
			if got := mustStats(t, st, l).Total; got != 1000 {
				t.Errorf("rollup total = %d, want 1000", got)
			}
		})
	})
}

// Amplification: a link clicked continuously for 5 minutes, starting at an
// arbitrary phase of the minute, has each of its (link, minute) buckets
// written at most twice, and each complete bucket exactly twice: a flush
// writes only buckets open for at least the flush interval, so the alarms
// settle on :00 and :30. The last write of every bucket before Stop holds
// its final count, and the rollup equals the clicks.
func TestFlushAlignsToMinutes(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) {
		synctest.Test(t, func(t *testing.T) {
			st := b.open(t)
			l := mustLink(t, st, -1)
			rec := &recordingStore{Store: st}
			c := mustStart(t, Config{Store: rec, Journal: mustJournal(t, t.TempDir(), clicklog.WithSync(clicklog.SyncWriteOnly))}, nil)

			time.Sleep(17 * time.Second) // start off the minute grid
			begin := time.Now()
			end := begin.Add(5 * time.Minute)
			perBucket := make(map[time.Time]int64) // keys in UTC, as the rollup's

			var clicks int64
			for time.Now().Before(end) {
				mustRecord(t, c, &l, time.Now())
				perBucket[time.Now().UTC().Truncate(time.Minute)]++
				clicks++
				time.Sleep(250 * time.Millisecond)
			}
			mustStop(t, c)

			writes := make(map[time.Time]int)
			last := make(map[time.Time]int64)
			for _, call := range rec.snapshot() {
				for _, r := range call.rows {
					writes[r.Bucket]++
					last[r.Bucket] = r.Count
				}
				// After the first two flushes the alarms are aligned: a
				// flush falls on :30 (a deferred bucket's due time) or
				// within one click gap after :00 (first click after :30 +
				// the interval).
				if call.at.Before(end) && call.at.Sub(begin) > 61*time.Second &&
					call.at.Sub(call.at.Truncate(30*time.Second)) >= time.Second {
					t.Errorf("flush at %s, want it on :00 or :30 of the minute", call.at.Format("15:04:05.000"))
				}
			}
			if len(writes) != len(perBucket) {
				t.Errorf("%d buckets written, want %d", len(writes), len(perBucket))
			}
			for bucket, n := range perBucket {
				complete := !bucket.Before(begin) && !bucket.Add(time.Minute).After(end)
				switch w := writes[bucket]; {
				case w > 2:
					t.Errorf("bucket %v written %d times, want at most 2", bucket.Format("15:04"), w)
				case complete && w != 2:
					t.Errorf("complete bucket %v written %d times, want 2 (half-way and closed)", bucket.Format("15:04"), w)
				}
				if last[bucket] != n {
					t.Errorf("bucket %v: last write %d, want %d clicks", bucket.Format("15:04"), last[bucket], n)
				}
			}
			if got := mustStats(t, st, l).Total; got != clicks {
				t.Errorf("rollup total = %d, want %d clicks", got, clicks)
			}
		})
	})
}

// The retry schedule of a failing flush: attempts 2, 4, 8, 16, 32 and 64 s
// apart, then every 64 s (the capped interval) until the store answers;
// every failure is logged with retryCount and lastAttempt, and nothing is
// dropped.
func TestRetrySchedule(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) {
		synctest.Test(t, func(t *testing.T) {
			st := b.open(t)
			l := mustLink(t, st, -1)
			const failures = 9 // retryCount 0..8: past the end of the schedule
			rec := &recordingStore{Store: st, fail: func(i int) (error, error) {
				if i < failures {
					return errors.New("connection refused"), nil
				}
				return nil, nil
			}}
			var logs testlog.Buffer
			c := mustStart(t, Config{Store: rec, Journal: mustJournal(t, t.TempDir()), Logger: logs.Logger()}, nil)
			clickAt := time.Now()
			for range 3 {
				mustRecord(t, c, &l, time.Now())
			}

			time.Sleep(DefaultFlushInterval + 10*time.Minute)
			synctest.Wait()
			calls := rec.snapshot()
			if len(calls) != failures+1 {
				t.Fatalf("%d attempts, want %d", len(calls), failures+1)
			}
			wantGaps := []time.Duration{2, 4, 8, 16, 32, 64, 64, 64, 64}
			if got := calls[0].at.Sub(clickAt); got != DefaultFlushInterval {
				t.Errorf("first attempt %v after the click, want %v", got, DefaultFlushInterval)
			}
			for i, want := range wantGaps {
				if got := calls[i+1].at.Sub(calls[i].at); got != want*time.Second {
					t.Errorf("attempt %d: %v after the previous one, want %v", i+1, got, want*time.Second)
				}
			}
			if got := calls[failures].rows; len(got) != 1 || got[0].Count != 3 {
				t.Errorf("successful flush wrote %+v, want one row of 3 clicks", got)
			}

			recs := logs.Records(t, "alarm_failed")
			if len(recs) != failures {
				t.Fatalf("%d alarm_failed records, want %d", len(recs), failures)
			}
			for k, r := range recs {
				if r["alarm"] != "click_flush" || r["retryCount"] != float64(k) ||
					r["lastAttempt"] != (k >= MaxRetries) || r["link_count"] != float64(1) ||
					r["error"] == nil {
					t.Errorf("alarm_failed record %d = %v, want retryCount %d lastAttempt %v link_count 1",
						k, r, k, k >= MaxRetries)
				}
			}
			mustStop(t, c)
			if got := mustStats(t, st, l).Total; got != 3 {
				t.Errorf("rollup total = %d, want 3", got)
			}
		})
	})
}

// backoff's values, also for a shortened base.
func TestBackoff(t *testing.T) {
	tests := []struct {
		name string
		base time.Duration
		want []time.Duration // for retry counts 0, 1, ...
	}{
		{"default", 2 * time.Second, []time.Duration{2, 4, 8, 16, 32, 64, 64, 64}},
		{"shortened", 10 * time.Millisecond, []time.Duration{10, 20, 40, 80, 160, 320, 320}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := &Counter{retryBase: tt.base}
			unit := time.Second
			if tt.base < time.Second {
				unit = time.Millisecond
			}
			for k, want := range tt.want {
				if got := c.backoff(k); got != want*unit {
					t.Errorf("backoff(%d) = %v, want %v", k, got, want*unit)
				}
			}
		})
	}
}

// Idempotency: a flush whose rollup write commits but reports an error is
// retried, and the retry leaves the same rows (absolute counts, not
// increments), clicks that arrived in between included; replaying the last
// flush five times changes nothing, in the rollup or in the journal.
func TestFlushIdempotent(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) {
		synctest.Test(t, func(t *testing.T) {
			st := b.open(t)
			l := mustLink(t, st, -1)
			rec := &recordingStore{Store: st, fail: func(i int) (error, error) {
				if i == 0 {
					return nil, errors.New("connection reset after commit")
				}
				return nil, nil
			}}
			j := mustJournal(t, t.TempDir())
			c := mustStart(t, Config{Store: rec, Journal: j}, nil)
			for range 10 {
				mustRecord(t, c, &l, time.Now())
			}
			time.Sleep(DefaultFlushInterval)
			synctest.Wait()
			if got := mustStats(t, st, l).Total; got != 10 {
				t.Fatalf("after the failed-after-commit flush: rollup total = %d, want 10", got)
			}
			for range 5 {
				mustRecord(t, c, &l, time.Now())
			}
			time.Sleep(2 * time.Second) // the retry
			synctest.Wait()
			calls := rec.snapshot()
			if len(calls) != 2 || calls[1].err != nil {
				t.Fatalf("calls = %+v, want a failure then a success", calls)
			}
			if got := mustStats(t, st, l).Total; got != 15 {
				t.Fatalf("after the retry: rollup total = %d, want 15", got)
			}
			if c.pending.Load() != 0 {
				t.Errorf("pending = %d after the retry, want 0", c.pending.Load())
			}

			before := mustStats(t, st, l)
			jBefore := journalRows(t, j, l.ID)
			last := calls[1]
			for range 5 {
				if err := st.UpsertRollup(context.Background(), last.node, last.rows); err != nil {
					t.Fatalf("replay: %v", err)
				}
				marks := make([]clicklog.Row, len(jBefore))
				copy(marks, jBefore)
				b, err := c.commits.submit(marks, nil, 0, nil)
				if err != nil {
					t.Fatalf("replay marks: %v", err)
				}
				<-b.done
				if b.err != nil {
					t.Fatalf("replay marks: %v", b.err)
				}
			}
			if after := mustStats(t, st, l); !reflect.DeepEqual(after, before) {
				t.Errorf("replaying the flush changed the rollup: %+v, want %+v", after, before)
			}
			if after := journalRows(t, j, l.ID); !reflect.DeepEqual(after, jBefore) {
				t.Errorf("replaying the marks changed the journal: %+v, want %+v", after, jBefore)
			}
			mustStop(t, c)
			if n := len(rec.snapshot()); n != 2 {
				t.Errorf("%d rollup writes, want 2", n)
			}
		})
	})
}

// Start-up reconciliation flushes every unflushed row at once, a bucket
// younger than the flush interval included: the age rule applies to the
// scheduled flushes of a running counter, not to clicks left by a crash.
func TestReconcileFlushesYoungBuckets(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st := asTestStore(t, testdb.SQLite(t))
		l := mustLink(t, st, -1)
		dir := t.TempDir()
		j := mustJournal(t, dir)
		c := mustStart(t, Config{Store: st, Journal: j}, nil)
		time.Sleep(10 * time.Second) // clicks 10 s into the minute
		for range 7 {
			mustRecord(t, c, &l, time.Now())
		}
		if err := c.shutdown(context.Background(), false); err != nil {
			t.Fatalf("halt: %v", err)
		}
		if err := j.Close(); err != nil {
			t.Fatalf("close journal: %v", err)
		}
		time.Sleep(time.Second) // back 11 s into the minute: a bucket 11 s old
		rec := &recordingStore{Store: st}
		restart := time.Now()
		c2 := mustStart(t, Config{Store: rec, Journal: mustJournal(t, dir)}, nil)
		synctest.Wait()
		calls := rec.snapshot()
		if len(calls) != 1 || !calls[0].at.Equal(restart) {
			t.Fatalf("reconciliation flushes %+v, want one at the restart (%v)", calls, restart)
		}
		if got := calls[0].rows; len(got) != 1 || got[0].Count != 7 {
			t.Errorf("reconciliation wrote %+v, want one row of 7 clicks", got)
		}
		mustStop(t, c2)
		if got := mustClickTotal(t, st, l.ID); got != 7 {
			t.Errorf("rollup total = %d, want 7", got)
		}
	})
}
