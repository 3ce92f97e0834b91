package linkcache

import (
	"context"
	"fmt"
	"runtime"
	"testing"
	"time"
	"unsafe"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/internal/testdb"
)

// TestCacheEntryHoldsOnlyItsOwnMemory: an entry keeps what the redirect path
// reads, and its strings are copies in one allocation of its own: not the
// request's slug, not the store's row (which would keep those alive as long
// as the entry, and the spans they sit in).
func TestCacheEntryHoldsOnlyItsOwnMemory(t *testing.T) {
	st := testdb.SQLite(t)
	ctx := t.Context()
	tenant, err := st.EnsureTenant(ctx, "acme")
	if err != nil {
		t.Fatal(err)
	}
	exp := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	maxClicks := int64(7)
	in := linkforge.Link{TenantID: tenant.ID, Slug: "full", URL: "https://example.com/target",
		FallbackURL: "https://example.com/fallback", ExpiresAt: &exp, MaxClicks: &maxClicks,
		PasswordHash: "$argon2id$v=19$m=8,t=1,p=1$c2FsdHNhbHQ$aGFzaGhhc2g", Title: "A title",
		Tags: []string{"a"}, DeviceURLs: linkforge.DeviceURLs{IOS: "https://example.com/ios"}}
	created, err := st.CreateLink(ctx, in)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	c, err := newCache(st, func() time.Time { return now }, 100, DefaultBytes, prometheus.NewRegistry(), nil)
	if err != nil {
		t.Fatal(err)
	}
	slug := string([]byte("full")) // as if cut from a request line
	e, err := c.get(ctx, slug, now)
	if err != nil || e == nil {
		t.Fatalf("get: %v, %v", e, err)
	}
	want := linkforge.Link{ID: created.ID, TenantID: tenant.ID, Slug: "full", ExpiresAt: &exp,
		MaxClicks: &maxClicks, PasswordHash: in.PasswordHash}
	checkEntry(t, e, want, "https://example.com/target", "https://example.com/fallback", "https://example.com/ios")
	sh, _ := c.shard(Key{Slug: slug})
	keys := sh.pos.Keys()
	if len(keys) != 1 || unsafe.StringData(keys[0].Slug) != unsafe.StringData(e.key) || unsafe.StringData(e.key) == unsafe.StringData(slug) {
		t.Error("the LRU's key is not the entry's copy of the slug: it keeps the request's memory")
	}
	// Every string of the entry lies in one allocation.
	base := uintptr(unsafe.Pointer(unsafe.StringData(e.key)))
	for _, s := range []string{e.link.Slug, e.loc[0], e.fallback[0], e.link.PasswordHash} {
		p := uintptr(unsafe.Pointer(unsafe.StringData(s)))
		if p < base || p >= base+256 {
			t.Errorf("%q is not in the entry's string block", s)
		}
	}
	if e.loaded != now.UnixNano() || e.until != now.Add(positiveTTL).UnixNano() {
		t.Errorf("loaded, until = %d, %d; want %d, %d", e.loaded, e.until, now.UnixNano(), now.Add(positiveTTL).UnixNano())
	}
}

// checkEntry compares what the redirect path reads of e with want.
func checkEntry(t *testing.T, e *Entry, want linkforge.Link, location, fallback, ios string) {
	t.Helper()
	l := e.link
	if l.ID != want.ID || l.TenantID != want.TenantID || l.Slug != want.Slug || l.PasswordHash != want.PasswordHash ||
		(l.ExpiresAt == nil) != (want.ExpiresAt == nil) || (l.ExpiresAt != nil && !l.ExpiresAt.Equal(*want.ExpiresAt)) ||
		(l.MaxClicks == nil) != (want.MaxClicks == nil) || (l.MaxClicks != nil && *l.MaxClicks != *want.MaxClicks) {
		t.Errorf("cached link %+v, want %+v", l, want)
	}
	if l.URL != "" || l.Title != "" || l.Tags != nil || !l.CreatedAt.IsZero() {
		t.Errorf("cached link keeps fields the redirect does not read: %+v", l)
	}
	if e.protected() != (want.PasswordHash != "") {
		t.Errorf("protected = %v", e.protected())
	}
	if len(e.loc[:]) != 1 || e.loc[0] != location {
		t.Errorf("location %q, want %q", e.loc[:], location)
	}
	if (fallback == "") != (e.fallback == nil) || (fallback != "" && e.fallback[0] != fallback) {
		t.Errorf("fallback %q, want %q", e.fallback, fallback)
	}
	if ios == "any" { // checked by the caller
		return
	}
	if ios == "" {
		if e.devices != nil {
			t.Errorf("devices %+v, want none", e.devices)
		}
		return
	}
	if e.devices == nil || e.devices.ios[0] != ios || &e.devices.android[0] != &e.loc[0] || &e.devices.desktop[0] != &e.loc[0] {
		t.Errorf("devices %+v, want ios %q and the link's location for the others", e.devices, ios)
	}
}

