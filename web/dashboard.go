package web

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"net/http"

	"github.com/labstack/echo/v4"
	"github.com/linkforge/linkforge/redirect"
)

// The browser dashboard: one HTML page and its script and style sheet,
// embedded from assets/ (see ops.go), served as they are: no build step.
const (
	pathDashboardJS  = "/static/dashboard.js"
	pathDashboardCSS = "/static/dashboard.css"
	// pathAnalyticsPage is the same page with the tenant's analytics
	// first; /dashboard puts the links first (dashboard.css).
	pathAnalyticsPage = "/dashboard/analytics"
	// pathLinkPage is the same page again, for one link: the script reads
	// the slug from the path, so a link's page has an address of its own.
	pathLinkPage = "/dashboard/links/:slug"
)

// dashboardCSP lets the page load its own script and style sheet and talk
// to its own origin (the admin API and, CSP 3's 'self' covering ws: and
// wss: of the same host, the live feed); nothing inline, nothing from
// elsewhere, never framed. Images may be blob: URLs: the QR code is fetched
// with the bearer token and shown from an object URL; and https: images,
// for the social card's preview (its image is a URL of the tenant's
// choice, on another host; no http:, which an https page would not show).
var dashboardCSP = []string{"default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; " +
	"img-src 'self' data: blob: https:; frame-ancestors 'none'; base-uri 'none'; form-action 'none'"}

// asset is an embedded file with its validator: browsers revalidate
// (no-cache) and get a 304 while the binary is the same.
type asset struct {
	body        []byte
	contentType string
	etag        string
}

// dashboardAssets are read once: the embedded files cannot change.
var dashboardAssets = func() map[string]asset {
	files := map[string]struct{ name, contentType string }{
		"/dashboard":      {"assets/dashboard.html", "text/html; charset=utf-8"},
		pathAnalyticsPage: {"assets/dashboard.html", "text/html; charset=utf-8"},
		pathLinkPage:      {"assets/dashboard.html", "text/html; charset=utf-8"},
		pathDashboardJS:   {"assets/dashboard.js", "text/javascript; charset=utf-8"},
		pathDashboardCSS:  {"assets/dashboard.css", "text/css; charset=utf-8"},
	}
	out := make(map[string]asset, len(files))
	for path, f := range files {
		body, err := assets.ReadFile(f.name)
		if err != nil {
			panic(fmt.Sprintf("web: embedded %s: %v", f.name, err)) // a broken build, not a runtime condition
		}
		menuRoute := path
		if path == pathLinkPage {
			menuRoute = "/dashboard" // a link's page is under Links
		}
		body = withMenu(menuRoute, body)
		if path == pathAnalyticsPage {
			body = bytes.Replace(body, []byte("<body>"), []byte(`<body data-page="analytics">`), 1)
		}
		if path == pathDashboardCSS {
			// The product's base stylesheet first: one palette for the
			// dashboard and the visitor pages (redirect.Stylesheet).
			body = append([]byte(redirect.Stylesheet+"\n"), body...)
		}
		sum := sha256.Sum256(body)
		out[path] = asset{body: body, contentType: f.contentType,
			etag: `"` + base64.RawURLEncoding.EncodeToString(sum[:12]) + `"`}
	}
	return out
}()

// dashboardAsset serves the page or one of its files, by route.
func (s *Server) dashboardAsset(c echo.Context) error {
	a, ok := dashboardAssets[c.Path()]
	if !ok {
		return fmt.Errorf("dashboard asset for route %q: not embedded", c.Path())
	}
	h := c.Response().Header()
	if a.contentType == "text/html; charset=utf-8" {
		redirect.SetHTMLHeaders(h)
		h["Content-Security-Policy"] = dashboardCSP
	}
	h.Set("Cache-Control", "no-cache")
	h.Set("ETag", a.etag)
	if match := c.Request().Header.Get("If-None-Match"); match != "" && match == a.etag {
		return c.NoContent(http.StatusNotModified)
	}
	return blob(c, a.contentType, a.body)
}
