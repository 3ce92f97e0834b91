package domain_test

import (
	"context"
	"errors"
	"testing"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/domain"
)

type domainList struct {
	ds  []linkforge.Domain
	err error
}

func (l domainList) AllDomains(context.Context) ([]linkforge.Domain, error) { return l.ds, l.err }

// TestAllowVerified: only a verified domain's host gets a certificate; a
// pending one, an unknown host and a store that fails are refused.
func TestAllowVerified(t *testing.T) {
	p := domain.AllowVerified(domainList{ds: []linkforge.Domain{
		{ID: 1, Host: "go.acme.com", State: linkforge.DomainVerified},
		{ID: 2, Host: "new.acme.com", State: linkforge.DomainPending},
	}})
	ctx := t.Context()
	if err := p(ctx, "go.acme.com"); err != nil {
		t.Errorf("verified domain: %v, want allowed", err)
	}
	for _, host := range []string{"new.acme.com", "other.example", ""} {
		if err := p(ctx, host); err == nil {
			t.Errorf("%q allowed, want refused", host)
		}
	}
	failing := domain.AllowVerified(domainList{err: errors.New("database down")})
	if err := failing(ctx, "go.acme.com"); err == nil {
		t.Error("a failing store allowed a host")
	}
}