// TestCacheCompactKeepsEntriesAndOrder: compact copies every entry into new
// memory with the same content, state and LRU order, and lookups then get
// the copies.
func TestCacheCompactKeepsEntriesAndOrder(t *testing.T) {
	st := testdb.SQLite(t)
	ctx := t.Context()
	tenant, err := st.EnsureTenant(ctx, "acme")
	if err != nil {
		t.Fatal(err)
	}
	exp := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	maxClicks := int64(3)
	links := []linkforge.Link{
		{Slug: "plain", URL: "https://example.com/plain"},
		{Slug: "limits", URL: "https://example.com/l", ExpiresAt: &exp, MaxClicks: &maxClicks, FallbackURL: "https://example.com/fb"},
		{Slug: "devices", URL: "https://example.com/d", DeviceURLs: linkforge.DeviceURLs{Android: "https://example.com/android"}},
		{Slug: "secret", URL: "https://example.com/s", PasswordHash: "$argon2id$v=19$m=8,t=1,p=1$c2FsdHNhbHQ$aGFzaGhhc2g"},
	}
	for i := range 40 {
		links = append(links, linkforge.Link{Slug: fmt.Sprintf("more-%02d", i), URL: fmt.Sprintf("https://example.com/%d", i)})
	}
	ids := map[string]int64{}
	for _, l := range links {
		l.TenantID, l.Tags = tenant.ID, []string{}
		created, err := st.CreateLink(ctx, l)
		if err != nil {
			t.Fatal(err)
		}
		ids[l.Slug] = created.ID
	}
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	clock := now
	c, err := newCache(st, func() time.Time { return clock }, 1000, DefaultBytes, prometheus.NewRegistry(), nil)
	if err != nil {
		t.Fatal(err)
	}
	old := map[string]*Entry{}
	for i, l := range links {
		clock = now.Add(time.Duration(i) * time.Second)
		e, err := c.get(ctx, l.Slug, clock)
		if err != nil || e == nil {
			t.Fatalf("get %s: %v, %v", l.Slug, e, err)
		}
		old[l.Slug] = e
	}
	old["limits"].retryAt.Store(12345) // state the copy must carry
	// "plain" moves to the front of its shard.
	if _, err := c.get(ctx, "plain", clock.Add(2*time.Second)); err != nil {
		t.Fatal(err)
	}
	order := func() [][]Key {
		var o [][]Key
		for i := range c.shards {
			o = append(o, c.shards[i].pos.Keys())
		}
		return o
	}
	before := order()

	if kept, dropped := c.Compact(time.Time{}); kept != len(links) || dropped != 0 {
		t.Fatalf("compact kept %d entries and dropped %d, want %d and 0", kept, dropped, len(links))
	}
	if after := order(); fmt.Sprint(after) != fmt.Sprint(before) {
		t.Errorf("LRU order after compact %v, want %v", after, before)
	}
	for _, l := range links {
		sh, _ := c.shard(Key{Slug: l.Slug})
		e, ok := sh.pos.Peek(Key{Slug: l.Slug})
		if !ok {
			t.Fatalf("%s not cached after compact", l.Slug)
		}
		o := old[l.Slug]
		if e == o {
			t.Errorf("%s: compact kept the old entry", l.Slug)
			continue
		}
		if unsafe.StringData(e.key) == unsafe.StringData(o.key) || unsafe.StringData(e.loc[0]) == unsafe.StringData(o.loc[0]) {
			t.Errorf("%s: the copy shares the old entry's strings", l.Slug)
		}
		if l.ExpiresAt != nil && e.link.ExpiresAt == o.link.ExpiresAt {
			t.Errorf("%s: the copy shares the old entry's expires_at", l.Slug)
		}
		want := linkforge.Link{ID: ids[l.Slug], TenantID: tenant.ID, Slug: l.Slug, ExpiresAt: l.ExpiresAt,
			MaxClicks: l.MaxClicks, PasswordHash: l.PasswordHash}
		var fallback, ios string
		if l.FallbackURL != "" {
			fallback = l.FallbackURL
		}
		if !l.DeviceURLs.IsZero() {
			ios = "any"
		}
		checkEntry(t, e, want, l.URL, fallback, ios)
		if l.Slug == "devices" && (e.devices == nil || e.devices.android[0] != "https://example.com/android" || &e.devices.ios[0] != &e.loc[0]) {
			t.Errorf("devices after compact: %+v", e.devices)
		}
		if e.loaded != o.loaded || e.until != o.until || e.retryAt.Load() != o.retryAt.Load() || e.promoted.Load() != o.promoted.Load() {
			t.Errorf("%s: times after compact %d %d %d %d, want %d %d %d %d", l.Slug, e.loaded, e.until, e.retryAt.Load(),
				e.promoted.Load(), o.loaded, o.until, o.retryAt.Load(), o.promoted.Load())
		}
		// At the entry's promotion time: the lookup does not promote it
		// again, which the cutoff below counts on.
		if got, err := c.get(ctx, l.Slug, time.Unix(0, e.promoted.Load())); err != nil || got != e {
			t.Errorf("get %s after compact: %p, %v; want the copy %p", l.Slug, got, err, e)
		}
	}

	// Entries not looked up since the cutoff go, but for those served
	// stale (their refresh failed: the store is down) and those looked up
	// at or after it: "plain" (looked up again last, at clock) and the
	// entries looked up from cutoff on.
	cutoff := now.Add(20 * time.Second)
	kept, dropped := c.Compact(cutoff)
	for i, l := range links {
		sh, _ := c.shard(Key{Slug: l.Slug})
		_, ok := sh.pos.Peek(Key{Slug: l.Slug})
		want := l.Slug == "plain" || l.Slug == "limits" || i >= 20
		if ok != want {
			t.Errorf("%s (looked up at +%ds) kept %v after compact(+20s), want %v", l.Slug, i, ok, want)
		}
	}
	if wantKept := 2 + len(links) - 20; kept != wantKept || dropped != len(links)-wantKept {
		t.Errorf("compact(+20s) kept %d and dropped %d, want %d and %d", kept, dropped, wantKept, len(links)-wantKept)
	}
}

