package certs

import (
	"context"
	"fmt"
	"time"
)

// The backoff of failed orders. A handshake for a host without a
// certificate starts an ACME order; when the order fails (the host's DNS
// does not lead here, the authority refuses it), every later handshake
// would start another, and a tenant's host, or a stranger sending its
// name, would spend the certificate authority's rate limits of the whole
// deployment (Let's Encrypt allows 5 failed validations per host and
// hour, and 300 new orders per account every 3 hours). After a failure
// the host gets no order for firstBackoff, then twice as long after each
// further failure, up to maxBackoff (docs/adr/020-domains.md).
const (
	firstBackoff = time.Hour
	maxBackoff   = 24 * time.Hour
)

// OrderBackoff is how long after its failures-th failed order in a row a
// host waits for the next: an hour, doubling, at most a day.
func OrderBackoff(failures int) time.Duration {
	if failures < 1 {
		return 0
	}
	d := firstBackoff
	for i := 1; i < failures && d < maxBackoff; i++ {
		d *= 2
	}
	return min(d, maxBackoff)
}

// orderFailure is a host's failed orders in a row, and when the next may
// start.
type orderFailure struct {
	failures int
	retryAt  time.Time
}

// orderFailed records a failed order (or renewal) for host.
func (m *Manager) orderFailed(host string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	f := m.failures[host]
	f.failures++
	f.retryAt = m.cfg.Now().Add(OrderBackoff(f.failures))
	m.failures[host] = f
}

// orderSucceeded ends host's backoff.
func (m *Manager) orderSucceeded(host string) {
	m.mu.Lock()
	delete(m.failures, host)
	m.mu.Unlock()
}

// backingOff returns, while host's last order failed and its backoff has
// not ended on the manager's clock, when it ends.
func (m *Manager) backingOff(host string) (time.Time, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	f, ok := m.failures[host]
	if !ok || !m.cfg.Now().Before(f.retryAt) {
		return time.Time{}, false
	}
	return f.retryAt, true
}

// deferOrder refuses a certificate for host while its backoff runs, so
// that the handshake fails at once without an order. It allows the host
// when the storage holds a valid certificate for it: certmagic asks
// before it loads one from the storage, and before it renews a cached one
// during a handshake, and refusing would drop a certificate that still
// serves; the order itself is then stopped at cert_obtaining (onEvent).
func (m *Manager) deferOrder(ctx context.Context, host string) error {
	until, ok := m.backingOff(host)
	if !ok {
		return nil
	}
	if leaf, err := m.storedLeaf(ctx, host); err == nil && m.cfg.Now().Before(leaf.NotAfter) {
		return nil
	}
	m.metrics.deferred.Inc()
	return backoffError(host, until)
}

func backoffError(host string, until time.Time) error {
	return fmt.Errorf("certs: the last order for %s failed; the next is not before %s", host, until.UTC().Format(time.RFC3339))
}
