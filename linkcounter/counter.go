// Package linkcounter counts LinkForge's redirects: every acknowledged click
// exactly once, flushed to the main store as absolute per-minute, per-node
// counts, with per-hour counts by dimension (country, referrer, ...) that
// sum to them (docs/adr/009-click-dimensions.md).
//
// It is built of:
//
//   - one actor per link (`link:{id}`), created on its first click, its state
//     serialized, evicted when idle with nothing unflushed;
//   - a node journal (counts in memory, made durable by an append-only,
//     checksummed click log: package clicklog): a click is acknowledged
//     only after the log record that contains it is written and synced (the
//     output gate), with group commit so that concurrent clicks share a
//     record;
//   - one flush alarm per actor, armed only when none is armed, at the first
//     unflushed click + the flush interval, and one timer per Counter pointing
//     at the earliest armed alarm. A flush writes whole (link, hour)s, and
//     only those whose newest bucket has been open for at least the flush
//     interval (younger ones re-arm the alarm for when they are), so a busy
//     link's minute is written twice, half-way and closed, and each hour's
//     counts by dimension go in the same store transaction as its minutes;
//     Stop, start-up reconciliation and retries write everything. It writes
//     absolute counts (`ON CONFLICT ... DO UPDATE SET count =
//     GREATEST(count, excluded.count)`), so a retried, replayed or late flush
//     never lowers a count; failures are retried with exponential
//     back-off (2, 4, ... 64 s) and then every 64 s, never dropped;
//   - start-up reconciliation of unflushed journal rows, and a flush of
//     everything on Stop.
//
// Wiring, in cmd (the journal outlives the counter):
//
//	j, err := clicklog.Open(ctx, dataDir)
//	c, err := linkcounter.New(ctx, linkcounter.Config{Store: st, Journal: j,
//		NodeID: nodeIDFlag, FlushInterval: flushIntervalFlag, Logger: log,
//		Registerer: reg, Subscriber: hub})
//	err = c.Start(ctx)
//	...                  // the redirect handler calls c.Record before each counted 302
//	err = c.Stop(ctx)    // after the HTTP server has stopped: flushes everything
//	err = j.Close()
//
// See docs/adr/014-click-log.md for what survives a crash or a power loss and
// what max_clicks guarantees, and docs/adr/016-quotas-and-click-reservations.md
// for the reservations that make it exact across nodes (limit.go).
package linkcounter

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	lru "github.com/hashicorp/golang-lru/v2"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/internal/lifecycle"
	"github.com/linkforge/linkforge/linkcounter/clicklog"
)

// Store is what the counter needs from the main store.
type Store interface {
	// UpsertClicks writes absolute minute counts and hour counts by
	// dimension of nodeID, in one transaction.
	UpsertClicks(ctx context.Context, nodeID string, rows []linkforge.RollupRow, dims []linkforge.DimRow) error
	// ClickTotal returns a link's all-time rollup total, summed over nodes.
	ClickTotal(ctx context.Context, linkID int64) (int64, error)
	// NodeRollup returns nodeID's rollup rows of buckets at or after from:
	// what a journal starting a fresh count for nodeID continues from.
	NodeRollup(ctx context.Context, nodeID string, from time.Time) ([]linkforge.RollupRow, error)
	// NodeDims returns nodeID's hour counts by dimension of hours at or
	// after from: NodeRollup's counterpart.
	NodeDims(ctx context.Context, nodeID string, from time.Time) ([]linkforge.DimRow, error)
	// NodeLinkClicks returns nodeID's rollup rows of linkID with a bucket
	// in [from, to) and its click_dims rows with an hour in [from, to):
	// what restarted rows of an hour dropped from memory are seeded from.
	NodeLinkClicks(ctx context.Context, nodeID string, linkID int64, from, to time.Time) ([]linkforge.RollupRow, []linkforge.DimRow, error)
	// The click reservations of limited links (limit.go).
	GrantStore
}

// DefaultFlushInterval is the time from a link's first unflushed click to its
// flush (--flush-interval's default: with one-minute buckets and flushes that
// write only buckets at least this old, a bucket of a busy link is written
// twice).
const DefaultFlushInterval = 30 * time.Second

