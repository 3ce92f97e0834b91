package linkcounter

import (
	"errors"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

type metrics struct {
	clicks        prometheus.Counter
	refused       prometheus.Counter
	skipped       *prometheus.CounterVec
	flushFailures prometheus.Counter
	rowsWritten   prometheus.Counter
	dimsWritten   prometheus.Counter
	hoursSeeded   prometheus.Counter
	flushDuration prometheus.Histogram
	commitBatch   prometheus.Histogram
	commitTime    prometheus.Histogram
	recordTime    prometheus.Histogram
	gauges        []prometheus.Collector
}

func newMetrics(c *Counter) *metrics {
	m := &metrics{
		clicks: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "linkforge_clicks_total",
			Help: "Clicks counted (durable in the node journal).",
		}),
		refused: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "linkforge_clicks_refused_total",
			Help: "Clicks refused because the link's max_clicks was reached.",
		}),
		skipped: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "linkforge_clicks_skipped_total",
			Help: "Redirects not counted as clicks, by reason (head, preview).",
		}, []string{"reason"}),
		flushFailures: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "linkforge_flush_failures_total",
			Help: "Failed click flush attempts (each is retried; nothing is dropped).",
		}),
		rowsWritten: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "linkforge_rollup_rows_written_total",
			Help: "Rollup rows written by flushes; against linkforge_clicks_total, the write amplification.",
		}),
		dimsWritten: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "linkforge_click_dims_rows_written_total",
			Help: "click_dims rows (link, hour, dimension, value) written by flushes, with their minutes' rollup rows.",
		}),
		hoursSeeded: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "linkforge_journal_seeds_total",
			Help: "(link, hour)s seeded from the rollup before their flush: their rows were dropped from memory with their evicted actor, then restarted.",
		}),
		flushDuration: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "linkforge_flush_duration_seconds",
			Help:    "Duration of one flush attempt: journal read, rollup upsert, journal mark.",
			Buckets: prometheus.ExponentialBuckets(0.001, 2, 14),
		}),
		commitBatch: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "linkforge_journal_commit_batch_size",
			Help:    "Clicks per journal commit (group commit).",
			Buckets: prometheus.ExponentialBuckets(1, 2, 14),
		}),
		commitTime: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "linkforge_journal_commit_duration_seconds",
			Help:    "Duration of one journal group commit: the click log write and, at --journal-sync full, its fdatasync.",
			Buckets: prometheus.ExponentialBuckets(0.00005, 2, 16),
		}),
		// Per click, where commitTime is per commit: a slow fsync is one
		// commit but holds every click that arrives while it runs, so the
		// clicks' p99 can be many times the commits' (and it is what a
		// counted redirect's latency is made of).
		recordTime: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "linkforge_click_record_duration_seconds",
			Help:    "Duration of counting one click, from the counter taking it to its durable acknowledgement: the journal commit it joined and the one running before it.",
			Buckets: prometheus.ExponentialBuckets(0.00005, 2, 16),
		}),
	}
	m.gauges = []prometheus.Collector{
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "linkforge_clicks_pending",
			Help: "Acknowledged clicks not yet flushed to the main store.",
		}, func() float64 { return float64(c.pending.Load()) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "linkforge_clicks_oldest_unflushed_seconds",
			Help: "Age of the oldest unflushed click (0: none); alert when it passes a few flush intervals.",
		}, func() float64 { return c.oldestUnflushed(c.clock.Now()).Seconds() }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "linkforge_actors",
			Help: "Live link actors (links clicked recently or with unflushed clicks).",
		}, func() float64 { return float64(c.nActors.Load()) }),
	}
	return m
}

func (m *metrics) register(r prometheus.Registerer) error {
	cs := []prometheus.Collector{m.clicks, m.refused, m.skipped, m.flushFailures,
		m.rowsWritten, m.dimsWritten, m.hoursSeeded, m.flushDuration, m.commitBatch, m.commitTime, m.recordTime}
	var errs []error
	for _, col := range append(cs, m.gauges...) {
		errs = append(errs, r.Register(col))
	}
	return errors.Join(errs...)
}

// oldestUnflushed returns the age of the oldest unflushed click, scanning the
// actors: a scrape every few seconds can afford it, a click could not.
// With no click pending there is nothing to scan for. A scan of many
// actors (a burst's million, some 0.1 s of CPU) is reused for fifty times
// its cost, so that scrapes take at most about 2 % of a core: the reused
// value only ever overstates the age, by at most that long, since the
// oldest unflushed click of an actor only gets younger until it is flushed.
func (c *Counter) oldestUnflushed(now time.Time) time.Duration {
	if c.pending.Load() == 0 {
		return 0
	}
	o := &c.oldest
	o.mu.Lock()
	defer o.mu.Unlock()
	if !o.at.IsZero() && time.Since(o.scanned) < o.reuse {
		return ageSince(now, o.at)
	}
	start := time.Now()
	var (
		oldest time.Time
		n      int
	)
	c.actors.rangeActors(func(_ int64, a *actor) bool {
		n++
		a.mu.Lock()
		if since := a.dirtySince.time(); a.unflushed > 0 && !since.IsZero() && (oldest.IsZero() || since.Before(oldest)) {
			oldest = since
		}
		a.mu.Unlock()
		return true
	})
	o.scanned, o.at, o.reuse = start, oldest, 0
	if n >= oldestReuseActors {
		o.reuse = min(50*time.Since(start), maxOldestReuse)
	}
	return ageSince(now, oldest)
}

// oldestScan is the last scan of oldestUnflushed: when it ran (the
// process's clock, not the counter's), what it found (zero: nothing
// unflushed, which is never reused: a click pending now would be younger)
// and how long it may be reused.
type oldestScan struct {
	mu      sync.Mutex
	scanned time.Time
	at      time.Time
	reuse   time.Duration
}

// A scan of fewer actors is never reused (it costs microseconds), and
// none for longer than maxOldestReuse.
const (
	oldestReuseActors = 10_000
	maxOldestReuse    = 10 * time.Second
)

func ageSince(now, oldest time.Time) time.Duration {
	if oldest.IsZero() {
		return 0
	}
	return max(now.Sub(oldest), 0)
}
