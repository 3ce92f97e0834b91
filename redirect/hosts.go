package redirect

import (
	"time"

	"github.com/labstack/echo/v4"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/linkcache"
)

// RequestDomain is the domain of c's Host (linkcache's host table); nil:
// the public host. web asks it too, for the routes a domain does not
// answer.
func (rd *Handler) RequestDomain(c echo.Context, now time.Time) *linkcache.Host {
	req := c.Request()
	return rd.cache.Host(req.Context(), linkcache.RequestHost(req.Host), now)
}

// linkKey is the cache key of slug on the request's domain; ok is false
// for a pending domain, which redirects nothing.
func (rd *Handler) linkKey(c echo.Context, slug string, now time.Time) (k linkcache.Key, d *linkcache.Host, ok bool) {
	d = rd.RequestDomain(c, now)
	if d == nil {
		return linkcache.Key{Domain: linkforge.PublicDomainID, Slug: slug}, nil, true
	}
	return linkcache.Key{Domain: d.ID, Slug: slug}, d, d.Verified
}

// NotFoundOn answers an unknown slug on domain d (nil: the public host):
// d's not_found_url, else the server's (Config.NotFoundURL), else the 404
// page. web answers so the routes a domain does not serve.
func (rd *Handler) NotFoundOn(c echo.Context, d *linkcache.Host) error {
	if d == nil || d.NotFound == nil || !d.Verified {
		return rd.notFound(c)
	}
	return redirectNotFound(c, d.NotFound)
}