// MaxRetries is the number of retries of a failed flush on the exponential
// schedule (2, 4, 8, 16, 32, 64 s). The retry with this count is reported as
// lastAttempt; the flush is then retried at the capped interval (64 s) until
// it succeeds.
const MaxRetries = 6

// Config configures a Counter. Store and Journal are required.
type Config struct {
	Store   Store
	Journal *clicklog.Journal
	// NodeID overrides the node id kept in the journal (the --node-id flag);
	// empty: the journal's, generated on first use.
	NodeID string
	// FlushInterval is the debounce of the flush alarm (default 30 s).
	FlushInterval time.Duration
	// Logger receives alarm_failed and housekeeping records (default
	// slog.Default()).
	Logger *slog.Logger
	// Registerer receives the counter's metrics; nil: not registered.
	Registerer prometheus.Registerer
	// Subscriber receives coalesced live deltas; nil: none are computed.
	Subscriber Subscriber
}

// Counter counts clicks. It implements linkforge.ClickCounter. Create it with
// New, then Start; Stop flushes everything.
type Counter struct {
	store Store
	// uniques keeps the daily visitor sketches, when Store does
	// (uniques.go); nil: visitor hashes are not kept.
	uniques linkforge.UniqueStore
	journal *clicklog.Journal
	nodeID  string
	log     *slog.Logger
	sub     Subscriber
	clock   clock
	m       *metrics
	lm      *limitMetrics // click reservations (limit.go)

	// Tuning: defaults set by New; tests may change them before Start.
	flushInterval  time.Duration
	retryBase      time.Duration // first retry delay; the cap is retryBase<<5
	flushTimeout   time.Duration // bound of one flush attempt's I/O
	loadTimeout    time.Duration // bound of one ClickTotal read
	flushBatch     int           // links per UpsertRollup
	idleTimeout    time.Duration // a clean actor is evicted after this
	housekeepEvery time.Duration
	journalRetain  time.Duration // flushed journal rows older than this are purged
	maxClickAge    time.Duration // older click times are counted now (see bucketOf)
	liveInterval   time.Duration // live deltas: at most one per link per interval

	// seedPending: the journal starts a fresh count for nodeID and must
	// add what the rollup already holds of it before its first flush
	// (seedFromRollup).
	seedPending atomic.Bool
	// clockHigh is the latest time the counter has seen (unix nanoseconds):
	// the clock at each housekeeping, and at Start at least the journal's
	// purge horizon + journalRetain. Clicks are never counted in a bucket
	// older than clockHigh - maxClickAge, and rows are purged only before
	// clockHigh - journalRetain, so a clock set back cannot make a click land
	// in a purged bucket whose rollup row holds more (see bucketOf).
	clockHigh atomic.Int64

	actors registry // link id -> its live actor
	// lastTotals holds the last known rollup total of limited links whose
	// actor was evicted (see ensureTotal).
	lastTotals *lru.Cache[int64, int64]
	nActors    atomic.Int64
	pending    atomic.Int64 // acknowledged clicks not flushed yet
	// oldest caches the oldest-unflushed gauge's scan of a large registry
	// (metrics.go).
	oldest  oldestScan
	commits *committer
	sched   scheduler
	live    liveQueue

	// Ready's last journal probe.
	readyMu  sync.Mutex
	readyAt  time.Time
	readyErr error

	// Life cycle.
	runMu    sync.RWMutex // held for reading by a click's reservation
	running  bool
	life     lifecycle.Once
	bg       context.Context // the background work's; cancelled when Stop gives up
	cancelBG context.CancelFunc
	stop     chan struct{}  // closed by Stop: the loops return
	loops    sync.WaitGroup // the scheduler
	liveDone chan struct{}  // closed when the live loop has returned
}

