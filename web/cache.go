package web

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	lru "github.com/hashicorp/golang-lru/v2"
	"github.com/prometheus/client_golang/prometheus"
	"golang.org/x/sync/singleflight"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/classify"
)

const (
	// positiveTTL bounds how long this node may serve a link that another
	// node changed when that node's invalidation is lost (the cluster bus
	// is best effort; docs/adr/004-scale-out.md). Writes through this node
	// invalidate at once, and other nodes' writes within a second through
	// the bus.
	positiveTTL = 60 * time.Second
	// negativeTTL is how long an unknown slug answers 404 without a query:
	// short, because it is the bound when a create on another node is not
	// heard of.
	negativeTTL = 5 * time.Second
	// loadTimeout bounds one store lookup on a miss. The lookup does not use
	// the request's context: it is shared by every request waiting on that
	// slug, and the first one hanging up must not fail the others.
	loadTimeout = 5 * time.Second
	// unheardTTL is the positive TTL while this node is not known to hear
	// the other nodes' invalidations (PeerHealth): a change made elsewhere
	// is then seen within it, instead of within positiveTTL
	// (docs/adr/004-scale-out.md).
	unheardTTL = time.Second
	// staleRetry spaces out the refreshes of a link served stale: after a
	// failed refresh the cached link is served as it is, and one request
	// per staleRetry starts a new refresh in the background, so that an
	// outage of the store costs no request a wait.
	staleRetry = time.Second
)

// PeerHealth is implemented by cluster buses (linkforge.Bus) that know
// whether this node currently hears the other nodes: Healthy reports
// whether its listener answered within the last few seconds. While it does
// not, the link cache revalidates its entries after unheardTTL, since an
// invalidation sent by another node may be lost. A Config.Peers without it
// is taken as always healthy. Healthy is called on the redirect path: it
// must be cheap and must not allocate.
type PeerHealth interface {
	Healthy() bool
}

// linkCache maps slugs to links for the redirect path, with a negative
// cache for unknown slugs and singleflight for concurrent misses.
//
// It uses golang-lru's plain Cache and keeps expiry in the entries rather
// than golang-lru's expirable.LRU, because expirable starts a cleanup
// goroutine per cache that can never be stopped (a leak per Server in tests
// and a ticker per cache forever) and reads the wall clock, where entries here
// age by the Server's injected clock.
type linkCache struct {
	store linkforge.LinkStore
	now   func() time.Time
	// heard is the bus's health; nil: always healthy (one node, or the
	// bus cannot tell).
	heard PeerHealth
	pos   *lru.Cache[string, *cachedLink]
	neg   *lru.Cache[string, time.Time] // slug -> when the entry stops counting
	group singleflight.Group

	// mu orders fills against invalidations: a fill stores its result only
	// if no invalidation happened since its query started, so a lookup that
	// raced an update can never put the old link back for a whole TTL.
	mu    sync.Mutex
	epoch uint64 // incremented by every invalidation

	// Lookups by outcome, so operators can see the hit ratio and a flood
	// of unknown slugs: hit (a cached link), negative (a cached "unknown"),
	// miss (a store lookup, shared by concurrent misses), stale (a link past
	// its TTL served because the store could not be read).
	hits, negHits, misses, stale prometheus.Counter
}

// cachedLink is immutable once built, apart from retryAt, and shared by every
// request for its slug. The header values are built once so that a redirect
// sets them without allocating.
type cachedLink struct {
	link     linkforge.Link
	location []string // Location value for the target
	fallback []string // Location value for the fallback; nil without one
	// devices holds the Location values of the link's device URLs, nil
	// when it has none (the common case, which then never looks at the
	// User-Agent).
	devices *deviceLocations
	// protected: following the link asks for its password (password.go).
	protected bool
	loaded    time.Time
	until     time.Time
	// retryAt is set once a refresh of this entry has failed: the unix
	// nanoseconds before which no other refresh starts. 0: none failed.
	retryAt atomic.Int64
}

// newLinkCache returns a cache reading store. heard may be nil.
func newLinkCache(store linkforge.LinkStore, now func() time.Time, size int, reg prometheus.Registerer, heard PeerHealth) (*linkCache, error) {
	lookups, err := register(reg, prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "linkforge_link_cache_lookups_total",
		Help: "Redirect-path link cache lookups, by result: hit, negative (a cached unknown slug), miss (a store query) or stale (a link past its TTL served because the store could not be read).",
	}, []string{"result"}))
	if err != nil {
		return nil, fmt.Errorf("web: link cache metrics: %w", err)
	}
	pos, err := lru.New[string, *cachedLink](size)
	if err != nil {
		return nil, fmt.Errorf("web: link cache: %w", err)
	}
	neg, err := lru.New[string, time.Time](max(1, size/10))
	if err != nil {
		return nil, fmt.Errorf("web: negative link cache: %w", err)
	}
	return &linkCache{store: store, now: now, heard: heard, pos: pos, neg: neg,
		hits: lookups.WithLabelValues("hit"), negHits: lookups.WithLabelValues("negative"),
		misses: lookups.WithLabelValues("miss"), stale: lookups.WithLabelValues("stale")}, nil
}

// get returns the link of slug, or nil if no link has it. now is the
// request's time, already read by the caller.
func (c *linkCache) get(ctx context.Context, slug string, now time.Time) (*cachedLink, error) {
	if e, ok := c.pos.Get(slug); ok {
		if c.fresh(e, now) {
			c.hits.Inc()
			return e, nil
		}
		return c.revalidate(ctx, slug, e, now)
	}
	if until, ok := c.neg.Get(slug); ok && now.Before(until) {
		c.negHits.Inc()
		return nil, nil
	}
	c.misses.Inc()
	return c.load(ctx, slug)
}

