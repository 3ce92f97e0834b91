package dashboard

import (
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
)

// Reasons a client is dropped, the values of the reason label.
const (
	reasonSlow    = "slow"    // its send queue was full
	reasonStale   = "stale"   // it did not answer pings within the window
	reasonRevoked = "revoked" // its token was revoked (closed with 4001)
)

type metrics struct {
	clients prometheus.Gauge
	sent    prometheus.Counter
	dropped *prometheus.CounterVec
	refused prometheus.Counter
}

func newMetrics() *metrics {
	m := &metrics{
		clients: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "linkforge_dashboard_clients",
			Help: "WebSocket clients connected to the live dashboards of this node.",
		}),
		sent: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "linkforge_dashboard_messages_sent_total",
			Help: "Messages written to live dashboard clients (one per client and message).",
		}),
		dropped: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "linkforge_dashboard_clients_dropped_total",
			Help: "Live dashboard clients disconnected by the server, by reason: slow (send queue full), stale (no pong within the window) or revoked (token revoked, close code 4001).",
		}, []string{"reason"}),
		refused: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "linkforge_dashboard_upgrades_refused_total",
			Help: "Live dashboard upgrades refused because their tenant had as many sockets open on this node as its cap allows.",
		}),
	}
	// Both series exist from the start, so that a rate() over them works
	// before the first drop.
	m.dropped.WithLabelValues(reasonSlow)
	m.dropped.WithLabelValues(reasonStale)
	m.dropped.WithLabelValues(reasonRevoked)
	return m
}

func (m *metrics) register(r prometheus.Registerer) error {
	for _, c := range []prometheus.Collector{m.clients, m.sent, m.dropped, m.refused} {
		if err := r.Register(c); err != nil {
			return fmt.Errorf("register dashboard metrics: %w", err)
		}
	}
	return nil
}
