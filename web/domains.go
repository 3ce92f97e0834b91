package web

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/domain"
	"github.com/linkforge/linkforge/links"
)

// The domains of a tenant (docs/domains.md; the domains operations): the
// transport of package domain's Service, and the hosts links are rendered on.

const (
	pathDomains      = apiPrefix + "/domains"
	pathDomain       = pathDomains + "/:host"
	pathDomainVerify = pathDomain + "/verify"
)

// domainJSON is a domain as the API answers it.
type domainJSON struct {
	ID              string  `json:"id"`
	Host            string  `json:"host"`
	State           string  `json:"state"`
	Default         bool    `json:"default"`
	TLS             string  `json:"tls"`
	RootURL         *string `json:"root_url"`
	NotFoundURL     *string `json:"not_found_url"`
	VerificationURL string  `json:"verification_url"`
	// The app-link documents as stored; null when unset (deeplinks.go).
	AppleAppSiteAssociation json.RawMessage `json:"apple_app_site_association"`
	AssetLinks              json.RawMessage `json:"asset_links"`
	CreatedAt               time.Time       `json:"created_at"`

	// With --domain-verify dns: the TXT record to create and the token it
	// must hold. Absent in the other modes, where the token is this
	// deployment's own answer at verification_url, which whoever runs the
	// host must not be able to give.
	VerificationRecord string `json:"verification_record,omitempty"`
	VerificationToken  string `json:"verification_token,omitempty"`
}

// DomainJSON is d as the API answers it under the verification mode (the
// CLI prints it too). The CLI runs no TLS front: its tls is off.
func DomainJSON(d linkforge.Domain, mode domain.VerifyMode) any { return renderDomain(d, "off", mode) }

// renderDomain renders d as the API answers it; this server's TLS front
// tells the state of its certificate. A pending domain's is off: no
// certificate is ordered for it (the TLS policy takes verified domains
// only), whatever the front would say of a host it never saw.
func (s *Server) renderDomain(d linkforge.Domain) domainJSON {
	state := "off"
	if s.ready.tlsHost != nil && d.State == linkforge.DomainVerified {
		state = s.ready.tlsHost(d.Host)
	}
	return renderDomain(d, state, s.domains.VerifyMode())
}

func renderDomain(d linkforge.Domain, tls string, mode domain.VerifyMode) domainJSON {
	j := domainJSON{
		ID: strconv.FormatInt(d.ID, 10), Host: d.Host, State: string(d.State), Default: d.Default,
		// Certificates are the TLS layer's: it tells their state.
		TLS:             tls,
		VerificationURL: domain.VerificationURL(d),
		CreatedAt:       d.CreatedAt.UTC(),
	}
	if mode == domain.VerifyDNS || mode == "" {
		j.VerificationRecord, j.VerificationToken = domain.RecordName(d.Host), d.VerifyToken
	}
	if d.RootURL != "" {
		j.RootURL = &d.RootURL
	}
	if d.NotFoundURL != "" {
		j.NotFoundURL = &d.NotFoundURL
	}
	j.AppleAppSiteAssociation, j.AssetLinks = d.AppleAppSiteAssociation, d.AssetLinks
	return j
}

const domainFields = "host, root_url, not_found_url, apple_app_site_association, asset_links"

// decodeCreateDomain reads POST /api/v1/domains' body.
func decodeCreateDomain(r io.Reader) (domain.Input, error) {
	members, err := readObject(r)
	if err != nil {
		return domain.Input{}, err
	}
	var (
		in      domain.Input
		fe      fieldErrors
		hasHost bool
	)
	for _, m := range members {
		null := isNull(m.value)
		switch m.name {
		case "host":
			hasHost = !null
			if !null {
				fe.str(m, &in.Host)
			}
		case "root_url":
			if !null {
				fe.str(m, &in.RootURL)
			}
		case "not_found_url":
			if !null {
				fe.str(m, &in.NotFoundURL)
			}
		case "apple_app_site_association":
			in.AppleAppSiteAssociation = document(m)
		case "asset_links":
			in.AssetLinks = document(m)
		default:
			fe.add(fieldName(m.name), "unknown field; accepted fields are "+domainFields)
		}
	}
	if !hasHost {
		fe.add("host", "is required")
	}
	if err := linkforge.InvalidFields(fe); err != nil {
		return domain.Input{}, err
	}
	return in, nil
}

const domainPatchFields = "root_url, not_found_url, default, apple_app_site_association, asset_links"

