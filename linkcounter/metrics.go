package linkcounter

import (
	"errors"
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
func (c *Counter) oldestUnflushed(now time.Time) time.Duration {
	var oldest time.Time
	c.actors.rangeActors(func(_ int64, a *actor) bool {
		a.mu.Lock()
		if since := a.dirtySince.time(); a.unflushed > 0 && !since.IsZero() && (oldest.IsZero() || since.Before(oldest)) {
			oldest = since
		}
		a.mu.Unlock()
		return true
	})
	if oldest.IsZero() {
		return 0
	}
	return max(now.Sub(oldest), 0)
}
