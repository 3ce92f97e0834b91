// Package linkcache is the redirect path's memory of links and hosts: the
// links by (domain, slug), the unknown slugs, and the table of the
// tenants' domains by host, with their metrics. It has one invalidation
// surface, whoever calls it (a write through this node's API, an expiry
// alarm, another node's write heard on the bus): Invalidate for one link,
// InvalidateHost for a domain, InvalidateAll after the bus lost events.
// See docs/adr/007-link-cache.md.
package linkcache

import (
	"context"
	"fmt"
	"hash/maphash"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"errors"
	"log/slog"

	"github.com/hashicorp/golang-lru/v2/simplelru"
	"github.com/prometheus/client_golang/prometheus"
	"golang.org/x/sync/singleflight"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/classify"
	"github.com/linkforge/linkforge/internal/promreg"
	"github.com/linkforge/linkforge/rules"
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
// not, the cache revalidates its entries after unheardTTL, since an
// invalidation sent by another node may be lost. Without one
// (Config.PeerHealth nil) the peers are taken as always heard. Healthy is
// called on the redirect path: it must be cheap and must not allocate.
type PeerHealth interface {
	Healthy() bool
}

// Store is what the cache reads: a link by its domain and slug, whatever
// its tenant, and every domain for the host table.
type Store interface {
	LinkBySlug(ctx context.Context, domainID int64, slug string) (linkforge.Link, error)
	AllDomains(ctx context.Context) ([]linkforge.Domain, error)
}

// Defaults of Config's zero values.
const (
	DefaultSize  = 100_000 // links kept
	DefaultBytes = 256 << 20
)

// Config configures a Cache. Store is required.
type Config struct {
	Store Store
	// Size bounds the links kept (unknown slugs are kept apart, in at
	// most a tenth of that); 0: DefaultSize.
	Size int
	// Bytes bounds the bytes the entries take (Entry.bytes,
	// --link-cache-bytes); 0: DefaultBytes.
	Bytes int
	// SelfHosts are the server's own hosts (the public URL's), the first
	// of LoopHosts.
	SelfHosts []string
	// PeerHealth is the cluster bus's; nil: always healthy (one node).
	PeerHealth PeerHealth
	Registerer prometheus.Registerer // nil: none
	Logger     *slog.Logger          // nil: discard
	Now        func() time.Time      // nil: time.Now
}

// Key is what the cache is keyed by: a link's domain id
// (linkforge.PublicDomainID for the public host) and its slug. A struct of
// an integer and a string: building one from a request's host table entry
// and slug allocates nothing.
type Key struct {
	Domain int64
	Slug   string
}

// flightKey is k's singleflight key: the slug alone on the public host, so
// that a public miss allocates no more than it did; a miss on a domain
// builds one string.
func flightKey(k Key) string {
	if k.Domain == linkforge.PublicDomainID {
		return k.Slug
	}
	return strconv.FormatInt(k.Domain, 10) + "/" + k.Slug
}

// Sharding of the link cache. Every shard is an LRU of its own behind its
// own lock, picked by a hash of the slug, so that lookups of different
// slugs never wait for each other; and a hit takes only the shard's read
// lock (a Peek), so that lookups of one hot slug do not queue either. An
// entry's place in its LRU is refreshed at most once per promoteEvery (the
// only write a hit may make), which keeps a link that is clicked all the
// time at the front without taking a write lock per click.
const (
	// maxShards is the number of shards of a large cache: enough that
	// lookups on many cores rarely meet on one lock.
	maxShards = 64
	// minShardSize keeps a small cache (tests, tiny deployments) in few
	// shards, so that each still holds enough entries to be an LRU worth
	// the name.
	minShardSize = 1024
	// promoteEvery spaces out an entry's moves to the front of its LRU.
	promoteEvery = time.Second
)

// Cache maps slugs to links for the redirect path, with a negative
// cache for unknown slugs and singleflight for concurrent misses. It is
// sharded by slug (cacheShard); see ADR 007.
//
// It uses golang-lru's simplelru under its own locks and keeps expiry in
// the entries rather than golang-lru's expirable.LRU, because expirable
// starts a cleanup goroutine per cache that can never be stopped (a leak
// per Server in tests and a ticker per cache forever) and reads the wall
// clock, where entries here age by the Server's injected clock.
type Cache struct {
	store  Store
	now    func() time.Time
	logger *slog.Logger
	// heard is the bus's health; nil: always healthy (one node, or the
	// bus cannot tell).
	heard  PeerHealth
	seed   maphash.Seed
	shards []cacheShard // a power of two of them
	// shardSize is the capacity of each shard's positive LRU, and
	// shardBytes the bytes its entries may take (Entry.bytes): a
	// link with much routing takes a few hundred kilobytes, so the bytes
	// bound the memory where the count alone could not (ADR 020).
	shardSize  int
	shardBytes int
	group      singleflight.Group

	// Lookups by outcome, so operators can see the hit ratio and a flood
	// of unknown slugs (cacheLookups).
	lookups *cacheLookups
	// bytesMetric is linkforge_link_cache_bytes.
	bytesMetric prometheus.GaugeFunc

	// The host table (hosts.go): the current snapshot, the one background
	// reload at a time, and the order of reloads (an older read never
	// replaces a newer one).
	hosts        atomic.Pointer[hostSnapshot]
	hostsLoading atomic.Bool
	hostsMu      sync.Mutex
	selfHosts    []string
}

// cacheShard is one slice of the cache: the slugs whose hash lands here.
type cacheShard struct {
	// mu guards both LRUs, and orders fills against invalidations: a fill
	// stores its result only if no invalidation of this shard happened
	// since its query started, so a lookup that raced an update can never
	// put the old link back for a whole TTL. Hits take it for reading.
	mu    sync.RWMutex
	epoch uint64 // incremented by every invalidation in the shard
	pos   *simplelru.LRU[Key, *Entry]
	neg   *simplelru.LRU[Key, time.Time] // key -> when the entry stops counting
	// bytes is what pos's entries take (Entry.bytes), kept by add
	// and by pos's eviction callback, which every removal runs.
	bytes int
	// Keeps two shards' locks off one cache line.
	_ [64]byte
}

// Entry is immutable once built, apart from retryAt and promoted, and
// shared by every request for its slug. The header values are built once
// so that a redirect sets them without allocating.
//
// It is kept small because a full cache keeps every entry after its links go
// quiet (stale-if-error): link carries only what the redirect path reads
// (ID, TenantID, Slug, ExpiresAt, ValidSince, MaxClicks, PasswordHash; not URL, Title,
// Tags or the times, whose targets are in location, fallback and devices),
// the entry's strings share one allocation (keyed below), and the Location
// value of the target lives in the entry itself. See ADR 007, "Memory".
type Entry struct {
	link linkforge.Link
	// key is the slug the entry is cached under; its bytes start the
	// allocation every string of the entry shares.
	key string
	// loc[:] is the Location value for the target: sliced when read
	// rather than kept as a field, which would cost the entry 24 bytes
	// and its size class.
	loc      [1]string
	fallback []string // Location value for the fallback; nil without one
	// devices holds the Location values of the link's device URLs, nil
	// when it has none (the common case, which then never looks at the
	// User-Agent).
	devices *deviceLocations
	// routes is the link's compiled routing (package rules), nil for a
	// link without routing fields: then the plain path above applies.
	routes *rules.Routes
	// loaded and until (unix nanoseconds): when the entry was read from
	// the store, and when it stops being fresh.
	loaded, until int64
	// retryAt is set once a refresh of this entry has failed: the unix
	// nanoseconds before which no other refresh starts. 0: none failed.
	retryAt atomic.Int64
	// promoted is when (unix nanoseconds) the entry was last moved to the
	// front of its LRU.
	promoted atomic.Int64
}

// New returns the cache of cfg.
func New(cfg Config) (*Cache, error) {
	if cfg.Store == nil {
		return nil, errors.New("linkcache: Config.Store is required")
	}
	size, maxBytes := cfg.Size, cfg.Bytes
	if size <= 0 {
		size = DefaultSize
	}
	if maxBytes <= 0 {
		maxBytes = DefaultBytes
	}
	now, logger, reg := cfg.Now, cfg.Logger, cfg.Registerer
	if now == nil {
		now = time.Now
	}
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	if reg == nil {
		reg = prometheus.NewRegistry()
	}
	c, err := newCache(cfg.Store, now, size, maxBytes, reg, cfg.PeerHealth)
	if err != nil {
		return nil, err
	}
	c.logger, c.selfHosts = logger, cfg.SelfHosts
	return c, nil
}

// SetPeerHealth sets the cluster bus's health, which the cache reads on
// every lookup of an entry older than unheardTTL. Called once, before the
// node serves: the bus is built after the cache, which its handler
// invalidates.
func (c *Cache) SetPeerHealth(h PeerHealth) { c.heard = h }

// newCache returns a cache of about size links and at most maxBytes
// bytes of entries (Entry.bytes) reading store. heard may be nil.
func newCache(store Store, now func() time.Time, size, maxBytes int, reg prometheus.Registerer, heard PeerHealth) (*Cache, error) {
	lookups, err := promreg.Register(reg, newCacheLookups())
	if err != nil {
		return nil, fmt.Errorf("linkcache: metrics: %w", err)
	}
	n := maxShards
	for n > 1 && size/n < minShardSize {
		n /= 2
	}
	// Rounded up: the shards together hold at least size links. The
	// bytes rounded down: together they take at most maxBytes.
	c := &Cache{store: store, now: now, heard: heard, seed: maphash.MakeSeed(),
		shards: make([]cacheShard, n), shardSize: (size + n - 1) / n, shardBytes: maxBytes / n, lookups: lookups}
	if c.bytesMetric, err = promreg.Register(reg, prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "linkforge_link_cache_bytes",
		Help: "Bytes the redirect-path link cache's entries take, as it accounts them (its bound is --link-cache-bytes).",
	}, func() float64 { return float64(c.bytes()) })); err != nil {
		return nil, fmt.Errorf("linkcache: metrics: %w", err)
	}
	for i := range c.shards {
		sh := &c.shards[i]
		if sh.pos, err = newShardLRU(sh, c.shardSize); err != nil {
			return nil, fmt.Errorf("linkcache: %w", err)
		}
		if sh.neg, err = simplelru.NewLRU[Key, time.Time](max(1, (size/10+n-1)/n), nil); err != nil {
			return nil, fmt.Errorf("linkcache: negative cache: %w", err)
		}
	}
	return c, nil
}

