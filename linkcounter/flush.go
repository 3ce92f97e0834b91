package linkcounter

import (
	"container/heap"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"sort"
	"sync"
	"time"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/linkcounter/clicklog"
)

// scheduler keeps every armed flush alarm in one heap, so one timer (in
// runScheduler) points at the earliest; there is no timer per link. An entry
// is checked against its actor's alarm when it falls due: an alarm moved
// earlier leaves a stale entry behind, which is then skipped.
type scheduler struct {
	mu sync.Mutex
	h  alarmHeap
	// base is when the counter was made (New): entries and actors hold
	// their due time as an offset from it, 8 bytes where a time.Time
	// takes 24 (a viral burst arms an alarm per link), and still on the
	// monotonic clock. Never changed, so read without mu.
	base time.Time
	wake chan struct{} // capacity 1: an earlier alarm was armed
}

type alarmEntry struct {
	due time.Duration // since scheduler.base
	a   *actor
}

type alarmHeap []alarmEntry

func (h alarmHeap) Len() int           { return len(h) }
func (h alarmHeap) Less(i, j int) bool { return h[i].due < h[j].due }
func (h alarmHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *alarmHeap) Push(x any)        { *h = append(*h, x.(alarmEntry)) }
func (h *alarmHeap) Pop() any {
	old := *h
	e := old[len(old)-1]
	old[len(old)-1] = alarmEntry{}
	*h = old[:len(old)-1]
	return e
}

// offset returns t as an offset from the scheduler's base.
func (s *scheduler) offset(t time.Time) time.Duration { return t.Sub(s.base) }

// at returns the time of offset d.
func (s *scheduler) at(d time.Duration) time.Time { return s.base.Add(d) }

// push arms a's alarm at d (an offset).
func (s *scheduler) push(a *actor, d time.Duration) {
	s.mu.Lock()
	earliest := len(s.h) == 0 || d < s.h[0].due
	heap.Push(&s.h, alarmEntry{due: d, a: a})
	s.mu.Unlock()
	if earliest {
		select {
		case s.wake <- struct{}{}:
		default:
		}
	}
}

// next returns the earliest armed time.
func (s *scheduler) next() (time.Time, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.h) == 0 {
		return time.Time{}, false
	}
	return s.base.Add(s.h[0].due), true
}

// popDue removes and returns up to max entries due at now.
func (s *scheduler) popDue(now time.Time, max int) []alarmEntry {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []alarmEntry
	for len(s.h) > 0 && len(out) < max && s.h[0].due <= now.Sub(s.base) {
		out = append(out, heap.Pop(&s.h).(alarmEntry))
	}
	if len(s.h) == 0 && cap(s.h) > 1024 {
		s.h = nil // a burst of links should not pin its high-water mark
	}
	return out
}

// backoff is the delay after a failed attempt with retry count k: 2, 4, 8,
// 16, 32, 64 s, then 64 s for ever (with the default base).
func (c *Counter) backoff(k int) time.Duration {
	return c.retryBase << min(k, MaxRetries-1)
}

// runScheduler is the counter's one timer loop: flushes as alarms fall due,
// and housekeeping.
func (c *Counter) runScheduler() {
	defer c.loops.Done()
	flushTimer := c.clock.NewTimer(time.Hour)
	flushTimer.Stop()
	defer flushTimer.Stop()
	houseTimer := c.clock.NewTimer(c.housekeepEvery)
	defer houseTimer.Stop()
	for {
		select {
		case <-c.stop:
			return
		default:
		}
		now := c.clock.Now()
		next, armed := c.sched.next()
		if armed && !next.After(now) {
			c.flushDue(now)
			continue
		}
		if armed {
			flushTimer.Reset(next.Sub(now))
		} else {
			flushTimer.Stop()
		}
		select {
		case <-c.stop:
			return
		case <-c.sched.wake:
		case <-flushTimer.C():
		case <-houseTimer.C():
			c.housekeep(c.clock.Now())
			houseTimer.Reset(c.housekeepEvery)
		}
	}
}