// TestCacheCompactFreesBurstSpans: entries filled among a burst's garbage
// keep the spans they sit in once the garbage is collected; compact moves
// them into few spans, and the heap in use falls back near what the entries
// themselves take. Without compact (or with one that copies nothing) the
// spans stay in use.
func TestCacheCompactFreesBurstSpans(t *testing.T) {
	// Under -race each fill's SQLite read costs tens of milliseconds, and
	// 20,000 of them took minutes: the race build checks the compact at the
	// -short size, and .ci/run runs the full size without -race, as it does
	// the other memory bounds. The bound holds with the same margin at
	// either size under -race: 742 bytes per entry at 5,000, 750 at 10,000.
	n := 20_000
	if testing.Short() || raceEnabled {
		n = 5_000
	}
	st := testdb.SQLite(t)
	ctx := context.Background()
	tenant, err := st.EnsureTenant(ctx, "burst")
	if err != nil {
		t.Fatal(err)
	}
	batch := make([]linkforge.Link, 0, 1000)
	for i := range n {
		batch = append(batch, linkforge.Link{TenantID: tenant.ID, Slug: fmt.Sprintf("burst-%06d", i),
			URL: fmt.Sprintf("https://example.com/landing/%d?utm_source=test", i), Tags: []string{}})
		if len(batch) == cap(batch) {
			if err := st.(interface {
				ImportLinks(context.Context, []linkforge.Link) error
			}).ImportLinks(ctx, batch); err != nil {
				t.Fatal(err)
			}
			batch = batch[:0]
		}
	}
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	// Twice n: the shards' LRUs (n/64 each) would each evict some.
	c, err := newCache(st, func() time.Time { return now }, 2*n, DefaultBytes, prometheus.NewRegistry(), nil)
	if err != nil {
		t.Fatal(err)
	}
	heapStart := heapInuse()
	// Each fill beside objects that live until the burst is over, of the
	// entries' own sizes: in a server, the link's actor and journal rows,
	// freed when the actor is evicted a minute or more later.
	// With pointers, as those are: the runtime keeps objects with and
	// without pointers in separate spans.
	var others [][]*byte
	for i := range n {
		entry := int(unsafe.Sizeof(Entry{})) // in the entries' size class, whatever the entry's fields
		for _, size := range []int{16, 48, 80, 80, 96, entry, entry} {
			others = append(others, make([]*byte, size/8))
		}
		if e, err := c.get(ctx, fmt.Sprintf("burst-%06d", i), now); err != nil || e == nil {
			t.Fatalf("fill %d: %v, %v", i, e, err)
		}
	}
	heapBurst := heapInuse()
	runtime.KeepAlive(others)
	heapFilled := heapInuse()
	if kept, _ := c.Compact(now); kept != n {
		t.Fatalf("compact kept %d entries, want %d", kept, n)
	}
	heapCompacted := heapInuse()
	perEntry := float64(heapCompacted-heapStart) / float64(n)
	t.Logf("%d entries: heap in use %.1f MiB at start, %.1f MiB at the end of the burst, %.1f MiB after it (%.0f bytes per entry), %.1f MiB compacted (%.0f bytes per entry)",
		n, mib(heapStart), mib(heapBurst), mib(heapFilled), float64(heapFilled-heapStart)/float64(n), mib(heapCompacted), perEntry)
	// What an entry takes: itself (about 400 bytes), its strings, its LRU
	// element and map slot, with spans not quite full.
	if perEntry > maxEntryBytes {
		t.Errorf("heap in use after compact %.0f bytes per entry, want at most %d", perEntry, maxEntryBytes)
	}
	if heapFilled-heapStart < 2*(heapCompacted-heapStart) {
		t.Errorf("heap in use %.1f MiB above the start before compact, %.1f MiB after: want compact to free at least half",
			mib(heapFilled-heapStart), mib(heapCompacted-heapStart))
	}
	runtime.KeepAlive(c)
}

// maxEntryBytes bounds the heap a compacted cache entry keeps in use:
// measured 620 to 680 bytes; 906 with copies made one by one, which fill
// the holes of the fragmented spans.
const maxEntryBytes = 800

func heapInuse() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapInuse
}

func mib(b uint64) float64 { return float64(b) / (1 << 20) }
