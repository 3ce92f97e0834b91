package linkforge

import (
	"context"
	"time"
)

// DomainState is where a domain is in its verification.
type DomainState string

// The states of a domain. A pending domain redirects nothing: until its
// DNS is proven to reach this deployment, the host is only a claim.
const (
	DomainPending  DomainState = "pending"
	DomainVerified DomainState = "verified"
)

// PublicDomainID is the domain id of links on the public URL's host: every
// link made before domains existed, and every link of a tenant without a
// default domain. It names no row of the domains table.
const PublicDomainID int64 = 0

// Domain is a host of a tenant's own (go.acme.com) its links can live on.
// Host is unique across tenants, lowercased and IDNA-mapped (package
// domain normalises it before any store sees it).
type Domain struct {
	ID          int64
	TenantID    int64
	Host        string
	State       DomainState
	Default     bool   // the tenant's default domain for new links; at most one
	RootURL     string // empty: the server's --root-url
	NotFoundURL string // empty: the server's --not-found-url
	CreatedAt   time.Time
	VerifiedAt  *time.Time

	// The verification of a pending domain: attempts made, the next one's
	// time (nil: none planned) and the last failure.
	VerifyAttempts int
	VerifyDueAt    *time.Time
	VerifyError    string
	// VerifyToken is what this deployment answers at the domain's
	// verification URL (a random secret, set at creation); never shown by
	// the API.
	VerifyToken string

	// AppleAppSiteAssociation (a JSON object) and AssetLinks (a JSON
	// array) are served on the verified domain's host at
	// /.well-known/apple-app-site-association and
	// /.well-known/assetlinks.json, byte for byte; nil: unset (404).
	// Package domain validates them (ValidateDocuments).
	AppleAppSiteAssociation []byte
	AssetLinks              []byte
}

// DomainStore keeps domains, and the links of a domain. Methods taking a
// tenantID only ever see that tenant's domains: another tenant's host
// answers ENotFound.
//
// The LinkStore methods without a domain are these with
// PublicDomainID.
type DomainStore interface {
	// CreateDomain stores d (ID and CreatedAt are filled in). A host any
	// tenant holds answers EConflict. A Default domain takes the default
	// from the tenant's other domains in the same transaction.
	CreateDomain(ctx context.Context, d Domain) (Domain, error)
	// CreateDomainBounded is CreateDomain for a tenant that may have at
	// most max domains (max > 0; 0: no bound): a create past it answers
	// EQuotaExceeded and stores nothing. The count and the insert share a
	// transaction that concurrent creates of the tenant, on any node, go
	// through one at a time, so that the bound is exact.
	CreateDomainBounded(ctx context.Context, d Domain, max int) (Domain, error)
	// DomainByID returns the domain of that id, whatever its tenant, or
	// ENotFound: a read by primary key (the verification answer's).
	DomainByID(ctx context.Context, id int64) (Domain, error)
	// TenantDomains returns a tenant's domains, by host.
	TenantDomains(ctx context.Context, tenantID int64) ([]Domain, error)
	// TenantDomain returns a tenant's domain by host, or ENotFound.
	TenantDomain(ctx context.Context, tenantID int64, host string) (Domain, error)
	// AllDomains returns every tenant's domains: the redirect path's host
	// table.
	AllDomains(ctx context.Context) ([]Domain, error)
	// UpdateDomain reads the domain in a transaction, lets fn change it and
	// writes it back. ID, TenantID, Host and CreatedAt cannot change. A
	// domain that becomes Default takes the default from the tenant's
	// others in the same transaction.
	UpdateDomain(ctx context.Context, tenantID int64, host string, fn func(*Domain) error) (Domain, error)
	// DeleteDomain deletes the tenant's domain and returns it; EConflict
	// while links are on it, and then nothing changes.
	DeleteDomain(ctx context.Context, tenantID int64, host string) (Domain, error)

	// NextDomainVerification returns the earliest VerifyDueAt of the
	// pending domains; ok is false when none is planned.
	NextDomainVerification(ctx context.Context) (due time.Time, ok bool, err error)
	// ClaimDomainVerifications claims up to limit pending domains whose
	// verification is due at now: their VerifyDueAt moves to now+lease in
	// the same statement, so that no other node claims them meanwhile and
	// a node that dies mid-attempt leaves them due again after the lease.
	// The claimer records the outcome with UpdateDomain.
	ClaimDomainVerifications(ctx context.Context, now time.Time, lease time.Duration, limit int) ([]Domain, error)
}

// NormalizeDomain brings d to what a read returns: UTC times truncated to
// microseconds, a pending state when none is given.
func NormalizeDomain(d Domain) Domain {
	if d.State == "" {
		d.State = DomainPending
	}
	if !d.CreatedAt.IsZero() {
		d.CreatedAt = d.CreatedAt.UTC().Truncate(time.Microsecond)
	}
	d.VerifiedAt = NormalizeTime(d.VerifiedAt)
	d.VerifyDueAt = NormalizeTime(d.VerifyDueAt)
	return d
}

// ApplyDomainUpdate lets fn change a copy of old and returns the domain to
// write back; the identity (ID, tenant, host, creation time) stays old's.
// fn's error is returned unchanged.
func ApplyDomainUpdate(old Domain, fn func(*Domain) error) (Domain, error) {
	d := old
	d.VerifiedAt = copyPtr(old.VerifiedAt)
	d.VerifyDueAt = copyPtr(old.VerifyDueAt)
	if err := fn(&d); err != nil {
		return Domain{}, err
	}
	d.ID, d.TenantID, d.Host, d.CreatedAt = old.ID, old.TenantID, old.Host, old.CreatedAt
	if d.State != DomainPending && d.State != DomainVerified {
		return Domain{}, Errorf(EInvalid, "domain state %q is not pending or verified", d.State)
	}
	return NormalizeDomain(d), nil
}

// DomainQuotaExceeded is CreateDomainBounded's answer past max domains.
func DomainQuotaExceeded(max int) *Error {
	return Errorf(EQuotaExceeded, "the tenant has %d domains, the most this deployment allows (--max-domains-per-tenant): remove one first", max)
}

// ErrDomainInUse is DeleteDomain's answer while links are on the domain.
func ErrDomainInUse(host string) *Error {
	return Errorf(EConflict, "domain %s has links: delete or move them first", host)
}
