package web

import (
	"time"

	"github.com/labstack/echo/v4"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/linkcache"
)

// requestDomain is the domain of c's Host; nil: the public host.
func (s *Server) requestDomain(c echo.Context, now time.Time) *linkcache.Host {
	req := c.Request()
	return s.cache.Host(req.Context(), linkcache.RequestHost(req.Host), now)
}

// linkKey is the cache key of slug on the request's domain; ok is false
// for a pending domain, which redirects nothing.
func (s *Server) linkKey(c echo.Context, slug string, now time.Time) (k linkcache.Key, d *linkcache.Host, ok bool) {
	d = s.requestDomain(c, now)
	if d == nil {
		return linkcache.Key{Domain: linkforge.PublicDomainID, Slug: slug}, nil, true
	}
	return linkcache.Key{Domain: d.ID, Slug: slug}, d, d.Verified
}

// notFoundOn answers an unknown slug on domain d (nil: the public host):
// d's not_found_url, else the server's.
func (s *Server) notFoundOn(c echo.Context, d *linkcache.Host) error {
	if d == nil || d.NotFound == nil || !d.Verified {
		return s.notFound(c)
	}
	return s.redirectNotFound(c, d.NotFound)
}

// domainChanged is told of every domain write through this node: the host
// table, and the other nodes.
func (s *Server) domainChanged(d linkforge.Domain) {
	s.cache.InvalidateHost(d.Host)
	if s.peers != nil {
		s.peers.InvalidateHost(d.Host)
	}
}