// newShardLRU returns an LRU of size entries for sh, whose evictions and
// removals take their entries' bytes off sh.bytes.
func newShardLRU(sh *cacheShard, size int) (*simplelru.LRU[Key, *Entry], error) {
	return simplelru.NewLRU(size, func(_ Key, e *Entry) { sh.bytes -= e.bytes() })
}

// add caches e in sh, then evicts the least recently used entries while sh
// takes more than maxBytes: all but e, at most (one link larger than a
// shard's share is still cached alone). sh.mu is held for writing.
func (sh *cacheShard) add(e *Entry, maxBytes int) {
	k := e.cacheKey()
	if old, ok := sh.pos.Peek(k); ok {
		sh.bytes -= old.bytes() // replaced by Add without the eviction callback
	}
	sh.pos.Add(k, e)
	sh.bytes += e.bytes()
	for sh.bytes > maxBytes && sh.pos.Len() > 1 {
		sh.pos.RemoveOldest()
	}
}

// bytes is what the cache's entries take, as accounted.
func (c *Cache) bytes() int {
	n := 0
	for i := range c.shards {
		sh := &c.shards[i]
		sh.mu.RLock()
		n += sh.bytes
		sh.mu.RUnlock()
	}
	return n
}

// shard returns k's shard and its index. The domain id is mixed into the
// slug's hash, so that one slug on many domains spreads over the shards.
func (c *Cache) shard(k Key) (*cacheShard, int) {
	h := maphash.String(c.seed, k.Slug) ^ (uint64(k.Domain) * 0x9e3779b97f4a7c15) //nolint:gosec // G115: a domain id is positive; only its bits are mixed
	i := int(h & uint64(len(c.shards)-1))                                         //nolint:gosec // G115: len(c.shards) is a power of two >= 1, and the masked value is below it
	return &c.shards[i], i
}

