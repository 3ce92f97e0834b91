package linkcache

import (
	"context"
	"strings"
	"time"

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

// Host is what a redirect needs of a tenant's domain.
type Host struct {
	ID       int64
	Verified bool
	// Root and NotFound are the Location values of the domain's root_url
	// and not_found_url, built once; nil: the server's.
	Root, NotFound []string
	// AASA and AssetLinks are the domain's app-link documents, served at
	// its /.well-known paths as stored; nil: unset.
	AASA, AssetLinks []byte
}

// hostSnapshot is one load of the table, never changed once published.
type hostSnapshot struct {
	byHost map[string]*Host
	names  map[int64]string // host by domain id
	loaded int64            // unix nanoseconds, by the cache's clock
}

// Host returns the domain of host (as RequestHost returns it), nil for a
// host no tenant registered (the public host's links answer there). The
// first lookup loads the table; a stale one starts a reload in the
// background.
func (c *Cache) Host(ctx context.Context, host string, now time.Time) *Host {
	snap := c.hosts.Load()
	if snap == nil {
		c.reloadHosts(ctx)
		if snap = c.hosts.Load(); snap == nil {
			return nil // the store is down: the public host's links still answer
		}
	} else if now.UnixNano()-snap.loaded > int64(hostTableTTL) && c.hostsLoading.CompareAndSwap(false, true) {
		// Not cut when the request that noticed the table is stale ends.
		bg := context.WithoutCancel(ctx)
		go func() {
			defer c.hostsLoading.Store(false)
			c.reloadHosts(bg)
		}()
	}
	if len(snap.byHost) == 0 {
		return nil
	}
	return snap.byHost[host]
}

// HostName returns the host of the domain id, for rendering a link's
// short URL and for telling the other nodes of a write on it. A domain's
// host never changes, so the table answers; an id it does not know (a
// domain created a moment ago through another node) reloads it once.
func (c *Cache) HostName(ctx context.Context, id int64) (string, bool) {
	if snap := c.hosts.Load(); snap != nil {
		if h, ok := snap.names[id]; ok {
			return h, true
		}
	}
	c.reloadHosts(ctx)
	snap := c.hosts.Load()
	if snap == nil {
		return "", false
	}
	h, ok := snap.names[id]
	return h, ok
}

// InvalidateHost is told of a write of the domain host (here or on
// another node): the table is read again, at once.
func (c *Cache) InvalidateHost(_ string) { c.reloadHosts(context.Background()) }

// reloadHosts reads every domain and publishes the new table; on an error
// the old one stays, to be retried after the TTL.
func (c *Cache) reloadHosts(ctx context.Context) {
	c.hostsMu.Lock()
	defer c.hostsMu.Unlock()
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), loadTimeout)
	defer cancel()
	started := c.now().UnixNano()
	ds, err := c.store.AllDomains(ctx)
	if err != nil {
		c.logger.Warn("domains: reload host table", "error", err)
		if old := c.hosts.Load(); old != nil {
			// Retry after another TTL, not at every request.
			c.hosts.Store(&hostSnapshot{byHost: old.byHost, names: old.names, loaded: started})
		}
		return
	}
	m := make(map[string]*Host, len(ds))
	names := make(map[int64]string, len(ds))
	for _, d := range ds {
		e := &Host{ID: d.ID, Verified: d.State == linkforge.DomainVerified,
			AASA: d.AppleAppSiteAssociation, AssetLinks: d.AssetLinks}
		if d.RootURL != "" {
			e.Root = []string{linkforge.RedirectLocation(d.RootURL)}
		}
		if d.NotFoundURL != "" {
			e.NotFound = []string{linkforge.RedirectLocation(d.NotFoundURL)}
		}
		m[d.Host] = e
		names[d.ID] = d.Host
	}
	c.hosts.Store(&hostSnapshot{byHost: m, names: names, loaded: started})
}

// LoopHosts are the hosts a link's targets must not name (the
// redirect-loop check of linkforge.ValidateTargetURL): the server's own
// (Config.SelfHosts) and every verified domain, of any tenant, since this
// deployment serves them all. A pending domain redirects nothing yet and
// is allowed. The table is reloaded first when stale (in the caller's
// request: a link write, not a redirect), so that a domain verified
// through another node counts within the table's TTL.
func (c *Cache) LoopHosts(ctx context.Context) []string {
	snap := c.hosts.Load()
	if snap == nil || c.now().UnixNano()-snap.loaded > int64(hostTableTTL) {
		c.reloadHosts(ctx)
		snap = c.hosts.Load()
	}
	if snap == nil || len(snap.byHost) == 0 {
		return c.selfHosts
	}
	out := make([]string, len(c.selfHosts), len(c.selfHosts)+len(snap.byHost))
	copy(out, c.selfHosts)
	for host, e := range snap.byHost {
		if e.Verified {
			out = append(out, host)
		}
	}
	return out
}

// RequestHost is the Host of a request as domains are stored: lowercase,
// port and trailing dot dropped; "" for an IP literal. It allocates only
// for a host with capitals.
func RequestHost(h string) string {
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