// decodePatchDomain reads PATCH /api/v1/domains/{host}'s body.
func decodePatchDomain(r io.Reader) (domain.Patch, error) {
	members, err := readObject(r)
	if err != nil {
		return domain.Patch{}, err
	}
	var (
		p  domain.Patch
		fe fieldErrors
	)
	for _, m := range members {
		null := isNull(m.value)
		switch m.name {
		case "root_url":
			p.SetRootURL = null || fe.str(m, &p.RootURL)
		case "not_found_url":
			p.SetNotFoundURL = null || fe.str(m, &p.NotFoundURL)
		case "default":
			if null || fe.boolean(m, &p.Default) {
				p.SetDefault = true
			}
		case "apple_app_site_association":
			p.SetAppleAppSiteAssociation, p.AppleAppSiteAssociation = true, document(m)
		case "asset_links":
			p.SetAssetLinks, p.AssetLinks = true, document(m)
		case "host", "id", "state", "tls", "verification_url", "verification_record", "verification_token", "created_at":
			fe.add(m.name, "cannot be changed; fields that can are "+domainPatchFields)
		default:
			fe.add(fieldName(m.name), "unknown field; fields that can be changed are "+domainPatchFields)
		}
	}
	if err := linkforge.InvalidFields(fe); err != nil {
		return domain.Patch{}, err
	}
	return p, nil
}

func (s *Server) createDomain(c echo.Context) error {
	in, err := decodeCreateDomain(c.Request().Body)
	if err != nil {
		return err
	}
	d, err := s.domains.Create(c.Request().Context(), tenantID(c), in)
	if err != nil {
		return err
	}
	c.Response().Header().Set(echo.HeaderLocation, pathDomains+"/"+d.Host)
	return c.JSON(http.StatusCreated, s.renderDomain(d))
}

// domainsJSON is the body of GET /api/v1/domains.
type domainsJSON struct {
	Domains []domainJSON `json:"domains"`
}

func (s *Server) listDomains(c echo.Context) error {
	ds, err := s.domains.List(c.Request().Context(), tenantID(c))
	if err != nil {
		return err
	}
	out := domainsJSON{Domains: make([]domainJSON, len(ds))}
	for i, d := range ds {
		out.Domains[i] = s.renderDomain(d)
	}
	return c.JSON(http.StatusOK, out)
}

func (s *Server) getDomain(c echo.Context) error {
	d, err := s.domains.Get(c.Request().Context(), tenantID(c), c.Param("host"))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, s.renderDomain(d))
}

func (s *Server) patchDomain(c echo.Context) error {
	p, err := decodePatchDomain(c.Request().Body)
	if err != nil {
		return err
	}
	d, err := s.domains.Update(c.Request().Context(), tenantID(c), c.Param("host"), p)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, s.renderDomain(d))
}

func (s *Server) deleteDomain(c echo.Context) error {
	if _, err := s.domains.Delete(c.Request().Context(), tenantID(c), c.Param("host")); err != nil {
		return err
	}
	return c.NoContent(http.StatusNoContent)
}

// linkDomain is the domain a link route's ?domain= names for the tenant
// (domain.Service.Resolve): a read's unknown host is 404.
func (s *Server) linkDomain(c echo.Context) (domain.Target, error) {
	return s.domains.Resolve(c.Request().Context(), tenantID(c), "domain", c.QueryParam("domain"), false)
}

// addressedLink reads the tenant's link of the route's slug on the domain
// of its ?domain=.
func (s *Server) addressedLink(c echo.Context) (linkforge.Link, error) {
	t, err := s.linkDomain(c)
	if err != nil {
		return linkforge.Link{}, err
	}
	return s.store.TenantLink(c.Request().Context(), tenantID(c), t.ID, c.Param("slug"))
}

// linkBase is where l's short URL starts (links.Addresses).
func (s *Server) linkBase(l linkforge.Link) links.Base { return s.addresses.Base(l) }

// linkLocation is the Location of a created link: its API path, with the
// domain when it is not the public host.
func (s *Server) linkLocation(l linkforge.Link) string {
	p := pathLinks + "/" + l.Slug
	if l.DomainID != linkforge.PublicDomainID {
		p += "?domain=" + url.QueryEscape(s.linkBase(l).Host)
	}
	return p
}

// newDomainService returns the service of the domain routes.
func (s *Server) newDomainService(cfg Config) (*domain.Service, error) {
	svc, err := domain.New(domain.Config{
		Store:      cfg.Store,
		PublicHost: cfg.PublicURL.Hostname(),
		SelfHosts:  s.selfHosts,
		Verify:     cfg.DomainVerify,
		Changed:    s.domainChanged,
		Now:        s.now,
		Wake:       s.wakeScheduler,

		MaxPerTenant:          cfg.MaxDomainsPerTenant, // 0: domain.DefaultMaxPerTenant
		AllowPublicSubdomains: cfg.AllowPublicSubdomains,
	})
	if err != nil {
		return nil, fmt.Errorf("web: %w", err)
	}
	return svc, nil
}

// boolean reads a JSON boolean.
func (fe *fieldErrors) boolean(m member, dst *bool) bool {
	if err := json.Unmarshal(m.value, dst); err != nil {
		fe.add(m.name, "must be true or false")
		return false
	}
	return true
}

// wakeScheduler tells the scheduler of new due work, if there is one.
func (s *Server) wakeScheduler(due time.Time) {
	if s.alarms != nil {
		s.alarms.Reschedule(due)
	}
}
