package web

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/linkforge/linkforge"
)

// The redirect path's host table: which domain a request's Host names.
// Read on every redirect, so a lookup is an atomic load and a map read,
// without a lock or an allocation; a write of a domain (here, or on
// another node through the bus) reloads the whole table, which is small.

// hostTableTTL bounds how long a domain write made through another node
// goes unseen when its bus message is lost (ADR 004): a stale table is
// reloaded in the background, the stale one served meanwhile.
const hostTableTTL = 5 * time.Second

// hostEntry is what a redirect needs of a domain.
type hostEntry struct {
	id       int64
	verified bool
	// root and notFound are the Location values of the domain's root_url
	// and not_found_url, built once; nil: the server's.
	root, notFound []string
}

// hostSnapshot is one load of the table, never changed once published.
type hostSnapshot struct {
	byHost map[string]*hostEntry
	loaded int64 // unix nanoseconds, by the Server's clock
}

type hostTable struct {
	store interface {
		AllDomains(ctx context.Context) ([]linkforge.Domain, error)
	}
	now    func() time.Time
	logger *slog.Logger
	cur    atomic.Pointer[hostSnapshot]
	// loading is held by the one background reload at a time.
	loading atomic.Bool
	// mu orders reloads, so that an older read never replaces a newer one.
	mu sync.Mutex
}

// lookup returns the domain of host, nil for a host no tenant registered
// (the public host's links answer there). The first lookup loads the
// table; a stale one starts a reload in the background.
func (t *hostTable) lookup(ctx context.Context, host string, now time.Time) *hostEntry {
	snap := t.cur.Load()
	if snap == nil {
		t.reload(ctx)
		if snap = t.cur.Load(); snap == nil {
			return nil // the store is down: the public host's links still answer
		}
	} else if now.UnixNano()-snap.loaded > int64(hostTableTTL) && t.loading.CompareAndSwap(false, true) {
		// Not cut when the request that noticed the table is stale ends.
		bg := context.WithoutCancel(ctx)
		go func() {
			defer t.loading.Store(false)
			t.reload(bg)
		}()
	}
	if len(snap.byHost) == 0 {
		return nil
	}
	return snap.byHost[host]
}

// reload reads every domain and publishes the new table; on an error the
// old one stays, to be retried after the TTL.
func (t *hostTable) reload(ctx context.Context) {
	t.mu.Lock()
	defer t.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), loadTimeout)
	defer cancel()
	started := t.now().UnixNano()
	ds, err := t.store.AllDomains(ctx)
	if err != nil {
		t.logger.Warn("domains: reload host table", "error", err)
		if old := t.cur.Load(); old != nil {
			// Retry after another TTL, not at every request.
			t.cur.Store(&hostSnapshot{byHost: old.byHost, loaded: started})
		}
		return
	}
	m := make(map[string]*hostEntry, len(ds))
	for _, d := range ds {
		e := &hostEntry{id: d.ID, verified: d.State == linkforge.DomainVerified}
		if d.RootURL != "" {
			e.root = []string{linkforge.RedirectLocation(d.RootURL)}
		}
		if d.NotFoundURL != "" {
			e.notFound = []string{linkforge.RedirectLocation(d.NotFoundURL)}
		}
		m[d.Host] = e
	}
	t.cur.Store(&hostSnapshot{byHost: m, loaded: started})
}

// requestHost is the Host of a request as domains are stored: lowercase,
// port and trailing dot dropped; "" for an IP literal. It allocates only
// for a host with capitals.
func requestHost(h string) string {
	if strings.HasPrefix(h, "[") {
		return ""
	}
	if i := strings.LastIndexByte(h, ':'); i >= 0 {
		h = h[:i]
	}
	h = strings.TrimSuffix(h, ".")
	for i := 0; i < len(h); i++ {
		if c := h[i]; 'A' <= c && c <= 'Z' {
			return strings.ToLower(h)
		}
	}
	return h
}

// requestDomain is the domain of c's Host; nil: the public host.
func (s *Server) requestDomain(c echo.Context, now time.Time) *hostEntry {
	req := c.Request()
	return s.hosts.lookup(req.Context(), requestHost(req.Host), now)
}

// linkKey is the cache key of slug on the request's domain; ok is false
// for a pending domain, which redirects nothing.
func (s *Server) linkKey(c echo.Context, slug string, now time.Time) (k cacheKey, d *hostEntry, ok bool) {
	d = s.requestDomain(c, now)
	if d == nil {
		return cacheKey{linkforge.PublicDomainID, slug}, nil, true
	}
	return cacheKey{d.id, slug}, d, d.verified
}

// domainChanged is told of every domain write through this node: the host
// table, the hosts links are rendered with, and the other nodes.
func (s *Server) domainChanged(d linkforge.Domain) {
	s.hostNames.learn(d)
	s.hosts.reload(context.Background())
	if p, ok := s.peers.(DomainPeers); ok {
		p.PublishDomain(d.Host)
	}
}

// DomainPeers is implemented by cluster buses that tell the other nodes
// of domain writes and of link writes on a domain (the bus of
// store/postgres). Config.Peers may implement it; without it, the other
// nodes see a domain write within hostTableTTL, and a link write on a
// domain within the link cache's TTL.
type DomainPeers interface {
	// PublishDomain tells the others to reload their host tables.
	PublishDomain(host string)
	// PublishInvalidateOn tells the others to drop slug on host from
	// their link caches.
	PublishInvalidateOn(host, slug string)
}

// PeerDomain is another node's write of the domain host: the host table
// is reloaded.
func (s *Server) PeerDomain(host string) {
	s.hosts.reload(context.Background())
}

// InvalidateOn drops slug on host from this node's link cache: another
// node's write of a link on a domain. A host this node does not know yet
// has nothing cached under it.
func (s *Server) InvalidateOn(host, slug string) {
	if host == "" {
		s.cache.invalidate(slug)
		return
	}
	if d := s.hosts.lookup(context.Background(), host, s.now()); d != nil {
		s.cache.invalidateOn(cacheKey{d.id, slug})
	}
}

// notFoundOn answers an unknown slug on domain d (nil: the public host):
// d's not_found_url, else the server's.
func (s *Server) notFoundOn(c echo.Context, d *hostEntry) error {
	if d == nil || d.notFound == nil || !d.verified {
		return s.notFound(c)
	}
	return s.redirectNotFound(c, d.notFound)
}
