package classify

import (
	"hash/maphash"
	"strings"
	"sync/atomic"
)

// Agent is what the click path needs to know about one User-Agent header:
// its device class, browser and OS (as ParseUserAgent returns them),
// whether it is a link-preview fetcher or crawler (IsPreviewAgent) and
// whether it is a program's rather than a browser's (IsAutomatedAgent).
type Agent struct {
	Device, Browser, OS string
	Preview             bool
	Automated           bool
}

// DeviceTarget returns which of a link's device_urls keys applies to this
// agent: see the package function DeviceTarget.
func (a Agent) DeviceTarget() string { return DeviceTarget(a.OS, a.Device) }

// ParseAgent classifies userAgent from scratch: ParseUserAgent,
// IsPreviewAgent and IsAutomatedAgent. LookupAgent gives the same answer
// from its memo.
func ParseAgent(userAgent string) Agent {
	var a Agent
	a.Device, a.Browser, a.OS = ParseUserAgent(userAgent)
	a.Preview = IsPreviewAgent(userAgent)
	a.Automated = IsAutomatedAgent(userAgent)
	return a
}

// LookupAgent returns ParseAgent(userAgent), from a memo of recent agents
// when it can. It is what the redirect path asks: real traffic repeats a
// small set of User-Agent strings, and parsing one (the go-useragent trie
// walk, the mapping, the preview scan) costs 0.5 to 1 µs a click where a
// hit costs one hash of the header and one string comparison (see
// BenchmarkLookupAgent). A hit does not allocate and writes no shared
// memory (at most one flag, once), so it does not contend across cores.
//
// The memo is bounded (MemoAgents entries, keys of at most MaxMemoAgentLen
// bytes: a longer header is parsed every time) and resists a flood of
// unique agents, as a bot sending random headers produces. An agent takes a
// slot only when it misses again before two other agents missed in its
// bucket, so a header seen once costs a parse, as without the memo, and
// neither allocates nor evicts anything. And an entry that was read since
// the last attempt to replace it keeps its slot (a clock bit), so a hot
// agent stays as long as it is clicked between any two such attempts in
// its bucket, whatever a bot sends.
func LookupAgent(userAgent string) Agent { return agentMemo.lookup(userAgent) }

const (
	// MaxMemoAgentLen is the longest User-Agent the memo keeps. Browsers
	// send 100 to 250 bytes, in-app browsers up to about 350; anything
	// longer is rare enough to parse each time, and the bound caps the
	// memo's memory at about MemoAgents x 600 bytes (2.5 MB).
	MaxMemoAgentLen = 512
	// MemoAgents is the number of agents the memo holds: memoBuckets
	// buckets of memoWays entries each.
	MemoAgents  = memoBuckets * memoWays
	memoBuckets = 2048 // a power of two
	memoWays    = 2
)

var agentMemo = newMemo()

// memo is a fixed-size, two-way set-associative table of immutable entries
// reached through atomic pointers: readers take no lock, and a writer
// replaces a whole entry, so a reader sees either the old one or the new
// one. Chosen over golang-lru (a mutex taken by every Get, and a list move
// that writes on every hit) and over a capped sync.Map (no eviction
// policy, and its Store allocates): see BenchmarkMemoChoices.
type memo struct {
	seed    maphash.Seed
	buckets [memoBuckets][memoWays]atomic.Pointer[memoEntry]
	// pending holds, per bucket, the hashes of the last two agents that
	// missed there and were not admitted, newest first: the doorkeeper.
	// Two, so that two agents that share a bucket and alternate still get
	// in. Apart from buckets, so that misses do not write the cache lines
	// hits read.
	pending [memoBuckets][2]atomic.Uint64
}

type memoEntry struct {
	key   string // a copy of the header: an entry keeps no request alive
	agent Agent
	// used is set by a hit and cleared by an attempt to admit another
	// agent into the bucket (a clock bit). A hit writes it only when it is
	// clear, so hot entries are read-only between such attempts.
	used atomic.Bool
}

func newMemo() *memo { return &memo{seed: maphash.MakeSeed()} }

func (m *memo) lookup(ua string) Agent {
	if ua == "" || len(ua) > MaxMemoAgentLen {
		return ParseAgent(ua)
	}
	h := maphash.String(m.seed, ua)
	b := h & (memoBuckets - 1)
	set := &m.buckets[b]
	for i := range set {
		if e := set[i].Load(); e != nil && e.key == ua {
			if !e.used.Load() {
				e.used.Store(true)
			}
			return e.agent
		}
	}
	a := ParseAgent(ua)
	m.admit(set, &m.pending[b], h, ua, a)
	return a
}

// admit decides whether ua, which just missed, takes a slot of its bucket.
func (m *memo) admit(set *[memoWays]atomic.Pointer[memoEntry], pending *[2]atomic.Uint64, h uint64, ua string, a Agent) {
	p0 := pending[0].Load()
	if p0 != h && pending[1].Load() != h {
		// First sighting (or two other agents missed here since): remember
		// the hash only. A header seen once never costs an entry. The two
		// stores are not one atomic step; a concurrent miss may lose its
		// place, which only delays its admission.
		pending[1].Store(p0)
		pending[0].Store(h)
		return
	}
	for i := range set {
		old := set[i].Load()
		if old != nil && old.used.Load() {
			continue
		}
		e := &memoEntry{key: strings.Clone(ua), agent: a}
		e.used.Store(true)
		// A concurrent admission may have won the slot: then this agent
		// waits for its next miss.
		set[i].CompareAndSwap(old, e)
		return
	}
	// Both entries were read since the last attempt: they keep their slots
	// for another round, and ua stays pending, so it gets in at its next
	// miss unless they are read again before that.
	for i := range set {
		set[i].Load().used.Store(false)
	}
}