// flushDue flushes the actors whose alarm is due at now, at most flushBatch
// of them in one round trip; the loop calls it again for the rest.
func (c *Counter) flushDue(now time.Time) {
	var batch []*actor
	var retries []int
	var whole []bool
	due := c.sched.offset(now)
	for _, e := range c.sched.popDue(now, c.flushBatch) {
		a := e.a
		a.mu.Lock()
		if a.armed && a.alarm <= due && !a.flushing {
			// The alarm fires and is cleared: a click arriving during the
			// flush arms the next one at its own time + the interval.
			a.armed = false
			a.flushing = true
			batch = append(batch, a)
			retries = append(retries, int(a.retry))
			// A retry writes every row, young ones too: the back-off
			// schedule is kept (a young hour would put the attempt off to
			// when it is due), and the retry writes all the failed
			// attempt wrote, whose outcome is unknown.
			whole = append(whole, a.reconcile || a.retry > 0)
		}
		a.mu.Unlock()
	}
	if len(batch) > 0 {
		c.flushActors(batch, retries, whole, now) //nolint:errcheck // a failed flush has re-armed every actor on the back-off schedule; the loop goes on
	}
}

// flushActors runs one flush attempt for batch (whose alarms have fired;
// retries[i] is batch[i]'s retry count): read the links' unflushed rows from
// the journal (committed state), write the due ones to the rollup in one
// UpsertRollup, then mark exactly those values flushed in one journal
// commit. A row is due when its bucket has been open for at least the flush
// interval, or when whole[i] (Stop, start-up reconciliation) says to flush
// all of batch[i]'s rows; the others stay unflushed and their link's alarm
// is re-armed for when they fall due (see writeRollup). On failure every
// actor is re-armed on the back-off schedule.
func (c *Counter) flushActors(batch []*actor, retries []int, whole []bool, firedAt time.Time) error {
	for _, a := range batch {
		a.io.Lock()
	}
	defer func() {
		for _, a := range batch {
			a.io.Unlock()
		}
	}()

	start := c.clock.Now()
	rows, deferred, err := c.writeRollup(batch, whole)
	c.m.flushDuration.Observe(c.clock.Now().Sub(start).Seconds())

	// What each link's rows add to its flushed count.
	delta := make(map[int64]int64, len(batch))
	if err == nil {
		for _, r := range rows {
			delta[r.LinkID] += r.N - r.Flushed
		}
	}
	now := c.clock.Now()
	var failedBy map[int]int // retry count -> links
	for i, a := range batch {
		a.mu.Lock()
		a.flushing = false
		if err == nil {
			d := delta[a.id]
			a.unflushed -= d
			if a.totalKnown {
				a.base += d
			}
			if _, wrote := delta[a.id]; wrote {
				a.retry, a.ambiguous, a.reconcile = 0, false, false
			}
			// else: none of its hours was due, the store was not asked:
			// a failed flush before stays as ambiguous as it was, and the
			// deferred hour's attempt keeps its place in the schedule.
			c.pending.Add(-d)
			pruneSketches(a, now)
			if a.unflushed == 0 {
				// Every visit is in the stored sketches: a later one seeds
				// its day's sketch from the store again (one read per
				// flush batch), and a burst's one-off links keep none
				// until their eviction (docs/performance.md).
				a.uniq = nil
			}
			young, isYoung := deferred[a.id]
			switch {
			case a.unflushed == 0:
				a.dirtySince = 0
			case isYoung:
				// Rows of a bucket younger than the flush interval wait
				// until it is that old: at most first unflushed click +
				// the interval, since no click of a bucket precedes its
				// start. armLocked only moves an alarm that clicks during
				// the flush armed earlier, never later.
				a.dirtySince = stampOf(young)
				if at := c.sched.at(a.alarm); a.armed && at.Add(-c.flushInterval).Before(young) {
					a.dirtySince = stampOf(at.Add(-c.flushInterval))
				}
				c.armLocked(a, young.Add(c.flushInterval))
			case a.armed:
				// Clicks during the flush armed the next alarm.
				a.dirtySince = stampOf(c.sched.at(a.alarm).Add(-c.flushInterval))
			default:
				// Clicks whose commit was under way when the alarm fired
				// did not arm one (it was armed then).
				a.dirtySince = stampOf(firedAt)
				c.armLocked(a, firedAt.Add(c.flushInterval))
			}
		} else {
			k := retries[i]
			a.retry, a.ambiguous = int32(min(k+1, math.MaxInt32)), true //nolint:gosec // G115: bounded by the min
			c.armLocked(a, now.Add(c.backoff(k)))
			if failedBy == nil {
				failedBy = make(map[int]int)
			}
			failedBy[k]++
		}
		a.mu.Unlock()
	}
	if err != nil {
		c.m.flushFailures.Inc()
		c.logFailure(failedBy, err)
		return err
	}
	c.refreshTotals(batch)
	return nil
}

