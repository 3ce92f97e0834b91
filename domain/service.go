package domain

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/linkforge/linkforge"
)

// Store is what a Service needs of linkforge.Store.
type Store interface {
	CreateDomainBounded(ctx context.Context, d linkforge.Domain, max int) (linkforge.Domain, error)
	TenantDomains(ctx context.Context, tenantID int64) ([]linkforge.Domain, error)
	TenantDomain(ctx context.Context, tenantID int64, host string) (linkforge.Domain, error)
	UpdateDomain(ctx context.Context, tenantID int64, host string, fn func(*linkforge.Domain) error) (linkforge.Domain, error)
	DeleteDomain(ctx context.Context, tenantID int64, host string) (linkforge.Domain, error)
}

// VerifyMode is how a new domain is verified (--domain-verify).
type VerifyMode string

// The verification modes.
const (
	// VerifyDNS: the domain stays pending until the TXT record
	// _linkforge.HOST holds its token: proof that the tenant controls the
	// domain's DNS. The default.
	VerifyDNS VerifyMode = "dns"
	// VerifyHTTP: the domain stays pending until the server fetched its
	// verification URL through the domain's DNS and got its own answer:
	// proof only that the DNS reaches this deployment, so the first
	// tenant to add a host pointed here gets it (single-team installs).
	VerifyHTTP VerifyMode = "http"
	// VerifyNone: a domain is verified at once (single-team installs).
	VerifyNone VerifyMode = "none"
)

// ParseVerifyMode reads --domain-verify.
func ParseVerifyMode(s string) (VerifyMode, error) {
	switch m := VerifyMode(s); m {
	case VerifyDNS, VerifyHTTP, VerifyNone:
		return m, nil
	}
	return "", fmt.Errorf("domain verification %q: want dns, http or none", s)
}

// DefaultMaxPerTenant is --max-domains-per-tenant's default. A domain
// costs the deployment a host table entry, verification attempts and an
// ACME order, on every node: one tenant must not spend the certificate
// authority's rate limits of all of them (docs/adr/020-domains.md).
const DefaultMaxPerTenant = 20

// PendingTTL is how long a pending domain holds its host: then the
// scheduler deletes it (Verifier), so that a claim nobody completes does
// not keep the host from its owner.
const PendingTTL = 7 * 24 * time.Hour

// RecordName is the TXT record --domain-verify dns reads for host.
func RecordName(host string) string { return "_linkforge." + host }

// Config is a Service's dependencies; Store and PublicHost are required.
type Config struct {
	Store Store
	// PublicHost is the public URL's host (u.Hostname()).
	PublicHost string
	// SelfHosts are the server's own hosts, for the loop check of the
	// domains' root and not-found URLs.
	SelfHosts []string
	Verify    VerifyMode // "": VerifyDNS
	// MaxPerTenant bounds a tenant's domains: a create past it is
	// EQuotaExceeded; 0: DefaultMaxPerTenant.
	MaxPerTenant int
	// AllowPublicSubdomains lets a tenant add a subdomain of the public
	// host (--allow-public-subdomains): refused by default, since the
	// operator's zone is not the tenant's to prove.
	AllowPublicSubdomains bool
	// Changed is told of every stored domain write, after it: the host
	// tables of this node and the others. nil: nobody to tell.
	Changed func(d linkforge.Domain)
	// Now is the clock; nil: time.Now.
	Now func() time.Time
	// Wake is told when a new domain's first verification is due (the
	// scheduler's Reschedule); nil: its periodic re-read finds it.
	Wake func(due time.Time)
}

// Service writes domains and resolves which domain a link request means.
type Service struct {
	cfg        Config
	publicHost string
}