// Get returns the link of k, or nil if no link has it. now is the
// request's time, already read by the caller. The entry is shared by
// every request for k: it must not be modified.
func (c *Cache) Get(ctx context.Context, k Key, now time.Time) (*Entry, error) {
	sh, i := c.shard(k)
	sh.mu.RLock()
	e, ok := sh.pos.Peek(k)
	var until time.Time
	var neg bool
	if !ok {
		until, neg = sh.neg.Peek(k)
	}
	sh.mu.RUnlock()
	if ok {
		c.promote(sh, k, e, now)
		if c.fresh(e, now) {
			c.lookups.add(i, lookupHit)
			return e, nil
		}
		return c.revalidate(ctx, k, e, now)
	}
	if neg && now.Before(until) {
		c.lookups.add(i, lookupNegative)
		return nil, nil
	}
	c.lookups.add(i, lookupMiss)
	return c.load(ctx, k)
}

// promote moves e to the front of its shard's LRU if it has not been moved
// there for promoteEvery: once per second per entry at most, whatever its
// click rate. One request wins the right to do it; the others go on.
func (c *Cache) promote(sh *cacheShard, k Key, e *Entry, now time.Time) {
	last := e.promoted.Load()
	t := now.UnixNano()
	if t-last < int64(promoteEvery) || !e.promoted.CompareAndSwap(last, t) {
		return
	}
	sh.mu.Lock()
	// Only the entry that was read: an invalidation may have removed it
	// meanwhile, and a fill replaced it with a newer one (itself at the
	// front already).
	if cur, ok := sh.pos.Peek(k); ok && cur == e {
		sh.pos.Get(k)
	}
	sh.mu.Unlock()
}

