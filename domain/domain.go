// Package domain holds the rules of a tenant's own domains, the customer
// hostnames its short links are served on (go.acme.com). It is not "the
// domain" in the design's sense of the domain model: that is the root
// package, linkforge (its types, errors and storage interfaces). This
// package holds what a host may be, how it is written once stored, which
// domain a link write or an API request means, and the writes of domains
// with their after-effects (Service).
//
// The rules live here rather than in web because three callers need them
// alike: the admin API, the CLI (`linkforge domain ...`), and the
// redirect path's host table; web keeps only the transport (bodies,
// problems, status codes). Certificates are not this package's concern.
package domain

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/netip"
	"net/url"
	"strings"
	"unicode/utf8"

	"golang.org/x/net/idna"

	"github.com/linkforge/linkforge"
)

// hostProfile maps a domain's host the way a client resolving it does
// (UTS #46, non-transitional), and is stricter than the target URL rules
// of linkforge.ValidateTargetURL: a domain must be a DNS host name a
// certificate can be issued for, so '_' and leading or trailing hyphens
// are refused, and lengths are checked.
var hostProfile = idna.New(
	idna.MapForLookup(),
	idna.BidiRule(),
	idna.Transitional(false),
	idna.StrictDomainName(true),
	idna.CheckHyphens(true),
	idna.VerifyDNSLength(true),
)

// NormalizeHost returns raw as a domain's host is stored and matched:
// lowercase ASCII (punycode for IDN labels), without a trailing dot. It
// refuses, as an EInvalid error naming field, a port, an IP literal, a
// name of one label, a last label that is a number, and invalid labels.
// publicHost is the public URL's host, which is every tenant's already and
// cannot be registered.
func NormalizeHost(field, raw, publicHost string) (string, error) {
	bad := func(detail string) (string, error) { return "", linkforge.InvalidField(field, detail) }
	host := strings.TrimSpace(raw)
	switch {
	case host == "":
		return bad("is required")
	case strings.HasPrefix(host, "["):
		return bad("must be a host name, not an IP address")
	case strings.Contains(host, "://") || strings.ContainsAny(host, "/?#@"):
		return bad("must be a host name alone, without a scheme, path or user")
	}
	if _, err := netip.ParseAddr(host); err == nil {
		return bad("must be a host name, not an IP address")
	}
	if strings.Contains(host, ":") {
		return bad("must not have a port: a domain is served on the server's ports")
	}
	host = strings.TrimSuffix(host, ".")
	ascii, err := hostProfile.ToASCII(host)
	if err != nil {
		return bad(fmt.Sprintf("is not a valid host name: %s", strings.TrimPrefix(err.Error(), "idna: ")))
	}
	// UTS #46 is not idempotent for a few code points: refuse a host whose
	// ASCII form would be read as another again.
	if again, err := hostProfile.ToASCII(ascii); err != nil || again != ascii {
		return bad("does not map to a stable ASCII form")
	}
	if _, err := netip.ParseAddr(ascii); err == nil {
		return bad("must be a host name, not an IP address")
	}
	labels := strings.Split(ascii, ".")
	if len(labels) < 2 {
		return bad("must have at least two labels (go.example.com)")
	}
	if last := labels[len(labels)-1]; strings.Trim(last, "0123456789") == "" || strings.HasPrefix(last, "0x") {
		return bad("must not end in a number: it would be read as an IP address")
	}
	if publicHost != "" && ascii == PublicHost(publicHost) {
		return bad("is the server's public URL host, which every tenant has already")
	}
	return ascii, nil
}

// ShortBase is how a store's webhook events name a link's domain and short
// URL on the deployment whose public URL is u: exactly as the API's link
// body does (the public URL for the public host, its scheme on a tenant's
// domain).
func ShortBase(u *url.URL) linkforge.ShortBase {
	return linkforge.ShortBase{URL: strings.TrimSuffix(u.String(), "/"), Host: PublicHost(u.Hostname()), Scheme: u.Scheme}
}

// PublicHost returns a public URL's host (u.Hostname()) as NormalizeHost
// writes hosts, for comparison; a host it cannot map is only lowercased.
func PublicHost(hostname string) string {
	h := strings.TrimSuffix(strings.ToLower(hostname), ".")
	if ascii, err := hostProfile.ToASCII(h); err == nil {
		return ascii
	}
	return h
}

// ValidateURLs checks a domain's root_url and not_found_url (empty: the
// server's flags'): absolute http or https URLs, as a link's target, that
// do not lead back to this server (selfHosts) or to the domain itself.
func ValidateURLs(d linkforge.Domain, selfHosts []string) error {
	hosts := append(append([]string{}, selfHosts...), d.Host)
	var errs []linkforge.FieldError
	for _, f := range []struct{ name, value string }{{"root_url", d.RootURL}, {"not_found_url", d.NotFoundURL}} {
		if f.value == "" {
			continue
		}
		if err := linkforge.ValidateTargetURL(f.name, f.value, hosts); err != nil {
			var e *linkforge.Error
			if !errors.As(err, &e) {
				return err
			}
			errs = append(errs, e.Fields...)
			if len(e.Fields) == 0 {
				errs = append(errs, linkforge.FieldError{Field: f.name, Detail: e.Message})
			}
		}
	}
	return linkforge.InvalidFields(errs)
}

// MaxDocumentBytes bounds each of a domain's app-link documents: Apple
// reads at most 128 KB of an apple-app-site-association, and a real one
// (a few app ids and paths) is a few hundred bytes.
const MaxDocumentBytes = 64 << 10

// ValidateDocuments checks a domain's app-link documents (nil: unset):
// apple_app_site_association a JSON object, asset_links a JSON array, each
// valid UTF-8 and at most MaxDocumentBytes.
func ValidateDocuments(d linkforge.Domain) error {
	var errs []linkforge.FieldError
	for _, f := range []struct {
		name  string
		value []byte
		open  byte
		kind  string
	}{
		{"apple_app_site_association", d.AppleAppSiteAssociation, '{', "a JSON object"},
		{"asset_links", d.AssetLinks, '[', "a JSON array"},
	} {
		if f.value == nil {
			continue
		}
		switch {
		case len(f.value) > MaxDocumentBytes:
			errs = append(errs, linkforge.FieldError{Field: f.name,
				Detail: fmt.Sprintf("is %d bytes; at most %d (64 KiB)", len(f.value), MaxDocumentBytes)})
		case !utf8.Valid(f.value) || !json.Valid(f.value):
			errs = append(errs, linkforge.FieldError{Field: f.name, Detail: "must be " + f.kind + " (valid JSON in UTF-8)"})
		case bytes.TrimLeft(f.value, " \t\r\n")[0] != f.open:
			errs = append(errs, linkforge.FieldError{Field: f.name, Detail: "must be " + f.kind})
		}
	}
	return linkforge.InvalidFields(errs)
}