// New returns a Counter for cfg. It resolves the node id (see NodeID) but
// starts nothing.
func New(ctx context.Context, cfg Config) (*Counter, error) {
	if cfg.Store == nil || cfg.Journal == nil {
		return nil, errors.New("linkcounter: Config.Store and Config.Journal are required")
	}
	if cfg.FlushInterval < 0 {
		return nil, fmt.Errorf("linkcounter: negative flush interval %v", cfg.FlushInterval)
	}
	nodeID, needsSeed, err := cfg.Journal.NodeID(ctx, cfg.NodeID)
	if err != nil {
		return nil, fmt.Errorf("linkcounter: %w", err)
	}
	c := &Counter{
		store:          cfg.Store,
		uniques:        uniqueStore(cfg.Store),
		journal:        cfg.Journal,
		nodeID:         nodeID,
		log:            cfg.Logger,
		sub:            cfg.Subscriber,
		clock:          realClock{},
		flushInterval:  cfg.FlushInterval,
		retryBase:      2 * time.Second,
		flushTimeout:   10 * time.Second,
		loadTimeout:    5 * time.Second,
		flushBatch:     1000,
		idleTimeout:    time.Minute,
		housekeepEvery: time.Minute,
		journalRetain:  10 * time.Minute,
		maxClickAge:    5 * time.Minute,
		liveInterval:   250 * time.Millisecond,
		life:           lifecycle.Once{Name: "linkcounter"},
		stop:           make(chan struct{}),
	}
	if c.flushInterval == 0 {
		c.flushInterval = DefaultFlushInterval
	}
	if c.log == nil {
		c.log = slog.Default()
	}
	c.seedPending.Store(needsSeed)
	if c.lastTotals, err = lru.New[int64, int64](lastTotalsSize); err != nil {
		return nil, fmt.Errorf("linkcounter: %w", err)
	}
	c.sched.wake = make(chan struct{}, 1)
	c.sched.base = c.clock.Now()
	c.live.wake = make(chan struct{}, 1)
	c.m = newMetrics(c)
	c.lm = newLimitMetrics()
	if cfg.Registerer != nil {
		if err := c.m.register(cfg.Registerer); err != nil {
			return nil, fmt.Errorf("linkcounter: metrics: %w", err)
		}
		if err := c.lm.register(cfg.Registerer); err != nil {
			return nil, fmt.Errorf("linkcounter: metrics: %w", err)
		}
	}
	return c, nil
}

// NodeID returns this node's id in the rollup.
func (c *Counter) NodeID() string { return c.nodeID }

// Start reconciles the journal (links with unflushed clicks, left by a crash
// or by a Stop that could not reach the store, are flushed right away) and
// starts the committer, the flush scheduler and the live deltas. It returns
// at once; ctx bounds the start-up reads only.
func (c *Counter) Start(ctx context.Context) error {
	return c.life.Start(func() error { return c.start(ctx) })
}

func (c *Counter) start(ctx context.Context) error {
	pending, err := c.journal.Pending(ctx)
	if err != nil {
		return fmt.Errorf("linkcounter: start: %w", err)
	}
	now := c.clock.Now()
	purged, err := c.journal.PurgedBefore(ctx)
	if err != nil {
		return fmt.Errorf("linkcounter: start: %w", err)
	}
	// The last purge ran at a clock of at least purged + journalRetain; a
	// clock now behind it was set back while the node was down.
	c.clockHigh.Store(max(now.UnixNano(), time.Unix(purged, 0).Add(c.journalRetain).UnixNano()))
	if c.seedPending.Load() {
		c.log.Info("click journal starts a fresh count for this node id: it is seeded from the rollup before its first flush",
			slog.String("event", "journal_seed_pending"), slog.String("node_id", c.nodeID))
	}
	var clicks int64
	for _, p := range pending {
		a := c.actorFor(p.LinkID)
		a.mu.Lock()
		a.unflushed = p.Unflushed
		a.dirtySince = stampOf(p.Oldest) // bucket start: never later than the click
		a.reconcile = true
		c.armLocked(a, now) // armed from stored state, only if there is any
		a.mu.Unlock()
		clicks += p.Unflushed
	}
	c.pending.Add(clicks)
	if len(pending) > 0 {
		c.log.Info("click journal reconciliation", slog.String("event", "journal_reconcile"),
			slog.Int("link_count", len(pending)), slog.Int64("clicks", clicks))
	}

	if !c.seedPending.Load() {
		// Rows replayed from the log whose clicks are all flushed and that
		// no actor holds leave memory as an evicted actor's do; a fresh
		// count waiting for its node seed has none.
		if err := c.journal.DropFlushed(ctx); err != nil {
			return fmt.Errorf("linkcounter: start: %w", err)
		}
	}
	c.bg, c.cancelBG = context.WithCancel(context.WithoutCancel(ctx))
	c.commits = newCommitter(c.journal, c.afterCommit)
	go c.commits.run() //nolint:gosec // G118: the committer outlives Start's context by design; Stop ends it
	c.loops.Add(2)
	go c.runScheduler()
	go c.runReleases() // idle links give back their reserved clicks
	c.liveDone = make(chan struct{})
	if c.sub != nil {
		go c.runLive()
	} else {
		close(c.liveDone)
	}
	c.runMu.Lock()
	c.running = true
	c.runMu.Unlock()
	return nil
}