// fresh reports whether e may be served without asking the store: younger
// than positiveTTL, and younger than unheardTTL unless this node hears the
// other nodes' invalidations.
func (c *Cache) fresh(e *Entry, now time.Time) bool {
	t := now.UnixNano()
	if t >= e.until {
		return false
	}
	if c.heard == nil || t-e.loaded < int64(unheardTTL) {
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
func (c *Cache) revalidate(ctx context.Context, k Key, e *Entry, now time.Time) (*Entry, error) {
	sh, i := c.shard(k)
	if retry := e.retryAt.Load(); retry != 0 {
		if now.UnixNano() >= retry && e.retryAt.CompareAndSwap(retry, now.Add(staleRetry).UnixNano()) {
			// The result lands in the cache; nobody waits for it. The
			// channel is buffered, so the goroutine never blocks on it.
			c.group.DoChan(flightKey(k), func() (any, error) { return c.fill(ctx, k) })
		}
		c.lookups.add(i, lookupStale)
		return e, nil
	}
	c.lookups.add(i, lookupMiss)
	fresh, err := c.load(ctx, k)
	if err == nil {
		return fresh, nil
	}
	e.retryAt.CompareAndSwap(0, now.Add(staleRetry).UnixNano())
	sh.mu.RLock()
	cur, ok := sh.pos.Peek(k)
	sh.mu.RUnlock()
	if !ok || cur != e {
		return nil, err // invalidated (or replaced) meanwhile
	}
	c.lookups.add(i, lookupStale)
	return e, nil
}

func (c *Cache) load(ctx context.Context, k Key) (*Entry, error) {
	v, err, _ := c.group.Do(flightKey(k), func() (any, error) { return c.fill(ctx, k) })
	if err != nil {
		return nil, err
	}
	return v.(*Entry), nil
}

// fill reads k from the store and caches the result, unless an
// invalidation came meanwhile. It runs under the singleflight group.
func (c *Cache) fill(ctx context.Context, k Key) (any, error) {
	slug := k.Slug
	sh, _ := c.shard(k)
	sh.mu.RLock()
	epoch := sh.epoch
	sh.mu.RUnlock()

	lctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), loadTimeout)
	defer cancel()
	l, err := c.store.LinkBySlug(lctx, k.Domain, slug)
	if err != nil && linkforge.ErrorCode(err) != linkforge.ENotFound {
		return nil, fmt.Errorf("load link %q: %w", slug, err)
	}
	now := c.now()

	sh.mu.Lock()
	defer sh.mu.Unlock()
	if err != nil { // not found
		if sh.epoch == epoch {
			sh.pos.Remove(k) // an expired entry being refreshed
			// A copy: slug may point into the request's memory.
			sh.neg.Add(Key{k.Domain, strings.Clone(slug)}, now.Add(negativeTTL))
		}
		return (*Entry)(nil), nil
	}
	e := newCachedLink(slug, l, now, now.Add(positiveTTL))
	e.promoted.Store(now.UnixNano())
	if sh.epoch == epoch {
		sh.add(e, c.shardBytes)
		sh.neg.Remove(k)
	}
	return e, nil
}

