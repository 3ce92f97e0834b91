// Package promreg registers Prometheus collectors the way every part of a
// node does: a second registration of the same collector on one registry
// (two servers or caches in one test process, a part rebuilt) shares the
// first one's instead of failing, so that metrics never stop a start.
package promreg

import (
	"errors"
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
)

// Register registers c with reg, or returns the collector of the same
// type registered already under its descriptors.
func Register[C prometheus.Collector](reg prometheus.Registerer, c C) (C, error) {
	if err := reg.Register(c); err != nil {
		var are prometheus.AlreadyRegisteredError
		if errors.As(err, &are) {
			if existing, ok := are.ExistingCollector.(C); ok {
				return existing, nil
			}
		}
		var zero C
		return zero, fmt.Errorf("register metrics: %w", err)
	}
	return c, nil
}
