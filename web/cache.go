package web

import (
	"context"
	"fmt"
	"sync"
	"time"

	lru "github.com/hashicorp/golang-lru/v2"
	"github.com/prometheus/client_golang/prometheus"
	"golang.org/x/sync/singleflight"

	"github.com/linkforge/linkforge"
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
)

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
	// miss (a store lookup, shared by concurrent misses).
	hits, negHits, misses prometheus.Counter
}

// cachedLink is immutable once built and shared by every request for its
// slug. The header values are built once so that a redirect sets them
// without allocating.
type cachedLink struct {
	link     linkforge.Link
	location []string // Location value for the target
	fallback []string // Location value for the fallback; nil without one
	until    time.Time
}

func newLinkCache(store linkforge.LinkStore, now func() time.Time, size int, reg prometheus.Registerer) (*linkCache, error) {
	lookups, err := register(reg, prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "linkforge_link_cache_lookups_total",
		Help: "Redirect-path link cache lookups, by result: hit, negative (a cached unknown slug) or miss (a store query).",
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
	return &linkCache{store: store, now: now, pos: pos, neg: neg,
		hits: lookups.WithLabelValues("hit"), negHits: lookups.WithLabelValues("negative"),
		misses: lookups.WithLabelValues("miss")}, nil
}

// get returns the link of slug, or nil if no link has it. now is the
// request's time, already read by the caller.
func (c *linkCache) get(ctx context.Context, slug string, now time.Time) (*cachedLink, error) {
	if e, ok := c.pos.Get(slug); ok && now.Before(e.until) {
		c.hits.Inc()
		return e, nil
	}
	if until, ok := c.neg.Get(slug); ok && now.Before(until) {
		c.negHits.Inc()
		return nil, nil
	}
	c.misses.Inc()
	return c.load(ctx, slug)
}

func (c *linkCache) load(ctx context.Context, slug string) (*cachedLink, error) {
	v, err, _ := c.group.Do(slug, func() (any, error) {
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
				c.neg.Add(slug, now.Add(negativeTTL))
			}
			return (*cachedLink)(nil), nil
		}
		e := newCachedLink(l, now.Add(positiveTTL))
		if c.epoch == epoch {
			c.pos.Add(slug, e)
			c.neg.Remove(slug)
		}
		return e, nil
	})
	if err != nil {
		return nil, err
	}
	return v.(*cachedLink), nil
}

func newCachedLink(l linkforge.Link, until time.Time) *cachedLink {
	e := &cachedLink{link: l, location: []string{linkforge.RedirectLocation(l.URL)}, until: until}
	if l.FallbackURL != "" {
		e.fallback = []string{linkforge.RedirectLocation(l.FallbackURL)}
	}
	return e
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