// refreshTotals re-reads the rollup total of the batch's links that have a
// click limit, so that what other nodes flushed counts against it; a.io is
// held, so the total and the unflushed count do not overlap. A failed read
// keeps the total as it was: exact for this node's clicks, stale for the
// others'.
func (c *Counter) refreshTotals(batch []*actor) {
	for _, a := range batch {
		a.mu.Lock()
		refresh := a.limited && a.totalKnown
		a.mu.Unlock()
		if !refresh {
			continue
		}
		ctx, cancel := context.WithTimeout(c.bg, c.loadTimeout)
		total, err := c.store.ClickTotal(ctx, a.id)
		cancel()
		if err != nil {
			continue
		}
		a.mu.Lock()
		a.base = total
		a.mu.Unlock()
	}
}

// writeRollup sends the batch's due unflushed journal rows to the store,
// with their hours' counts by dimension, and marks them flushed. It returns
// the minute rows it flushed and, per link with rows left for later, the
// time its alarm is re-armed at minus the flush interval.
//
// Rows go by (link, hour): the hour's dimension rows hold the clicks of all
// its minute rows, so an hour is written whole or not at all, and within one
// transaction (UpsertClicks); that keeps every committed state of the store
// with each hour's values summing to its minutes (docs/adr/009).
//
// An hour is due once its newest unflushed minute has been open for the
// flush interval (bucket start + interval <= now), or when whole says so.
// With the 30 s default a continuously clicked link's alarms settle on the
// :30 of each minute, and each bucket is written twice: once half-way, once
// closed, and each (hour, dimension, value) at most once a minute. Writing
// a young bucket at an arbitrary phase would make its minute three writes
// (docs/adr/014-click-log.md, "Flush"). No newer minute can start before an
// hour's newest is due while the interval is at most a minute; with a longer
// interval an hour is due once its oldest minute is, which never makes more
// than two writes of a minute either, as flushes are then more than a minute
// apart.
func (c *Counter) writeRollup(batch []*actor, whole []bool) ([]clicklog.Row, map[int64]time.Time, error) {
	ctx, cancel := context.WithTimeout(c.bg, c.flushTimeout)
	defer cancel()
	ids := make([]int64, len(batch))
	all := make(map[int64]bool)
	for i, a := range batch {
		ids[i] = a.id
		if whole[i] {
			all[a.id] = true
		}
	}
	if c.seedPending.Load() {
		if err := c.seedFromRollup(ctx); err != nil {
			return nil, nil, err
		}
	}
	if err := c.seedHours(ctx, ids); err != nil {
		return nil, nil, err
	}
	// Rows of buckets starting after cutoff are younger than the interval.
	// A bucket starting after now exists only when the clock was set back
	// (bucketOf); waiting for it to age would wait for the clock to catch
	// up, so it is written at once.
	now := c.clock.Now()
	cutoff, future := now.Add(-c.flushInterval).Unix(), now.Unix()
	read, readDims, err := c.journal.Unflushed(ctx, ids)
	if err != nil {
		return nil, nil, err
	}
	rows, dims, deferred := c.dueRows(read, readDims, cutoff, future, all)
	if len(rows) == 0 {
		return nil, deferred, nil
	}
	out := make([]linkforge.RollupRow, len(rows))
	for i, r := range rows {
		out[i] = linkforge.RollupRow{LinkID: r.LinkID, Bucket: time.Unix(r.Bucket, 0).UTC(), Count: r.N,
			Automated: min(r.N, r.Automated)}
	}
	// Each journal cell is its stored row: (dimension, traffic, value).
	outDims := make([]linkforge.DimRow, len(dims))
	for i, d := range dims {
		outDims[i] = linkforge.DimRow{LinkID: d.LinkID, Hour: time.Unix(d.Hour, 0).UTC(), Dim: d.Dim, Automated: d.Automated, Value: d.Value, Count: d.N}
	}
	// After the rows are read: every visit of a click read is in the
	// journal's visits by now.
	sketches, visitMarks, err := c.flushUniques(ctx, batch, ids)
	if err != nil {
		return nil, nil, err
	}
	if err := c.store.UpsertClicks(ctx, c.nodeID, out, outDims); err != nil {
		return nil, nil, fmt.Errorf("flush %d rollup rows and %d dimension rows: %w", len(out), len(outDims), err)
	}
	if err := c.writeSketches(ctx, sketches); err != nil {
		return nil, nil, err
	}
	c.m.rowsWritten.Add(float64(len(out)))
	c.m.dimsWritten.Add(float64(len(outDims)))
	// Mark the values that were written, not the current n, which may have
	// grown since the read.
	b, err := c.commits.submitVisits(rows, dims, visitMarks, 0, nil)
	if err != nil {
		return nil, nil, fmt.Errorf("mark %d rows flushed: %w", len(rows), err)
	}
	<-b.done // local and bounded; the committer runs until after the last flush
	if b.err != nil {
		return nil, nil, fmt.Errorf("mark %d rows flushed: %w", len(rows), b.err)
	}
	return rows, deferred, nil
}

