package web

import (
	"strings"

	"github.com/labstack/echo/v4"
)

// The sign-in pages, the dashboard and the admin API answer on the public
// host only. A tenant's domain serves what its links need: the redirects,
// its root and not-found URLs, its verification URL (and the ACME
// challenges, answered before this handler), and the probes and metrics,
// which name no tenant. Anything else there answers 404, as an unknown
// path would: a sign-in on a tenant's host would leave the session cookie
// with whoever controls that host's DNS next, and a page of ours on it
// would lend the tenant our origin (docs/adr/020-domains.md).
// --admin-on-domains (Config.AdminOnDomains) answers them everywhere, as
// before.

// onDomains are the route paths a tenant's domain answers.
var onDomains = map[string]bool{
	"/":                    true,
	"/favicon.ico":         true,
	pathRobots:             true, // every short-link host (wellknown.go)
	pathSecurityTxt:        true,
	"/:slug":               true, // the redirects and the password form
	pathVerificationAnswer: true,
	pathAASA:               true, // deeplinks.go
	pathAssetLinks:         true,
	"/healthz":             true,
	"/readyz":              true,
	"/metrics":             true,
}

// publicHostOnly wraps the handler of path, unless a domain answers it
// (or --admin-on-domains): on a tenant's domain, verified or pending, it
// answers 404 without running h. Any other host is the public host's, as
// for the redirects.
func (s *Server) publicHostOnly(path string, adminOnDomains bool, h echo.HandlerFunc) echo.HandlerFunc {
	if onDomains[path] || adminOnDomains {
		return h
	}
	api := strings.HasPrefix(path, apiPrefix+"/")
	return func(c echo.Context) error {
		d := s.redirects.RequestDomain(c, s.now())
		if d == nil {
			return h(c)
		}
		if api {
			return echo.ErrNotFound
		}
		return s.redirects.NotFoundOn(c, d)
	}
}