// newCachedLink builds the entry of l, cached under key (the slug it was
// looked up by), read from the store at loaded and fresh until until.
func newCachedLink(key string, l linkforge.Link, loaded, until time.Time) *Entry {
	var fallback string
	if l.FallbackURL != "" {
		fallback = linkforge.RedirectLocation(l.FallbackURL)
	}
	// The link's UTM parameters are written into its targets' Location
	// values here, once per load, not per redirect (the fallback is no
	// campaign's target and has none).
	utm := l.UTMs()
	e := buildCachedLink(key, l, linkforge.RedirectLocation(linkforge.AppendUTM(l.URL, utm)), fallback)
	e.loaded, e.until = loaded.UnixNano(), until.UnixNano()
	e.routes = rules.Compile(&l)
	if !l.DeviceURLs.IsZero() {
		// An unset device URL is the link's url: the choice needs no
		// second test on the redirect path.
		loc := func(u string) []string {
			if u == "" {
				return e.loc[:]
			}
			return []string{linkforge.RedirectLocation(linkforge.AppendUTM(u, utm))}
		}
		e.devices = &deviceLocations{ios: loc(l.DeviceURLs.IOS), android: loc(l.DeviceURLs.Android),
			desktop: loc(l.DeviceURLs.Desktop)}
	}
	return e
}

// buildCachedLink returns an entry holding what the redirect path reads of
// l, with key, location, fallback and l's slug and password hash copied into
// one new allocation, so that the entry points into nothing else (not the
// request that missed, not the store's row buffers) and costs two objects:
// itself and its strings. The times, the devices and the atomics are left
// to the caller.
func buildCachedLink(key string, l linkforge.Link, location, fallback string) *Entry {
	var b strings.Builder
	b.Grow(stringsLen(key, &l, location, fallback))
	writeStrings(&b, key, &l, location, fallback)
	e := &Entry{}
	e.init(key, &l, location, fallback, b.String())
	return e
}

// stringsLen is the length of what writeStrings writes.
func stringsLen(key string, l *linkforge.Link, location, fallback string) int {
	n := len(key) + len(location) + len(fallback) + len(l.PasswordHash)
	if l.Slug != key {
		n += len(l.Slug)
	}
	return n
}

// writeStrings writes the strings of an entry, in the order init reads
// them back.
func writeStrings(b *strings.Builder, key string, l *linkforge.Link, location, fallback string) {
	b.WriteString(key)
	b.WriteString(location)
	b.WriteString(fallback)
	b.WriteString(l.PasswordHash)
	if l.Slug != key {
		b.WriteString(l.Slug)
	}
}

// init sets e's strings and link from all, which holds what writeStrings
// wrote for the same arguments (and maybe more after it).
func (e *Entry) init(key string, l *linkforge.Link, location, fallback, all string) {
	next := func(size int) string {
		s := all[:size]
		all = all[size:]
		return s
	}
	e.key = next(len(key))
	e.loc[0] = next(len(location))
	if fallback != "" {
		e.fallback = []string{next(len(fallback))}
	}
	e.link = linkforge.Link{ID: l.ID, TenantID: l.TenantID, Slug: e.key, ExpiresAt: l.ExpiresAt,
		MaxClicks: l.MaxClicks, PasswordHash: next(len(l.PasswordHash)), DomainID: l.DomainID,
		Disabled: l.Disabled, TenantSuspended: l.TenantSuspended, ValidSince: l.ValidSince}
	if l.BlockedReason != "" {
		// The redirect needs that the link is blocked, not why: a shared
		// constant, so that the entry keeps no copy of the reason.
		e.link.BlockedReason = blockedMark
	}
	if l.UnsafeReason != "" {
		// Likewise: the interstitial names the target's host, not why.
		e.link.UnsafeReason = unsafeMark
	}
	if l.Slug != key {
		e.link.Slug = next(len(l.Slug))
	}
}