// dueRows splits what the journal holds unflushed of a batch into the rows
// and dimension rows that are due now (an hour is written whole or not at
// all: see writeRollup) and, per link whose hour must wait, the bucket it
// waits for. cutoff and future bound the buckets old enough to write; all
// names the links to write whole whatever their age.
func (c *Counter) dueRows(read []clicklog.Row, readDims []clicklog.DimRow, cutoff, future int64, all map[int64]bool) ([]clicklog.Row, []clicklog.DimRow, map[int64]time.Time) {
	type hourKey struct{ linkID, hour int64 }
	type hourState struct {
		young, old bool  // holds rows not due / due
		since      int64 // the bucket it waits for: newest young, or oldest
	}
	hours := make(map[hourKey]*hourState)
	for _, r := range read {
		k := hourKey{r.LinkID, r.Bucket - r.Bucket%3600}
		h := hours[k]
		if h == nil {
			h = &hourState{}
			hours[k] = h
		}
		if r.Bucket <= cutoff || r.Bucket > future || all[r.LinkID] {
			h.old = true
			continue
		}
		if c.flushInterval <= time.Minute {
			if !h.young || r.Bucket > h.since {
				h.since = r.Bucket // rows are read by bucket: the newest
			}
		} else if !h.young {
			h.since = r.Bucket // the oldest young row
		}
		h.young = true
	}
	due := func(k hourKey) bool {
		h := hours[k]
		if c.flushInterval <= time.Minute {
			return !h.young
		}
		return h.old || !h.young
	}
	var deferred map[int64]time.Time
	rows := read[:0]
	for _, r := range read {
		k := hourKey{r.LinkID, r.Bucket - r.Bucket%3600}
		if due(k) {
			rows = append(rows, r)
			continue
		}
		start := time.Unix(hours[k].since, 0).UTC()
		if deferred == nil {
			deferred = make(map[int64]time.Time)
		}
		if t, ok := deferred[r.LinkID]; !ok || start.Before(t) {
			deferred[r.LinkID] = start
		}
	}
	var dims []clicklog.DimRow
	for _, d := range readDims {
		if k := (hourKey{d.LinkID, d.Hour}); hours[k] != nil && due(k) {
			dims = append(dims, d)
		}
	}
	return rows, dims, deferred
}

