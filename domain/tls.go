package domain

import (
	"context"
	"fmt"

	"github.com/linkforge/linkforge"
)

// AllDomainsReader reads every tenant's domains.
type AllDomainsReader interface {
	AllDomains(ctx context.Context) ([]linkforge.Domain, error)
}

// AllowVerified is a certificate policy (certs.Policy's shape): nil for a
// host that is a verified domain of some tenant, an error otherwise. It
// reads the store on each call: the TLS layer asks before an ACME order
// only, rarely, and a domain verified or removed a moment ago must count.
// A pending domain is refused, so that nobody can make this deployment
// order certificates for a host whose DNS does not reach it.
func AllowVerified(st AllDomainsReader) func(ctx context.Context, host string) error {
	return func(ctx context.Context, host string) error {
		ds, err := st.AllDomains(ctx)
		if err != nil {
			return fmt.Errorf("domain: certificate policy: %w", err)
		}
		for _, d := range ds {
			if d.Host == host {
				if d.State == linkforge.DomainVerified {
					return nil
				}
				return fmt.Errorf("domain %q is not verified", host)
			}
		}
		return fmt.Errorf("host %q is no tenant's domain", host)
	}
}
