package client

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"time"
)

// Domain is one of the tenant's own hosts (schema Domain in
// web/openapi.json; docs/domains.md).
type Domain struct {
	ID              string    `json:"id"`
	Host            string    `json:"host"`
	State           string    `json:"state"` // "pending" or "verified"
	Default         bool      `json:"default"`
	TLS             string    `json:"tls"` // "off", "pending", "ready" or "failed"
	RootURL         *string   `json:"root_url"`
	NotFoundURL     *string   `json:"not_found_url"`
	VerificationURL string    `json:"verification_url"`
	CreatedAt       time.Time `json:"created_at"`
	// The app-link documents served on the verified host at
	// /.well-known/apple-app-site-association and
	// /.well-known/assetlinks.json; JSON null when unset.
	AppleAppSiteAssociation json.RawMessage `json:"apple_app_site_association"`
	AssetLinks              json.RawMessage `json:"asset_links"`

	// With --domain-verify dns (the server's default): the TXT record
	// the domain's DNS must have, holding VerificationToken.
	VerificationRecord string `json:"verification_record,omitempty"`
	VerificationToken  string `json:"verification_token,omitempty"`
}

// NewDomain is the body of CreateDomain; empty URLs are the server's.
type NewDomain struct {
	Host        string `json:"host"`
	RootURL     string `json:"root_url,omitempty"`
	NotFoundURL string `json:"not_found_url,omitempty"`
	// A JSON object and a JSON array (at most 64 KiB each); nil: none.
	AppleAppSiteAssociation json.RawMessage `json:"apple_app_site_association,omitempty"`
	AssetLinks              json.RawMessage `json:"asset_links,omitempty"`
}

// DomainUpdate is the body of UpdateDomain: nil fields are left as they
// are; a pointer to "" clears a URL.
type DomainUpdate struct {
	RootURL     *string `json:"root_url,omitempty"`
	NotFoundURL *string `json:"not_found_url,omitempty"`
	Default     *bool   `json:"default,omitempty"`
	// The app-link documents: nil leaves one as it is, JSON null
	// (json.RawMessage("null")) clears it.
	AppleAppSiteAssociation json.RawMessage `json:"apple_app_site_association,omitempty"`
	AssetLinks              json.RawMessage `json:"asset_links,omitempty"`
}

// CreateDomain adds a domain (POST /api/v1/domains). It is pending until
// verified, unless the server runs with --domain-verify none.
func (c *Client) CreateDomain(ctx context.Context, d NewDomain) (Domain, error) {
	var out Domain
	err := c.call(ctx, request{method: http.MethodPost, path: "/api/v1/domains", body: d, want: http.StatusCreated}, &out)
	return out, err
}

// Domains lists the tenant's domains, by host (GET /api/v1/domains).
func (c *Client) Domains(ctx context.Context) ([]Domain, error) {
	var out struct {
		Domains []Domain `json:"domains"`
	}
	err := c.call(ctx, request{method: http.MethodGet, path: "/api/v1/domains", want: http.StatusOK}, &out)
	return out.Domains, err
}

// Domain returns one of the tenant's domains (GET /api/v1/domains/{host}).
func (c *Client) Domain(ctx context.Context, host string) (Domain, error) {
	var out Domain
	err := c.call(ctx, request{method: http.MethodGet, path: "/api/v1/domains/" + seg(host), want: http.StatusOK}, &out)
	return out, err
}

// UpdateDomain changes what u sets (PATCH /api/v1/domains/{host}).
func (c *Client) UpdateDomain(ctx context.Context, host string, u DomainUpdate) (Domain, error) {
	var body = map[string]any{}
	if u.RootURL != nil {
		body["root_url"] = nullIfEmpty(*u.RootURL)
	}
	if u.NotFoundURL != nil {
		body["not_found_url"] = nullIfEmpty(*u.NotFoundURL)
	}
	if u.Default != nil {
		body["default"] = *u.Default
	}
	if u.AppleAppSiteAssociation != nil {
		body["apple_app_site_association"] = u.AppleAppSiteAssociation
	}
	if u.AssetLinks != nil {
		body["asset_links"] = u.AssetLinks
	}
	var out Domain
	err := c.call(ctx, request{method: http.MethodPatch, path: "/api/v1/domains/" + seg(host), body: body, want: http.StatusOK}, &out)
	return out, err
}

// DeleteDomain removes a domain (DELETE /api/v1/domains/{host}); a
// conflict (409) while links are on it.
func (c *Client) DeleteDomain(ctx context.Context, host string) error {
	return c.call(ctx, request{method: http.MethodDelete, path: "/api/v1/domains/" + seg(host), want: http.StatusNoContent}, nil)
}

// nullIfEmpty is nil (JSON null: clear) for "", else s.
func nullIfEmpty(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// VerifyDomain runs the domain's verification now (POST
// /api/v1/domains/{host}/verify) and returns the domain as it left it.
func (c *Client) VerifyDomain(ctx context.Context, host string) (Domain, error) {
	var out Domain
	err := c.call(ctx, request{method: http.MethodPost, path: "/api/v1/domains/" + seg(host) + "/verify", want: http.StatusOK}, &out)
	return out, err
}

// domainQuery is ?domain=host, or nothing for "" (the tenant's default).
func domainQuery(host string) url.Values {
	if host == "" {
		return nil
	}
	return url.Values{"domain": {host}}
}

// LinkOnDomain is Link of the slug on the domain host ("": the tenant's
// default domain), addressed with ?domain= as Shlink does.
func (c *Client) LinkOnDomain(ctx context.Context, host, slug string) (Link, error) {
	var out Link
	err := c.call(ctx, request{method: http.MethodGet, path: "/api/v1/links/" + seg(slug), query: domainQuery(host), want: http.StatusOK}, &out)
	return out, err
}

// UpdateLinkOnDomain is UpdateLink of the slug on the domain host.
func (c *Client) UpdateLinkOnDomain(ctx context.Context, host, slug string, u LinkUpdate) (Link, error) {
	var out Link
	err := c.call(ctx, request{method: http.MethodPatch, path: "/api/v1/links/" + seg(slug), query: domainQuery(host), body: u, want: http.StatusOK}, &out)
	return out, err
}

// DeleteLinkOnDomain is DeleteLink of the slug on the domain host.
func (c *Client) DeleteLinkOnDomain(ctx context.Context, host, slug string) error {
	return c.call(ctx, request{method: http.MethodDelete, path: "/api/v1/links/" + seg(slug), query: domainQuery(host), want: http.StatusNoContent}, nil)
}