// seedFromRollup adds to a journal that starts a fresh count for this node
// id what the rollup already holds of that id, before anything of the
// fresh count is flushed (it runs at the start of a flush). Without it the
// fresh count would restart each (link, bucket) from 0 below the rollup's
// count: the monotonic upsert keeps the larger old value, and the new clicks
// vanish under it until the fresh count passes it.
//
// It reads the rows of every bucket a click can still land in (from
// clockHigh - maxClickAge on, future buckets included, since an earlier run
// of this id may have had a clock ahead of this one), and every bucket the
// journal already counted in. A failure fails the flush, which is retried
// like any other: the seed mark stays in the journal, and the journal keeps
// counting meanwhile.
func (c *Counter) seedFromRollup(ctx context.Context) error {
	from := c.observeClock(c.clock.Now()).Add(-c.maxClickAge).Truncate(time.Minute)
	oldest, ok, err := c.journal.MinBucket(ctx)
	if err != nil {
		return fmt.Errorf("seed journal: %w", err)
	}
	if ok && oldest < from.Unix() {
		from = time.Unix(oldest, 0).UTC()
	}
	rows, err := c.store.NodeRollup(ctx, c.nodeID, from)
	if err != nil {
		return fmt.Errorf("seed journal: read the rollup of node %q: %w", c.nodeID, err)
	}
	// The hours by dimension of the same minutes: whole hours, since a
	// click_dims row is one, from the hour of the first seeded minute.
	dims, err := c.store.NodeDims(ctx, c.nodeID, from.Truncate(time.Hour))
	if err != nil {
		return fmt.Errorf("seed journal: read the dimensions of node %q: %w", c.nodeID, err)
	}
	if err := c.journal.Seed(ctx, rows, dims); err != nil {
		return fmt.Errorf("seed journal: %w", err)
	}
	c.seedPending.Store(false)
	var clicks int64
	for _, r := range rows {
		clicks += r.Count
	}
	c.log.Info("click journal seeded from the rollup", slog.String("event", "journal_seeded"),
		slog.String("node_id", c.nodeID), slog.Int("rows", len(rows)), slog.Int64("clicks", clicks))
	return nil
}

// seedHours seeds the hours of the given links whose rows restarted after
// their actor's eviction dropped them from memory: it reads this node's
// rollup rows of those (link, hour)s, minutes and dimensions, and adds them
// to the restarted rows (clicklog.Journal.SeedHours) before the flush reads them, so
// the absolute counts it writes include what the rollup holds. It runs in
// the flush, never in a click: no click waits for the store. A failure
// fails the flush, which is retried like any other; the seed marks stay in
// the journal meanwhile (docs/adr/014-click-log.md, "Memory").
func (c *Counter) seedHours(ctx context.Context, ids []int64) error {
	keys := c.journal.ToSeed(ids)
	if len(keys) == 0 {
		return nil
	}
	var rows []linkforge.RollupRow
	var dims []linkforge.DimRow
	done, links := 0, 0
	// One record per seedChunk links: a batch of many restarted links
	// that outlasts the flush's timeout keeps the seeds it finished, so
	// the retry does less, never the same again.
	commit := func(end int) error {
		if err := c.journal.SeedHours(ctx, keys[done:end], rows, dims); err != nil {
			return fmt.Errorf("seed %d link hours: %w", end-done, err)
		}
		c.m.hoursSeeded.Add(float64(end - done))
		rows, dims, done, links = rows[:0], dims[:0], end, 0
		return nil
	}
	for i := 0; i < len(keys); {
		j := i
		for j < len(keys) && keys[j].LinkID == keys[i].LinkID {
			j++
		}
		from, to := time.Unix(keys[i].Hour, 0).UTC(), time.Unix(keys[j-1].Hour+3600, 0).UTC()
		r, d, err := c.store.NodeLinkClicks(ctx, c.nodeID, keys[i].LinkID, from, to)
		if err != nil {
			return fmt.Errorf("seed link %d from the rollup of node %q: %w", keys[i].LinkID, c.nodeID, err)
		}
		rows, dims = append(rows, r...), append(dims, d...)
		i = j
		if links++; links == seedChunk {
			if err := commit(i); err != nil {
				return err
			}
		}
	}
	if done < len(keys) {
		return commit(len(keys))
	}
	return nil
}

// seedChunk is how many links' seeds go in one journal record.
const seedChunk = 64

// logFailure logs one alarm_failed record per retry count in the failed
// batch, with the keys retryCount and lastAttempt: retryCount counts from 0
// (the first run), and lastAttempt marks the end of the exponential schedule,
// the signal to alert on. Nothing is dropped at that point: the rows stay in
// the journal and the flush goes on at the capped interval.
func (c *Counter) logFailure(failedBy map[int]int, err error) {
	ks := make([]int, 0, len(failedBy))
	for k := range failedBy {
		ks = append(ks, k)
	}
	sort.Ints(ks)
	for _, k := range ks {
		last := k >= MaxRetries
		level := slog.LevelWarn
		if last {
			level = slog.LevelError
		}
		c.log.LogAttrs(context.Background(), level, "click flush failed",
			slog.String("event", "alarm_failed"),
			slog.String("alarm", "click_flush"),
			slog.Int("link_count", failedBy[k]),
			slog.Int("retryCount", k),
			slog.Bool("lastAttempt", last),
			slog.Duration("next_attempt_in", c.backoff(k)),
			slog.String("error", err.Error()))
	}
}

