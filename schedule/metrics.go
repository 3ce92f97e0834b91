package schedule

import (
	"errors"

	"github.com/prometheus/client_golang/prometheus"
)

// metrics are the Scheduler's Prometheus collectors; package expiry adds
// the alarms' own. A linkforge_alarm_next_due_timestamp_seconds far in the
// past means work is due but not running. Their names and the alarm label
// are those of the expiry alarms, the first kind, kept for dashboards.
type metrics struct {
	storeErrors prometheus.Counter
	nextDue     prometheus.Gauge
}

func newMetrics() *metrics {
	return &metrics{
		storeErrors: prometheus.NewCounter(prometheus.CounterOpts{
			Name:        "linkforge_alarm_store_errors_total",
			Help:        "Failed alarm reads and writes of the main store (each is retried).",
			ConstLabels: prometheus.Labels{"alarm": "link_expiry"},
		}),
		nextDue: prometheus.NewGauge(prometheus.GaugeOpts{
			Name:        "linkforge_alarm_next_due_timestamp_seconds",
			Help:        "Unix time of the earliest claimable alarm as last read by this node; 0: none.",
			ConstLabels: prometheus.Labels{"alarm": "link_expiry"},
		}),
	}
}

func (m *metrics) register(r prometheus.Registerer) error {
	var errs []error
	for _, c := range []prometheus.Collector{m.storeErrors, m.nextDue} {
		errs = append(errs, r.Register(c))
	}
	return errors.Join(errs...)
}