// New returns a Service on cfg.
func New(cfg Config) (*Service, error) {
	if cfg.Store == nil || cfg.PublicHost == "" {
		return nil, fmt.Errorf("domain: Config.Store and Config.PublicHost are required")
	}
	if cfg.Verify == "" {
		cfg.Verify = VerifyDNS
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.MaxPerTenant <= 0 {
		cfg.MaxPerTenant = DefaultMaxPerTenant
	}
	return &Service{cfg: cfg, publicHost: PublicHost(cfg.PublicHost)}, nil
}

// PublicHost is the public URL's host as hosts are stored.
func (s *Service) PublicHost() string { return s.publicHost }

// VerifyMode is how this service's new domains are verified.
func (s *Service) VerifyMode() VerifyMode { return s.cfg.Verify }

// Input is a domain to create: its host as the caller wrote it, and its
// optional URLs.
type Input struct {
	Host        string
	RootURL     string
	NotFoundURL string
	// The app-link documents (linkforge.Domain's); nil: unset.
	AppleAppSiteAssociation, AssetLinks []byte
}

// Create validates and stores a tenant's new domain. A host another
// tenant (or this one) holds answers EConflict naming the field; a
// subdomain of the public host is EInvalid unless AllowPublicSubdomains.
// With VerifyNone the domain is verified at once. A tenant with
// MaxPerTenant domains already gets EQuotaExceeded, whatever the host.
func (s *Service) Create(ctx context.Context, tenantID int64, in Input) (linkforge.Domain, error) {
	host, err := NormalizeHost("host", in.Host, s.publicHost)
	if err != nil {
		return linkforge.Domain{}, err
	}
	if !s.cfg.AllowPublicSubdomains && strings.HasSuffix(host, "."+s.publicHost) {
		return linkforge.Domain{}, linkforge.InvalidField("host", fmt.Sprintf(
			"is a subdomain of the server's public host %s: the operator allows those with --allow-public-subdomains", s.publicHost))
	}
	d := linkforge.Domain{TenantID: tenantID, Host: host, State: linkforge.DomainPending,
		RootURL: in.RootURL, NotFoundURL: in.NotFoundURL,
		AppleAppSiteAssociation: in.AppleAppSiteAssociation, AssetLinks: in.AssetLinks}
	if err := validate(d, s.cfg.SelfHosts); err != nil {
		return linkforge.Domain{}, err
	}
	now := s.cfg.Now()
	d.VerifyToken = NewToken()
	if s.cfg.Verify == VerifyNone {
		d.State, d.VerifiedAt = linkforge.DomainVerified, &now
	} else {
		d.VerifyDueAt = &now
	}
	created, err := s.cfg.Store.CreateDomainBounded(ctx, d, s.cfg.MaxPerTenant)
	if linkforge.ErrorCode(err) == linkforge.EConflict {
		return linkforge.Domain{}, &linkforge.Error{Code: linkforge.EConflict,
			Message: fmt.Sprintf("host %s is already registered", host),
			Fields:  []linkforge.FieldError{{Field: "host", Detail: "is already registered"}}, Err: err}
	}
	if err != nil {
		return linkforge.Domain{}, fmt.Errorf("create domain: %w", err)
	}
	s.changed(created)
	if created.VerifyDueAt != nil && s.cfg.Wake != nil {
		s.cfg.Wake(*created.VerifyDueAt)
	}
	return created, nil
}

// Patch is an update of a domain: only the Set fields change; an empty URL
// clears it (the server's flag applies again).
type Patch struct {
	SetRootURL     bool
	RootURL        string
	SetNotFoundURL bool
	NotFoundURL    string
	SetDefault     bool
	Default        bool
	// The app-link documents: nil clears one.
	SetAppleAppSiteAssociation bool
	AppleAppSiteAssociation    []byte
	SetAssetLinks              bool
	AssetLinks                 []byte
}

// Update applies p to the tenant's domain host. Only a verified domain can
// become the default: links are created on it.
func (s *Service) Update(ctx context.Context, tenantID int64, host string, p Patch) (linkforge.Domain, error) {
	key, err := s.lookupHost(host)
	if err != nil {
		return linkforge.Domain{}, err
	}
	d, err := s.cfg.Store.UpdateDomain(ctx, tenantID, key, func(d *linkforge.Domain) error {
		if p.SetRootURL {
			d.RootURL = p.RootURL
		}
		if p.SetNotFoundURL {
			d.NotFoundURL = p.NotFoundURL
		}
		if p.SetDefault {
			if p.Default && d.State != linkforge.DomainVerified {
				return linkforge.InvalidField("default", "a pending domain cannot be the default: it redirects nothing until verified")
			}
			d.Default = p.Default
		}
		if p.SetAppleAppSiteAssociation {
			d.AppleAppSiteAssociation = p.AppleAppSiteAssociation
		}
		if p.SetAssetLinks {
			d.AssetLinks = p.AssetLinks
		}
		return validate(*d, s.cfg.SelfHosts)
	})
	if err != nil {
		return linkforge.Domain{}, fmt.Errorf("update domain: %w", err)
	}
	s.changed(d)
	return d, nil
}

// Delete deletes the tenant's domain; EConflict while links are on it.
func (s *Service) Delete(ctx context.Context, tenantID int64, host string) (linkforge.Domain, error) {
	key, err := s.lookupHost(host)
	if err != nil {
		return linkforge.Domain{}, err
	}
	d, err := s.cfg.Store.DeleteDomain(ctx, tenantID, key)
	if err != nil {
		return linkforge.Domain{}, fmt.Errorf("delete domain: %w", err)
	}
	s.changed(d)
	return d, nil
}

// Get returns the tenant's domain host.
func (s *Service) Get(ctx context.Context, tenantID int64, host string) (linkforge.Domain, error) {
	key, err := s.lookupHost(host)
	if err != nil {
		return linkforge.Domain{}, err
	}
	d, err := s.cfg.Store.TenantDomain(ctx, tenantID, key)
	if err != nil {
		return linkforge.Domain{}, fmt.Errorf("get domain: %w", err)
	}
	return d, nil
}

// List returns the tenant's domains by host.
func (s *Service) List(ctx context.Context, tenantID int64) ([]linkforge.Domain, error) {
	ds, err := s.cfg.Store.TenantDomains(ctx, tenantID)
	if err != nil {
		return nil, fmt.Errorf("list domains: %w", err)
	}
	return ds, nil
}

// Target is the domain a link request means: its id (PublicDomainID for
// the public host) and host.
type Target struct {
	ID   int64
	Host string
}

// Resolve returns the domain that host names for the tenant's link
// request: "" is the tenant's default domain, else the public host; the
// public host is PublicDomainID. Another tenant's host, or an unknown
// one, is ENotFound naming field for a read, and EInvalid for a write
// (forWrite: the host is input of the body), as is a pending domain: it
// redirects nothing yet.
func (s *Service) Resolve(ctx context.Context, tenantID int64, field, host string, forWrite bool) (Target, error) {
	if host == "" {
		ds, err := s.cfg.Store.TenantDomains(ctx, tenantID)
		if err != nil {
			return Target{}, fmt.Errorf("resolve domain: %w", err)
		}
		for _, d := range ds {
			if d.Default && d.State == linkforge.DomainVerified {
				return Target{ID: d.ID, Host: d.Host}, nil
			}
		}
		return Target{ID: linkforge.PublicDomainID, Host: s.publicHost}, nil
	}
	key := PublicHost(host)
	if key == s.publicHost {
		return Target{ID: linkforge.PublicDomainID, Host: s.publicHost}, nil
	}
	d, err := s.cfg.Store.TenantDomain(ctx, tenantID, key)
	if linkforge.ErrorCode(err) == linkforge.ENotFound && forWrite {
		return Target{}, linkforge.InvalidField(field, fmt.Sprintf("domain %s is not one of this tenant's", key))
	}
	if linkforge.ErrorCode(err) == linkforge.ENotFound {
		return Target{}, &linkforge.Error{Code: linkforge.ENotFound,
			Message: fmt.Sprintf("domain %s is not one of this tenant's", key),
			Fields:  []linkforge.FieldError{{Field: field, Detail: "is not a domain of this tenant"}}, Err: err}
	}
	if err != nil {
		return Target{}, fmt.Errorf("resolve domain: %w", err)
	}
	if forWrite && d.State != linkforge.DomainVerified {
		return Target{}, linkforge.InvalidField(field, fmt.Sprintf("domain %s is pending verification: it redirects nothing yet", d.Host))
	}
	return Target{ID: d.ID, Host: d.Host}, nil
}

// lookupHost is the stored form of a host named in a path: mapped like a
// new one, so that GO.Acme.com finds go.acme.com, without refusing
// anything (an unusable host is simply not found).
func (s *Service) lookupHost(host string) (string, error) {
	if host == "" {
		return "", linkforge.Errorf(linkforge.ENotFound, "domain not found")
	}
	return PublicHost(host), nil
}

func (s *Service) changed(d linkforge.Domain) {
	if s.cfg.Changed != nil {
		s.cfg.Changed(d)
	}
}

// ResolveID is Resolve for a write (an import line's domain, say) that
// needs only the domain's id.
func (s *Service) ResolveID(ctx context.Context, tenantID int64, host string) (int64, error) {
	t, err := s.Resolve(ctx, tenantID, "domain", host, true)
	return t.ID, err
}

// validate checks d's URLs and documents, and reports every bad field of
// both at once.
func validate(d linkforge.Domain, selfHosts []string) error {
	var fields []linkforge.FieldError
	for _, err := range []error{ValidateURLs(d, selfHosts), ValidateDocuments(d)} {
		var e *linkforge.Error
		if err == nil {
			continue
		}
		if !errors.As(err, &e) || len(e.Fields) == 0 {
			return err
		}
		fields = append(fields, e.Fields...)
	}
	return linkforge.InvalidFields(fields)
}
