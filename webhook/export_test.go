package webhook

import (
	"context"
	"net/http"
)

// CheckURL is checkURL, for the external tests of what a webhook may be
// created with.
func CheckURL(ctx context.Context, raw string, p Policy) error {
	return checkURL(ctx, raw, p)
}

// NewTransport returns the transport of deliveries: NewGuardedTransport
// with the default resolver.
func NewTransport(allowPrivate bool) *http.Transport {
	return NewGuardedTransport(TransportOptions{AllowPrivate: allowPrivate})
}
