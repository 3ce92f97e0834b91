package expiry

import (
	"errors"

	"github.com/prometheus/client_golang/prometheus"
)

// metrics are the alarms' Prometheus collectors (the Scheduler has the
// store errors and the next due time). The alert on dead alarms is
// linkforge_alarms_dead_total increasing; a growing
// linkforge_alarm_lag_seconds means alarms are due but not running.
type metrics struct {
	runs *prometheus.CounterVec
	dead prometheus.Counter
	lag  prometheus.Histogram
}

func newMetrics() *metrics {
	return &metrics{
		runs: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name:        "linkforge_alarm_runs_total",
			Help:        "Alarm runs by result: success, failure (retried or dead), superseded (the alarm was moved, deleted or taken over meanwhile).",
			ConstLabels: prometheus.Labels{"alarm": "link_expiry"},
		}, []string{"result"}),
		dead: prometheus.NewCounter(prometheus.CounterOpts{
			Name:        "linkforge_alarms_dead_total",
			Help:        "Alarms that failed their last retry and are now dead: listed by GET /api/v1/alarms?state=dead, replayable. Alert on any increase.",
			ConstLabels: prometheus.Labels{"alarm": "link_expiry"},
		}),
		lag: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:        "linkforge_alarm_lag_seconds",
			Help:        "Time from an alarm's due time to its claim (retries included).",
			ConstLabels: prometheus.Labels{"alarm": "link_expiry"},
			Buckets:     []float64{0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300},
		}),
	}
}

func (m *metrics) register(r prometheus.Registerer) error {
	var errs []error
	for _, c := range []prometheus.Collector{m.runs, m.dead, m.lag} {
		errs = append(errs, r.Register(c))
	}
	return errors.Join(errs...)
}
