package certs

import (
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
)

// metrics are the linkforge_tls_* series.
type metrics struct {
	expiry   *prometheus.Desc
	obtained *prometheus.CounterVec
	failed   *prometheus.CounterVec
	refused  prometheus.Counter
	m        *Manager
}

func newMetrics(reg prometheus.Registerer, m *Manager) (*metrics, error) {
	mt := &metrics{
		// A timestamp rather than the seconds left: the value does not
		// change between passes, and the alert computes the time left
		// with the scraper's clock (deploy/prometheus).
		expiry: prometheus.NewDesc("linkforge_tls_certificate_expiry_timestamp_seconds",
			"When the certificate this node holds for the host expires (unix seconds).", []string{"host"}, nil),
		obtained: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "linkforge_tls_certificates_obtained_total",
			Help: "Certificates this node obtained from the ACME directory; renewal: whether it replaced one.",
		}, []string{"renewal"}),
		failed: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "linkforge_tls_certificate_failures_total",
			Help: "Attempts of this node to obtain or renew a certificate that failed.",
		}, []string{"renewal"}),
		refused: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "linkforge_tls_hosts_refused_total",
			Help: "Handshakes naming a host the policy does not allow a certificate for (no ACME order was made).",
		}),
		m: m,
	}
	if reg == nil {
		return mt, nil
	}
	for _, c := range []prometheus.Collector{mt.obtained, mt.failed, mt.refused, expiryCollector{mt}} {
		if err := reg.Register(c); err != nil {
			return nil, fmt.Errorf("certs: register metrics: %w", err)
		}
	}
	return mt, nil
}

// expiryCollector reports the hosts' expiry as the manager knows it.
type expiryCollector struct{ mt *metrics }

func (c expiryCollector) Describe(ch chan<- *prometheus.Desc) { ch <- c.mt.expiry }

func (c expiryCollector) Collect(ch chan<- prometheus.Metric) {
	m := c.mt.m
	m.mu.Lock()
	defer m.mu.Unlock()
	for host, s := range m.hosts {
		if s.notAfter.IsZero() {
			continue
		}
		ch <- prometheus.MustNewConstMetric(c.mt.expiry, prometheus.GaugeValue, float64(s.notAfter.Unix()), host)
	}
}