// Stop stops counting, flushes every unflushed click to the store and
// stops the background work. Clicks it cannot flush before ctx ends stay in
// the journal and are flushed by the next Start; Stop then returns an error
// saying how many. Stop is safe to call twice and on a Counter never
// started.
func (c *Counter) Stop(ctx context.Context) error { return c.shutdown(ctx, true) }

// shutdown is Stop; flush=false simulates a crash for the tests: the journal
// keeps whatever was not flushed.
func (c *Counter) shutdown(ctx context.Context, flush bool) error {
	return c.life.Stop(ctx, func() error { return c.stopRunning(ctx, flush) })
}

func (c *Counter) stopRunning(ctx context.Context, flush bool) error {
	// From here on no click is reserved: every click either is in a commit
	// batch already or is refused.
	c.runMu.Lock()
	c.running = false
	c.runMu.Unlock()

	close(c.stop)
	loopsDone := make(chan struct{})
	go func() { c.loops.Wait(); close(loopsDone) }()
	select {
	case <-loopsDone:
	case <-ctx.Done():
		c.cancelBG() // abort the flush under way; the scheduler then returns
		<-loopsDone
	}
	select {
	case <-c.liveDone:
	case <-ctx.Done():
		// A subscriber stuck in ClicksChanged cannot be interrupted; Stop
		// does not wait for it any longer.
		c.log.Error("stop: the live subscriber did not return", slog.String("event", "live_subscriber_stuck"))
	}

	var err error
	if flush {
		// Stop's ctx also bounds the I/O of the flush attempt under way.
		stopIO := context.AfterFunc(ctx, c.cancelBG)
		err = c.flushAll(ctx)
		stopIO()
		// No click is served any more: the unspent reserved clicks go
		// back for the other nodes (limit.go).
		c.releaseGrants(ctx, time.Time{})
	}
	c.commits.close()
	c.cancelBG()
	return err
}

func errUnavailable(msg string, err error) error {
	return &linkforge.Error{Code: linkforge.EUnavailable, Message: msg, Err: err}
}

// Record counts one click of l at the given time, with its value in each
// dimension (dims nil, or an empty entry: the dimension's Default), and
// returns once it is durable in the journal. The click's dimensions are
// counted in the hour of the minute it is counted in, in the same journal
// commit. It returns an error with code EGone, counting
// nothing, when l.MaxClicks is reached, and one with code EUnavailable when
// the click could not be made durable (it is then not counted).
//
// For a link with MaxClicks, the first click after the link's actor is
// created reads the link's rollup total (one store round trip); links without
// a limit never wait for the store. If the store cannot be read, a link whose
// previous actor was evicted starts from the total that actor knew; one
// never read answers EUnavailable (docs/adr/014-click-log.md, "Outage").
// A click of a limited link also spends one click this node reserved from
// the store, reserving a block first when none is left (limit.go): EGone
// when the store has none left to grant, EUnavailable when it cannot be
// reached (docs/adr/016-quotas-and-click-reservations.md).
func (c *Counter) Record(ctx context.Context, l *linkforge.Link, at time.Time, dims *linkforge.ClickDims) error {
	return c.record(ctx, l, at, dims, 0, false)
}