// blockedMark is the BlockedReason of a blocked link's entry.
const blockedMark = "blocked"

// unsafeMark is the UnsafeReason of an unsafe link's entry.
const unsafeMark = "unsafe"

// entryOverhead is what an entry costs beyond its own struct and what it
// points to: its element in the LRU's list and its slot in the LRU's map.
const entryOverhead = 160

// bytes estimates the memory e keeps: itself, its strings, its device
// targets and its compiled routing, with its place in the LRU. Computed,
// not stored: the entry stays in its size class, and the same entry gives
// the same answer when it is added and when it is evicted.
func (e *Entry) bytes() int {
	n := int(unsafe.Sizeof(*e)) + entryOverhead + stringsLen(e.key, &e.link, e.loc[0], e.fallbackOf()) +
		e.routes.Bytes()
	if e.fallback != nil {
		n += int(unsafe.Sizeof(""))
	}
	if e.link.ExpiresAt != nil {
		n += int(unsafe.Sizeof(time.Time{}))
	}
	if e.link.MaxClicks != nil {
		n += int(unsafe.Sizeof(int64(0)))
	}
	if e.link.ValidSince != nil {
		n += int(unsafe.Sizeof(time.Time{}))
	}
	if d := e.devices; d != nil {
		n += int(unsafe.Sizeof(*d))
		for _, l := range [][]string{d.ios, d.android, d.desktop} {
			if &l[0] != &e.loc[0] {
				n += int(unsafe.Sizeof("")) + len(l[0])
			}
		}
	}
	return n
}

// Key is the key e is cached under: its link's domain, and the slug
// it was looked up by.
func (e *Entry) cacheKey() Key { return Key{e.link.DomainID, e.key} }

// protected reports whether following the link asks for its password
// (redirect/password.go). A method, not a field: the entry stays in its size class
// (384 bytes, ADR 007 "Memory") with the link's DomainID.
func (e *Entry) protected() bool { return e.link.PasswordHash != "" }

// fallbackOf returns e's fallback Location value, "" without one.
func (e *Entry) fallbackOf() string {
	if e.fallback == nil {
		return ""
	}
	return e.fallback[0]
}

// compactEntries returns copies of entries (see Cache.compact) in two
// allocations, one for the entries and one for their strings, each made
// for them alone: so the copies share no span with anything else, however
// fragmented the heap is when they are made. The two stay allocated while
// any of the copies is in use: at most the size of the cache at the time
// of the copy, and less as its entries are refreshed or evicted.
func compactEntries(entries []*Entry) []*Entry {
	n := 0
	for _, e := range entries {
		n += stringsLen(e.key, &e.link, e.loc[0], e.fallbackOf())
	}
	var b strings.Builder
	b.Grow(n)
	for _, e := range entries {
		writeStrings(&b, e.key, &e.link, e.loc[0], e.fallbackOf())
	}
	all := b.String()
	slab := make([]Entry, len(entries))
	out := make([]*Entry, len(entries))
	for i, e := range entries {
		c := &slab[i]
		fallback := e.fallbackOf()
		size := stringsLen(e.key, &e.link, e.loc[0], fallback)
		c.init(e.key, &e.link, e.loc[0], fallback, all[:size])
		all = all[size:]
		if e.link.ExpiresAt != nil {
			t := *e.link.ExpiresAt
			c.link.ExpiresAt = &t
		}
		if e.link.MaxClicks != nil {
			m := *e.link.MaxClicks
			c.link.MaxClicks = &m
		}
		if e.devices != nil {
			loc := func(l []string) []string {
				if &l[0] == &e.loc[0] {
					return c.loc[:]
				}
				return []string{strings.Clone(l[0])}
			}
			c.devices = &deviceLocations{ios: loc(e.devices.ios), android: loc(e.devices.android),
				desktop: loc(e.devices.desktop)}
		}
		c.loaded, c.until = e.loaded, e.until
		c.routes = e.routes // immutable, shared
		c.retryAt.Store(e.retryAt.Load())
		c.promoted.Store(e.promoted.Load())
		out[i] = c
	}
	return out
}