// flushAll is Stop's flush: every actor with unflushed clicks, armed or not
// due yet, in batches; a failure is retried on the back-off schedule while
// ctx allows, at most MaxRetries times.
func (c *Counter) flushAll(ctx context.Context) error {
	// Clicks reserved before Stop may still be in a commit: let them land,
	// so that the journal reads below see them.
	if b, err := c.commits.barrier(); err == nil {
		<-b.done
	}
	for attempt := 0; ; attempt++ {
		failed := false
		seen := make(map[*actor]bool)
		for {
			batch, retries := c.collectUnflushed(seen)
			if len(batch) == 0 {
				break
			}
			whole := make([]bool, len(batch))
			for i := range whole {
				whole[i] = true // Stop writes every row, however young
			}
			if err := c.flushActors(batch, retries, whole, c.clock.Now()); err != nil {
				failed = true
				break
			}
		}
		if !failed && c.pending.Load() == 0 {
			return nil
		}
		if attempt == MaxRetries {
			break
		}
		t := c.clock.NewTimer(c.backoff(attempt))
		select {
		case <-t.C():
		case <-ctx.Done():
			t.Stop()
			return c.leftUnflushed(ctx.Err())
		}
	}
	return c.leftUnflushed(errors.New("retries exhausted"))
}

func (c *Counter) leftUnflushed(cause error) error {
	n := c.pending.Load()
	c.log.Error("stop: clicks left unflushed in the journal; the next start flushes them",
		slog.String("event", "flush_incomplete"), slog.Int64("clicks", n), slog.String("error", cause.Error()))
	return fmt.Errorf("linkcounter: stop: %d clicks left unflushed in the journal: %w", n, cause)
}

// collectUnflushed takes up to flushBatch actors holding unflushed clicks,
// due or not and not in seen, fires their alarms and adds them to seen, so
// that one attempt of flushAll takes each actor once.
func (c *Counter) collectUnflushed(seen map[*actor]bool) ([]*actor, []int) {
	var batch []*actor
	var retries []int
	c.actors.rangeActors(func(_ int64, a *actor) bool {
		if seen[a] {
			return true
		}
		a.mu.Lock()
		if !a.flushing && (a.unflushed > 0 || a.armed) {
			a.armed = false
			a.flushing = true
			batch = append(batch, a)
			retries = append(retries, int(a.retry))
			seen[a] = true
		}
		a.mu.Unlock()
		return len(batch) < c.flushBatch
	})
	return batch, retries
}

// housekeep evicts idle actors and purges flushed journal rows of buckets
// older than journalRetain. Rows with unflushed clicks are never purged.
func (c *Counter) housekeep(now time.Time) {
	evicted := c.evictIdle(now, c.idleTimeout)
	// From the highest clock seen, not now: after the clock is set back,
	// clicks still land at clockHigh - maxClickAge or later (bucketOf),
	// whose rows this keeps.
	purgeBefore := c.observeClock(now).Add(-c.journalRetain).Truncate(time.Minute).Unix()
	// The evicted links' rows leave memory with their actors: a later
	// click in one of their hours restarts it, seeded from the rollup
	// before its first flush (seedHours).
	b, err := c.commits.submit(nil, nil, purgeBefore, evicted)
	if err == nil {
		<-b.done
		err = b.err
	}
	if err != nil {
		c.log.Error("click journal housekeeping failed", slog.String("event", "journal_housekeeping_failed"),
			slog.String("error", err.Error()))
		return
	}
	if len(evicted) > 0 || b.purged > 0 {
		c.log.Debug("click journal housekeeping", slog.String("event", "journal_housekeeping"),
			slog.Int("actors_evicted", len(evicted)), slog.Int64("rows_purged", b.purged))
	}
}
