package webhook

import (
	"errors"

	"github.com/prometheus/client_golang/prometheus"
)

// metrics are the Dispatcher's collectors. The alert is
// linkforge_webhook_deliveries_dead_total increasing.
type metrics struct {
	deliveries *prometheus.CounterVec
	dead       prometheus.Counter
}

func newMetrics() *metrics {
	m := &metrics{
		deliveries: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "linkforge_webhook_deliveries_total",
			Help: "Webhook delivery attempts by result: delivered (2xx) or failed (anything else; retried or dead).",
		}, []string{"result"}),
		dead: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "linkforge_webhook_deliveries_dead_total",
			Help: "Webhook deliveries that failed their seventh attempt and are now dead: listed by GET /api/v1/webhooks/{id}/deliveries?state=dead, replayable. Alert on any increase.",
		}),
	}
	// Both results appear at 0 before the first attempt.
	m.deliveries.WithLabelValues("delivered")
	m.deliveries.WithLabelValues("failed")
	return m
}

func (m *metrics) register(r prometheus.Registerer) error {
	return errors.Join(r.Register(m.deliveries), r.Register(m.dead))
}
