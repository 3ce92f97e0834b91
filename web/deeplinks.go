package web

import (
	"bytes"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/domain"
	"github.com/linkforge/linkforge/linkcache"
	"github.com/linkforge/linkforge/redirect"
)

// Deep links (docs/domains.md, "Deep links"): a domain's
// apple-app-site-association and assetlinks.json, which iOS and Android
// fetch from the host before they open its links in an app. The owner
// sets them on the domain (apple_app_site_association, asset_links); they
// are served from the redirect path's host table, which every node
// reloads when a domain is written anywhere, so a PATCH is served at once.
// The public host serves none: its links belong to every tenant, and no
// one tenant's app may claim them.

const (
	pathAASA       = "/.well-known/apple-app-site-association"
	pathAssetLinks = "/.well-known/assetlinks.json"
)

// maxDomainBodyBytes admits a domain's body with both documents at their
// bound (domain.MaxDocumentBytes each) and its other fields; a larger
// document is refused by the field's own check where the body fits.
const maxDomainBodyBytes = 2*domain.MaxDocumentBytes + 32<<10

// limitDomainBody is limitBody with the domain routes' larger bound.
func limitDomainBody(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		req := c.Request()
		if req.ContentLength > maxDomainBodyBytes {
			return linkforge.Errorf(linkforge.ETooLarge, "request body exceeds %d KiB", maxDomainBodyBytes>>10)
		}
		req.Body = http.MaxBytesReader(c.Response().Writer, req.Body, maxDomainBodyBytes)
		return next(c)
	}
}

// document is a body member's app-link document: its bytes as the client
// sent them (domain.ValidateDocuments checks them), nil for null.
func document(m member) []byte {
	if isNull(m.value) {
		return nil
	}
	return bytes.Clone(m.value)
}

// appSiteAssociation answers GET /.well-known/apple-app-site-association.
func (s *Server) appSiteAssociation(c echo.Context) error {
	return s.serveDocument(c, func(d *linkcache.Host) []byte { return d.AASA })
}

// assetLinks answers GET /.well-known/assetlinks.json.
func (s *Server) assetLinks(c echo.Context) error {
	return s.serveDocument(c, func(d *linkcache.Host) []byte { return d.AssetLinks })
}

// serveDocument answers with the request's verified domain's document
// (pick's), as stored; the 404 page on the public host, on a pending
// domain and when unset. A short public cache: the platforms fetch it
// through their CDNs, and a change should reach them within minutes.
func (s *Server) serveDocument(c echo.Context, pick func(*linkcache.Host) []byte) error {
	d := s.redirects.RequestDomain(c, s.now())
	if d == nil || !d.Verified {
		return redirect.WritePage(c, &redirect.PageNotFound)
	}
	body := pick(d)
	if body == nil {
		return redirect.WritePage(c, &redirect.PageNotFound)
	}
	c.Response().Header().Set("Cache-Control", "public, max-age=300")
	return blob(c, "application/json", body)
}
