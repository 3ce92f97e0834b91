package certs

import (
	"fmt"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// metrics are the linkforge_tls_* series.
type metrics struct {
	expiry   *prometheus.Desc
	obtained *prometheus.CounterVec
	failed   *prometheus.CounterVec
	refused  prometheus.Counter
	deferred prometheus.Counter
	m        *Manager
}

func newMetrics(reg prometheus.Registerer, m *Manager) (*metrics, error) {
	mt := &metrics{
		// A timestamp rather than the seconds left: the value does not
		// change between passes, and the alert computes the time left
		// with the scraper's clock (deploy/prometheus). No host label:
		// the domains are the tenants' to choose, any number of them,
		// and /metrics names none (the logs and the domains API do).
		expiry: prometheus.NewDesc("linkforge_tls_certificate_earliest_expiry_timestamp_seconds",
			"When the first of the certificates this node holds expires (unix seconds): hosts=\"public\" for the public URL's host, \"domains\" for the tenants' domains.",
			[]string{"hosts"}, nil),
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
		deferred: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "linkforge_tls_orders_deferred_total",
			Help: "Handshakes for a host whose last order failed, answered without a certificate and without a new order until its backoff (an hour, doubling, at most a day) ends.",
		}),
		m: m,
	}
	if reg == nil {
		return mt, nil
	}
	for _, c := range []prometheus.Collector{mt.obtained, mt.failed, mt.refused, mt.deferred, expiryCollector{mt}} {
		if err := reg.Register(c); err != nil {
			return nil, fmt.Errorf("certs: register metrics: %w", err)
		}
	}
	return mt, nil
}

// expiryCollector reports the earliest expiry the manager knows of, for
// the public host and for the domains.
type expiryCollector struct{ mt *metrics }

func (c expiryCollector) Describe(ch chan<- *prometheus.Desc) { ch <- c.mt.expiry }

func (c expiryCollector) Collect(ch chan<- prometheus.Metric) {
	m := c.mt.m
	var public, domains time.Time
	m.mu.Lock()
	for host, s := range m.hosts {
		if s.notAfter.IsZero() {
			continue
		}
		earliest := &domains
		if host == m.cfg.PublicHost {
			earliest = &public
		}
		if earliest.IsZero() || s.notAfter.Before(*earliest) {
			*earliest = s.notAfter
		}
	}
	m.mu.Unlock()
	for label, t := range map[string]time.Time{"public": public, "domains": domains} {
		if !t.IsZero() {
			ch <- prometheus.MustNewConstMetric(c.mt.expiry, prometheus.GaugeValue, float64(t.Unix()), label)
		}
	}
}