// deviceLocations are the Location values of a link's device URLs, each
// the link's own when that device URL is unset.
type deviceLocations struct {
	ios, android, desktop []string
}

// target returns the Location value for a request with that User-Agent:
// the device URL classify.DeviceTarget picks (the one rule the analytics
// use too), else the link's url. It does not allocate. The agent is looked
// up (classify.LookupAgent, memoized) only for a link with device URLs.
func (e *Entry) target(userAgent string) []string {
	if e.devices == nil {
		return e.loc[:]
	}
	return e.agentTarget(classify.LookupAgent(userAgent))
}

// agentTarget is target for an agent the caller has looked up already.
func (e *Entry) agentTarget(agent classify.Agent) []string {
	if e.devices == nil {
		return e.loc[:]
	}
	switch agent.DeviceTarget() {
	case classify.TargetIOS:
		return e.devices.ios
	case classify.TargetAndroid:
		return e.devices.android
	case classify.TargetDesktop:
		return e.devices.desktop
	}
	return e.loc[:]
}

// Invalidate drops slug on the domain domainID (linkforge.PublicDomainID:
// the public host) from the cache, as a link and as unknown, and makes
// the lookups in flight discard their result: a write or an expiry of
// that link, here or on another node.
func (c *Cache) Invalidate(domainID int64, slug string) {
	k := Key{domainID, slug}
	sh, _ := c.shard(k)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	sh.epoch++
	sh.pos.Remove(k)
	sh.neg.Remove(k)
	// Requests arriving from now on start a fresh lookup instead of joining
	// one that may have read the old row. Under the shard's lock, so that
	// no fill of this shard can start between the epoch and the Forget.
	c.group.Forget(flightKey(k))
}

// InvalidateAll drops every entry and makes every lookup in flight
// discard its result: the cluster bus listens again after a lost
// connection, and the other nodes' invalidations sent meanwhile are lost;
// emptying the cache costs one lookup per hot link instead of up to a TTL
// of stale redirects. Requests that join a lookup already in flight may
// still get its result once; the next ones read the store.
func (c *Cache) InvalidateAll() {
	for i := range c.shards {
		sh := &c.shards[i]
		sh.mu.Lock()
		sh.epoch++
		sh.pos.Purge()
		sh.neg.Purge()
		sh.mu.Unlock()
	}
}

// compactKeep is how recently an entry must have been looked up to survive
// a compaction: twice the positive TTL. An entry idle for longer would cost
// a store query at its next lookup anyway; keeping it only insures its link
// against a database outage (stale-if-error), and a compaction happens only
// after a burst (cmd/linkforge, memory.go), whose one-off links are what it
// then drops. See ADR 007, "Memory".
const CompactKeep = 2 * positiveTTL