// fresh reports whether e may be served without asking the store: younger
// than positiveTTL, and younger than unheardTTL unless this node hears the
// other nodes' invalidations.
func (c *linkCache) fresh(e *cachedLink, now time.Time) bool {
	if !now.Before(e.until) {
		return false
	}
	if c.heard == nil || now.Sub(e.loaded) < unheardTTL {
		return true
	}
	return c.heard.Healthy()
}

// revalidate refreshes e, the cached link of slug past its TTL. When the
// store cannot be read, e is served as it is (stale-if-error): a node keeps
// redirecting the links it has seen through a database outage, their expiry
// still checked on every request from the cached expires_at. Once a refresh
// has failed, requests no longer wait for one: they get e at once, and one
// of them per staleRetry starts a refresh in the background. An entry that
// an invalidation removed meanwhile is never served.
func (c *linkCache) revalidate(ctx context.Context, slug string, e *cachedLink, now time.Time) (*cachedLink, error) {
	if retry := e.retryAt.Load(); retry != 0 {
		if now.UnixNano() >= retry && e.retryAt.CompareAndSwap(retry, now.Add(staleRetry).UnixNano()) {
			// The result lands in the cache; nobody waits for it. The
			// channel is buffered, so the goroutine never blocks on it.
			c.group.DoChan(slug, func() (any, error) { return c.fill(ctx, slug) })
		}
		c.stale.Inc()
		return e, nil
	}
	c.misses.Inc()
	fresh, err := c.load(ctx, slug)
	if err == nil {
		return fresh, nil
	}
	e.retryAt.CompareAndSwap(0, now.Add(staleRetry).UnixNano())
	c.mu.Lock()
	cur, ok := c.pos.Peek(slug)
	c.mu.Unlock()
	if !ok || cur != e {
		return nil, err // invalidated (or replaced) meanwhile
	}
	c.stale.Inc()
	return e, nil
}

func (c *linkCache) load(ctx context.Context, slug string) (*cachedLink, error) {
	v, err, _ := c.group.Do(slug, func() (any, error) { return c.fill(ctx, slug) })
	if err != nil {
		return nil, err
	}
	return v.(*cachedLink), nil
}

// fill reads slug from the store and caches the result, unless an
// invalidation came meanwhile. It runs under the singleflight group.
func (c *linkCache) fill(ctx context.Context, slug string) (any, error) {
	c.mu.Lock()
	epoch := c.epoch
	c.mu.Unlock()

	lctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), loadTimeout)
	defer cancel()
	l, err := c.store.LinkBySlug(lctx, slug)
	if err != nil && linkforge.ErrorCode(err) != linkforge.ENotFound {
		return nil, fmt.Errorf("load link %q: %w", slug, err)
	}
	now := c.now()

	c.mu.Lock()
	defer c.mu.Unlock()
	if err != nil { // not found
		if c.epoch == epoch {
			c.pos.Remove(slug) // an expired entry being refreshed
			c.neg.Add(slug, now.Add(negativeTTL))
		}
		return (*cachedLink)(nil), nil
	}
	e := newCachedLink(l, now.Add(positiveTTL))
	e.loaded = now
	if c.epoch == epoch {
		c.pos.Add(slug, e)
		c.neg.Remove(slug)
	}
	return e, nil
}

func newCachedLink(l linkforge.Link, until time.Time) *cachedLink {
	e := &cachedLink{link: l, location: []string{linkforge.RedirectLocation(l.URL)}, until: until,
		protected: l.PasswordHash != ""}
	if l.FallbackURL != "" {
		e.fallback = []string{linkforge.RedirectLocation(l.FallbackURL)}
	}
	if !l.DeviceURLs.IsZero() {
		// An unset device URL is the link's url: the choice needs no
		// second test on the redirect path.
		loc := func(u string) []string {
			if u == "" {
				return e.location
			}
			return []string{linkforge.RedirectLocation(u)}
		}
		e.devices = &deviceLocations{ios: loc(l.DeviceURLs.IOS), android: loc(l.DeviceURLs.Android),
			desktop: loc(l.DeviceURLs.Desktop)}
	}
	return e
}

// deviceLocations are the Location values of a link's device URLs, each
// the link's own when that device URL is unset.
type deviceLocations struct {
	ios, android, desktop []string
}

// target returns the Location value for a request with that User-Agent:
// the device URL classify.DeviceTarget picks (the one rule the analytics
// use too), else the link's url. It does not allocate.
func (e *cachedLink) target(userAgent string) []string {
	if e.devices == nil {
		return e.location
	}
	device, _, os := classify.ParseUserAgent(userAgent)
	switch classify.DeviceTarget(os, device) {
	case classify.TargetIOS:
		return e.devices.ios
	case classify.TargetAndroid:
		return e.devices.android
	case classify.TargetDesktop:
		return e.devices.desktop
	}
	return e.location
}

// invalidate drops slug from both caches and makes fills that are in flight
// discard their result.
func (c *linkCache) invalidate(slug string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.epoch++
	c.pos.Remove(slug)
	c.neg.Remove(slug)
	// Requests arriving from now on start a fresh lookup instead of joining
	// one that may have read the old row.
	c.group.Forget(slug)
}

// purge drops every entry and makes every fill in flight discard its
// result. Requests that join a lookup already in flight may still get its
// result once; the next ones read the store.
func (c *linkCache) purge() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.epoch++
	c.pos.Purge()
	c.neg.Purge()
}