// RecordVisit is Record for a click whose visitor hash (package visitor's
// daily keyed hash) counts towards the link's unique visitors of the day
// (linkforge.VisitCounter). The hash is journaled with the click, so that
// the day's sketch holds it after a crash too; without a store that keeps
// sketches (linkforge.UniqueStore) it is not kept at all.
func (c *Counter) RecordVisit(ctx context.Context, l *linkforge.Link, at time.Time, dims *linkforge.ClickDims, visit uint64) error {
	return c.record(ctx, l, at, dims, visit, c.uniques != nil)
}

func (c *Counter) record(ctx context.Context, l *linkforge.Link, at time.Time, dims *linkforge.ClickDims, visit uint64, hasVisit bool) error {
	for {
		a := c.actorFor(l.ID)
		if l.MaxClicks != nil {
			if err := c.ensureTotal(ctx, a); err != nil {
				return err
			}
			// Only a click reserved from the database is served (limit.go).
			if err := c.ensureGrant(ctx, a, l); err != nil {
				return err
			}
		}
		b, taken, retry, err := c.reserve(a, l, at, dims, visit, hasVisit)
		if err != nil {
			return err
		}
		if retry {
			continue // the actor was evicted meanwhile
		}
		if _, real := c.clock.(realClock); !real {
			// A duration for the metric needs the real clock: the click's
			// time read from it is what reserve read, else this.
			taken = time.Now()
		}
		select {
		case <-b.done:
			if b.err != nil {
				return errUnavailable("click journal unavailable", b.err)
			}
			c.m.recordTime.Observe(b.acked.Sub(taken).Seconds())
			return nil
		case <-ctx.Done():
			// The click stays in its batch; the committer settles the
			// counter's accounting whatever the outcome.
			return fmt.Errorf("record click of link %d: %w", l.ID, ctx.Err())
		}
	}
}

// reserve is the serialized part of a click: the limit check, the
// reservation, the alarm, and joining the next journal commit. It returns
// the commit and the clock's time when the click joined it: the one clock
// read of a click, which is also the start of its wait for the metric.
func (c *Counter) reserve(a *actor, l *linkforge.Link, at time.Time, dims *linkforge.ClickDims, visit uint64, hasVisit bool) (b *commitBatch, now time.Time, retry bool, err error) {
	c.runMu.RLock()
	defer c.runMu.RUnlock()
	if !c.running {
		return nil, now, false, errUnavailable("click counter is not running", nil)
	}
	now = c.clock.Now()
	bucket := c.bucketOf(at, now)

	a.mu.Lock()
	defer a.mu.Unlock()
	if a.evicted || (l.MaxClicks != nil && !a.totalKnown) {
		return nil, now, true, nil
	}
	if l.MaxClicks != nil && a.base+a.unflushed >= *l.MaxClicks {
		c.m.refused.Inc()
		return nil, now, false, &linkforge.Error{Code: linkforge.EGone, Message: "the link's click limit is reached"}
	}
	if l.MaxClicks != nil && !c.spendLocked(a) {
		return nil, now, true, nil // the grant is spent: reserve more (ensureGrant)
	}
	b, err = c.commits.add(a, bucket, dims, visit, hasVisit)
	if err != nil {
		if l.MaxClicks != nil {
			a.lim.settle(1, true) // not served: back to the grant
		}
		return nil, now, false, errUnavailable("click counter is not running", err)
	}
	if a.unflushed == 0 {
		a.dirtySince = stampOf(now)
	}
	a.unflushed++
	a.inflight++
	a.lastClick = stampOf(now)
	a.tenantID, a.limited = l.TenantID, l.MaxClicks != nil
	if a.slug != l.Slug {
		// A copy, made once per actor: l.Slug may share one allocation
		// with the rest of a redirect cache entry (web's buildCachedLink),
		// which the actor would otherwise keep alive after the cache let
		// the entry go: some 80 B per one-off link of a burst instead of
		// 16 (docs/performance.md).
		a.slug = strings.Clone(l.Slug)
	}
	c.armLocked(a, now.Add(c.flushInterval))
	return b, now, false, nil
}

