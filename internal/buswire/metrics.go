package buswire

import (
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
)

// Metrics are a bus's, under the names of docs/adr/004-scale-out.md: a
// node runs one bus, so dashboards and alerts read the same series
// whichever transport it uses. On NATS a "notification" is a message.
type Metrics struct {
	Published       prometheus.Counter
	PublishedBytes  prometheus.Counter
	PublishedEvents prometheus.Counter
	PublishFailures prometheus.Counter
	Received        *prometheus.CounterVec
	ReceivedBytes   prometheus.Counter
	ReceivedEvents  prometheus.Counter
	Dropped         *prometheus.CounterVec
	Reconnects      prometheus.Counter
	Listening       prometheus.Gauge
	SharedNodeID    prometheus.Counter
	healthy         prometheus.GaugeFunc
}

// NewMetrics returns a bus's metrics; healthy is read for
// linkforge_bus_healthy.
func NewMetrics(healthy func() bool) *Metrics {
	counter := func(name, help string) prometheus.Counter {
		return prometheus.NewCounter(prometheus.CounterOpts{Name: name, Help: help})
	}
	return &Metrics{
		Published:       counter("linkforge_bus_notifications_published_total", "Notifications (messages) this node sent on the cluster bus."),
		PublishedBytes:  counter("linkforge_bus_published_bytes_total", "Payload bytes this node sent on the cluster bus."),
		PublishedEvents: counter("linkforge_bus_events_published_total", "Events this node sent on the cluster bus, after coalescing."),
		PublishFailures: counter("linkforge_bus_publish_failures_total", "Sends of the cluster bus that failed (their events are dropped)."),
		Received: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "linkforge_bus_notifications_received_total",
			Help: "Notifications (messages) received on the cluster bus, by source (peer, or self: this node's own, ignored).",
		}, []string{"source"}),
		ReceivedBytes:  counter("linkforge_bus_received_bytes_total", "Payload bytes received from other nodes on the cluster bus."),
		ReceivedEvents: counter("linkforge_bus_events_received_total", "Events from other nodes handed to this node's dashboards and link cache."),
		Dropped: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "linkforge_bus_events_dropped_total",
			Help: "Cluster bus events dropped, by reason (queue_full, publish_failed, stopped, too_large, malformed, version, unknown_type, slow_consumer, ...).",
		}, []string{"reason"}),
		Reconnects: counter("linkforge_bus_listener_reconnects_total", "Times the cluster bus listener reconnected after losing its connection."),
		Listening: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "linkforge_bus_listening",
			Help: "1 while the cluster bus listener is connected and listening.",
		}),
		SharedNodeID: counter("linkforge_bus_shared_node_id_total", "Messages from another process with this node's id: a misconfiguration that loses clicks."),
		healthy: prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "linkforge_bus_healthy",
			Help: "1 while the cluster bus listener has heard from its server within its health window (3 s): invalidations from other nodes reach this node.",
		}, func() float64 {
			if healthy() {
				return 1
			}
			return 0
		}),
	}
}

// Register registers every metric with r.
func (m *Metrics) Register(r prometheus.Registerer) error {
	for _, c := range []prometheus.Collector{m.Published, m.PublishedBytes, m.PublishedEvents, m.PublishFailures,
		m.Received, m.ReceivedBytes, m.ReceivedEvents, m.Dropped, m.Reconnects, m.Listening, m.healthy, m.SharedNodeID} {
		if err := r.Register(c); err != nil {
			return fmt.Errorf("register metrics: %w", err)
		}
	}
	return nil
}