// Compact copies into new memory, in the same LRU order, the positive
// entries looked up since idleBefore (or being served stale: their store is
// down), drops the others, and returns how many it kept and dropped.
//
// Why: after a burst of one-off clicks the cache holds up to its size in
// entries of links that will not be clicked again soon, allocated among the
// burst's link actors and journal rows: once those are freed, each entry
// keeps the spans its objects sit in, and 100,000 entries (76 MB of objects
// before they were slimmed) kept about 250 MB of spans in use, which the Go
// runtime cannot return to the kernel (ADR 007, "Memory"). The copies are
// made in allocations of their own (compactEntries), so the old spans
// become free. Called by the server's
// memory return (Server.CompactCache), rarely: it allocates the kept
// entries anew, and holds each shard's write lock for the copy of that
// shard (at most 1,600 entries of a 100,000-entry cache).
//
// A request holding an old entry keeps using it; one that loses a refresh
// race against the copy sees its entry replaced and, the store being down,
// answers 503 once instead of serving it stale (revalidate).
func (c *Cache) Compact(idleBefore time.Time) (kept, dropped int) {
	cutoff := idleBefore.UnixNano()
	for i := range c.shards {
		sh := &c.shards[i]
		sh.mu.Lock()
		fresh, err := newShardLRU(sh, c.shardSize)
		if err != nil { // only for a size below 1, refused by newCache
			sh.mu.Unlock()
			panic(err)
		}
		all := sh.pos.Values() // oldest first: Add keeps the order
		keep := all[:0]
		for _, e := range all {
			if e.promoted.Load() >= cutoff || e.retryAt.Load() != 0 {
				keep = append(keep, e)
			}
		}
		// The old LRU is dropped without its callbacks: the bytes are
		// those of the copies.
		sh.bytes = 0
		for _, e := range compactEntries(keep) {
			fresh.Add(e.cacheKey(), e)
			sh.bytes += e.bytes()
		}
		kept += len(keep)
		dropped += len(all) - len(keep)
		sh.pos = fresh
		sh.mu.Unlock()
	}
	return kept, dropped
}

// The results of a lookup, linkforge_link_cache_lookups_total's label
// values.
const (
	lookupHit      = iota // a cached link
	lookupNegative        // a cached "unknown"
	lookupMiss            // a store query, shared by concurrent misses
	lookupStale           // a link past its TTL served because the store could not be read
	lookupResults
)

var lookupLabels = [lookupResults]string{"hit", "negative", "miss", "stale"}

// cacheLookups is linkforge_link_cache_lookups_total{result}. It counts
// in stripes, one per shard, summed when scraped: a Prometheus counter is
// one atomic word, which every core would write on every hit.
type cacheLookups struct {
	desc    *prometheus.Desc
	stripes [maxShards]lookupStripe
}

type lookupStripe struct {
	n [lookupResults]atomic.Uint64
	_ [64 - lookupResults*8%64]byte
}

func newCacheLookups() *cacheLookups {
	return &cacheLookups{desc: prometheus.NewDesc("linkforge_link_cache_lookups_total",
		"Redirect-path link cache lookups, by result: hit, negative (a cached unknown slug), miss (a store query) or stale (a link past its TTL served because the store could not be read).",
		[]string{"result"}, nil)}
}

// add counts one lookup of shard i.
func (l *cacheLookups) add(i, result int) { l.stripes[i].n[result].Add(1) }

// Describe implements prometheus.Collector.
func (l *cacheLookups) Describe(ch chan<- *prometheus.Desc) { ch <- l.desc }

// Collect implements prometheus.Collector.
func (l *cacheLookups) Collect(ch chan<- prometheus.Metric) {
	for r, label := range lookupLabels {
		var sum uint64
		for i := range l.stripes {
			sum += l.stripes[i].n[r].Load()
		}
		ch <- prometheus.MustNewConstMetric(l.desc, prometheus.CounterValue, float64(sum), label)
	}
}

// Link is the entry's link: only what the redirect path reads (see
// Entry). It points into the entry: it must not be modified.
func (e *Entry) Link() *linkforge.Link { return &e.link }

// Routes is the link's compiled routing, nil for a link without routing
// fields.
func (e *Entry) Routes() *rules.Routes { return e.routes }

// Protected reports whether following the link asks for its password.
func (e *Entry) Protected() bool { return e.protected() }

// Fallback is the Location value of the link's fallback URL, nil without
// one.
func (e *Entry) Fallback() []string { return e.fallback }

// Target returns the Location value for a request with that User-Agent
// (see target).
func (e *Entry) Target(userAgent string) []string { return e.target(userAgent) }

// AgentTarget is Target for an agent the caller has looked up already.
func (e *Entry) AgentTarget(agent classify.Agent) []string { return e.agentTarget(agent) }

// Location is the Location value of the link's own target (not the
// device, routed or fallback ones).
func (e *Entry) Location() []string { return e.loc[:] }