// bucketOf returns the start of at's UTC minute in unix seconds (on
// absolute time, so the result does not depend on time.Local).
//
// A click time older than maxClickAge is counted in the current minute: its
// own bucket's journal row may already have been purged, and a fresh row's
// smaller absolute count would be lost under the rollup's larger one. The
// current minute is that of clockHigh when the clock is behind it (set
// back): the clock's own minute may be one whose row was purged.
func (c *Counter) bucketOf(at, now time.Time) int64 {
	if hw := c.clockHigh.Load(); hw > now.UnixNano() {
		now = time.Unix(0, hw)
	}
	if at.Before(now.Add(-c.maxClickAge)) {
		at = now
	}
	// at.Truncate(time.Minute).Unix(), without Truncate's division of
	// the time since year 1: Unix rounds down, and a minute divides the
	// time between year 1 and 1970.
	u := at.Unix()
	return u - (u%60+60)%60
}

// observeClock raises clockHigh to now and returns the new value.
func (c *Counter) observeClock(now time.Time) time.Time {
	for {
		hw := c.clockHigh.Load()
		if hw >= now.UnixNano() {
			return time.Unix(0, hw)
		}
		if c.clockHigh.CompareAndSwap(hw, now.UnixNano()) {
			return now
		}
	}
}

// afterCommit settles the counter's memory with a commit's outcome, on the
// committer goroutine, before the batch's clicks are acknowledged.
func (c *Counter) afterCommit(b *commitBatch) {
	if b.err != nil {
		// Not durable, so not counted: release the reservations.
		for _, in := range b.order {
			a := in.a
			a.mu.Lock()
			a.unflushed -= in.Add
			a.inflight -= in.Add
			a.lim.settle(in.Add, true) // not served: back to the grant
			if a.unflushed == 0 {
				a.dirtySince = 0
			}
			a.mu.Unlock()
		}
		if b.clicks > 0 {
			c.log.Error("click journal commit failed", slog.String("event", "journal_commit_failed"),
				slog.Int64("clicks", b.clicks), slog.String("error", b.err.Error()))
		}
		return
	}
	c.m.commitTime.Observe(b.took.Seconds())
	if b.clicks > 0 {
		c.pending.Add(b.clicks)
		c.m.clicks.Add(float64(b.clicks))
		c.m.commitBatch.Observe(float64(b.clicks))
	}
	for _, in := range b.order {
		a := in.a
		a.mu.Lock()
		a.inflight -= in.Add
		a.lim.settle(in.Add, false)
		queue := false
		if c.sub != nil {
			if a.live == nil {
				a.live = make(map[int64]liveCount, 1)
			}
			// Commits are sequential: the latest counts are the largest.
			a.live[in.Bucket] = liveCount{n: in.N, human: in.Human}
			if !a.liveQueued {
				a.liveQueued = true
				queue = true
			}
		}
		a.mu.Unlock()
		if queue {
			c.live.push(a)
		}
	}
}

// ensureTotal loads a's rollup total if it is not known yet. It waits for a
// flush of the link under way (a.io), so that the total and the unflushed
// count never both include, or both miss, the same clicks.
func (c *Counter) ensureTotal(ctx context.Context, a *actor) error {
	a.mu.Lock()
	known := a.totalKnown
	a.mu.Unlock()
	if known {
		return nil
	}
	a.io.Lock()
	defer a.io.Unlock()
	a.mu.Lock()
	known, ambiguous := a.totalKnown, a.ambiguous
	a.mu.Unlock()
	if known {
		return nil
	}
	if ambiguous {
		// The last flush failed: the rollup may hold its rows or not, so a
		// total read now could count them twice. The retry resolves it.
		return errUnavailable("click total unknown until the pending flush succeeds", nil)
	}
	now := c.clock.Now()
	a.mu.Lock()
	var retryAt time.Time
	if a.totalRetryAt != nil {
		retryAt = a.totalRetryAt.clicks
	}
	a.mu.Unlock()
	var err error
	if now.Before(retryAt) {
		// A read failed a moment ago: the clicks queued behind it must not
		// each wait loadTimeout on a store that is down.
		err = errors.New("the last read failed less than a second ago")
	} else {
		rctx, cancel := context.WithTimeout(ctx, c.loadTimeout)
		var total int64
		total, err = c.store.ClickTotal(rctx, a.id)
		cancel()
		if err == nil {
			a.mu.Lock()
			a.base, a.totalKnown = total, true
			a.mu.Unlock()
			return nil
		}
	}
	if last, ok := c.lastTotals.Get(a.id); ok {
		// The store is unreachable, but this node knew the link's total
		// when it evicted its previous actor: serve the headroom it still
		// holds, as that actor would have (docs/adr/014-click-log.md,
		// "Outage").
		a.mu.Lock()
		a.base, a.totalKnown = last, true
		a.mu.Unlock()
		return nil
	}
	a.mu.Lock()
	if rt := a.retryTimesLocked(); !now.Before(rt.clicks) {
		rt.clicks = now.Add(totalRetry)
	}
	a.mu.Unlock()
	return errUnavailable("click total unavailable", fmt.Errorf("click total of link %d: %w", a.id, err))
}

// totalRetry spaces out the reads of a link's total while they fail.
const totalRetry = time.Second

// lastTotalsSize bounds the totals kept for evicted actors of limited links:
// about 100 bytes each.
const lastTotalsSize = 65536

// rememberTotal keeps the total of a limited link whose actor is evicted, so
// that a later actor can use it while the store is unreachable. a.mu must be
// held.
func (c *Counter) rememberTotal(a *actor) {
	if a.limited && a.totalKnown {
		c.lastTotals.Add(a.id, a.base)
	}
}

// readyEvery bounds how often Ready writes to the journal: /readyz is
// public, and each probe is a commit (an fsync).
const readyEvery = time.Second

// Ready reports whether the counter can count clicks: it is running and its
// journal takes a write. The journal is probed at most once per readyEvery;
// calls in between get the last result. It does not touch the main store:
// clicks are counted in the journal whether or not the database is up.
func (c *Counter) Ready(ctx context.Context) error {
	c.runMu.RLock()
	running := c.running
	c.runMu.RUnlock()
	if !running {
		return errUnavailable("click counter is not running", nil)
	}
	c.readyMu.Lock()
	defer c.readyMu.Unlock()
	now := c.clock.Now()
	if c.readyAt.IsZero() || now.Sub(c.readyAt) >= readyEvery || now.Before(c.readyAt) {
		c.readyErr = c.journal.Probe(ctx)
		c.readyAt = now
		if c.readyErr != nil && ctx.Err() != nil {
			c.readyAt = time.Time{} // the caller gave up: say nothing of the journal
		}
	}
	if c.readyErr != nil {
		return errUnavailable("click journal not writable", c.readyErr)
	}
	return nil
}

// Skipped counts a request that was redirected but not counted as a click:
// reason is linkforge.SkipHead or linkforge.SkipPreview (anything else is
// counted as "other").
func (c *Counter) Skipped(reason string) {
	switch reason {
	case linkforge.SkipHead, linkforge.SkipPreview:
	default:
		reason = "other"
	}
	c.m.skipped.WithLabelValues(reason).Inc()
}

// Exhausted reports, without counting a click, whether l's MaxClicks is
// reached (redirect.ExhaustionChecker: a HEAD request must not show the target of
// an exhausted link). It may read the link's rollup total once, like the
// first click would; if that read fails it answers false, since a HEAD
// request of a link under its limit shows the target anyway.
func (c *Counter) Exhausted(l *linkforge.Link) bool {
	if l.MaxClicks == nil {
		return false
	}
	a := c.actorFor(l.ID)
	if err := c.ensureTotal(context.Background(), a); err != nil {
		return false
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.base+a.unflushed >= *l.MaxClicks || c.grantGoneLocked(a)
}
