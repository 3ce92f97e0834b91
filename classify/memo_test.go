package classify

import (
	"fmt"
	"hash/maphash"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	lru "github.com/hashicorp/golang-lru/v2"
)

// holds reports whether ua has an entry in m.
func (m *memo) holds(ua string) bool {
	set := &m.buckets[m.bucket(ua)]
	for i := range set {
		if e := set[i].Load(); e != nil && e.key == ua {
			return true
		}
	}
	return false
}

func (m *memo) bucket(ua string) uint64 { return maphash.String(m.seed, ua) & (memoBuckets - 1) }

// size returns the number of entries of m and the bytes of their keys.
func (m *memo) size() (entries, keyBytes int) {
	for b := range m.buckets {
		for i := range m.buckets[b] {
			if e := m.buckets[b][i].Load(); e != nil {
				entries++
				keyBytes += len(e.key)
			}
		}
	}
	return entries, keyBytes
}

// roomy returns those of uas whose bucket in m holds at most memoWays of
// them: the agents that can all be kept at once.
func roomy(m *memo, uas []string) []string {
	perBucket := map[uint64]int{}
	for _, ua := range uas {
		perBucket[m.bucket(ua)]++
	}
	var out []string
	for _, ua := range uas {
		if perBucket[m.bucket(ua)] <= memoWays {
			out = append(out, ua)
		}
	}
	return out
}

// testAgents are the table's agents plus the preview agents of the
// linkcounter tests, so that both halves of an Agent are exercised.
func testAgents() []string {
	uas := []string{
		"Twitterbot/1.0",
		"LinkedInBot/1.0 (compatible; Mozilla/5.0; Apache-HttpClient +http://www.linkedin.com)",
		"Mozilla/5.0 (compatible; Discordbot/2.0; +https://discordapp.com)",
		"Mozilla/5.0 (Macintosh) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/13.1.1 Safari/605.1.15 (Applebot/0.1)",
		"Mastodon/4.2.0 (http.rb/5.1.1; +https://mastodon.social/)",
		"SLACKBOT-LINKEXPANDING",
	}
	for _, tc := range userAgents {
		uas = append(uas, tc.ua)
	}
	return uas
}

// TestLookupAgentMatchesParse: the memo answers what parsing answers, on
// the first lookup (a miss), the second (admitted) and later ones (hits),
// and the answers are the table's.
func TestLookupAgentMatchesParse(t *testing.T) {
	m := newMemo()
	for round := range 4 {
		for _, ua := range testAgents() {
			want := ParseAgent(ua)
			if got := m.lookup(ua); got != want {
				t.Fatalf("round %d: lookup(%q) = %+v, want %+v", round, ua, got, want)
			}
			if got := LookupAgent(ua); got != want {
				t.Fatalf("round %d: LookupAgent(%q) = %+v, want %+v", round, ua, got, want)
			}
		}
	}
	for _, tc := range userAgents {
		got := m.lookup(tc.ua)
		if got.Device != tc.device || got.Browser != tc.browser || got.OS != tc.os || got.DeviceTarget() != tc.target {
			t.Errorf("%s: lookup = %+v (target %q), want %s/%s/%s (target %q)", tc.name, got, got.DeviceTarget(), tc.device, tc.browser, tc.os, tc.target)
		}
	}
	// The answers above came from entries: the lookups were hits.
	kept := roomy(m, testAgents())
	for _, ua := range kept {
		if ua != "" && !m.holds(ua) {
			t.Errorf("%q: not in the memo after 5 lookups", ua)
		}
	}
	if len(kept) < len(testAgents())/2 {
		t.Errorf("only %d of %d agents in buckets they can share", len(kept), len(testAgents()))
	}
	for ua, want := range map[string]bool{
		"WhatsApp/2.24.13.80 A": true, "Slackbot-LinkExpanding 1.0 (+https://api.slack.com/robots)": true,
		"Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)": true,
		userAgents[0].ua: false, "curl/8.5.0": false,
	} {
		if got := m.lookup(ua).Preview; got != want {
			t.Errorf("lookup(%q).Preview = %v, want %v", ua, got, want)
		}
	}
}

// TestLookupAgentLongIsNotKept: a header over MaxMemoAgentLen is parsed
// every time and never stored.
func TestLookupAgentLongIsNotKept(t *testing.T) {
	m := newMemo()
	long := userAgents[0].ua + " " + strings.Repeat("x", MaxMemoAgentLen)
	for range 3 {
		if got, want := m.lookup(long), ParseAgent(long); got != want {
			t.Fatalf("lookup = %+v, want %+v", got, want)
		}
	}
	if n, _ := m.size(); n != 0 || m.holds(long) {
		t.Errorf("%d entries after a long agent, want 0", n)
	}
}

// TestLookupAgentHitDoesNotAllocate: the redirect stays allocation-free.
func TestLookupAgentHitDoesNotAllocate(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts differ under -race")
	}
	m := newMemo()
	ua := userAgents[0].ua
	m.lookup(ua)
	m.lookup(ua)
	if !m.holds(ua) {
		t.Fatal("not admitted after two lookups")
	}
	if n := testing.AllocsPerRun(1000, func() { m.lookup(ua) }); n != 0 {
		t.Errorf("a hit allocates %v times, want 0", n)
	}
}

// hotAgents are the table's browser agents: the traffic a memo must keep.
func hotAgents() []string {
	var hot []string
	for _, tc := range userAgents {
		if tc.browser != Other {
			hot = append(hot, tc.ua)
		}
	}
	return hot
}

// randomAgent is the i-th header of a bot that sends a different,
// browser-looking agent on every request.
func randomAgent(i int) string {
	return fmt.Sprintf("Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/%d.0.%d.0 Safari/537.36", 100+i%50, i)
}

// TestMemoUniqueFlood: agents seen once (a bot's random headers) take no
// entry, so they neither grow the memo nor evict the hot agents, however
// many there are.
func TestMemoUniqueFlood(t *testing.T) {
	m := newMemo()
	hot := roomy(m, hotAgents())
	for _, ua := range hot {
		m.lookup(ua)
		m.lookup(ua)
		if !m.holds(ua) {
			t.Fatalf("%q not admitted at its second lookup", ua)
		}
	}
	for i := range 50_000 {
		ua := randomAgent(i)
		if got, want := m.lookup(ua), ParseAgent(ua); got != want {
			t.Fatalf("lookup(%q) = %+v, want %+v", ua, got, want)
		}
	}
	for _, ua := range hot {
		if !m.holds(ua) {
			t.Errorf("hot agent evicted by a flood of unique ones: %q", ua)
		}
	}
	if n, _ := m.size(); n != len(hot) {
		t.Errorf("%d entries after the flood, want the %d hot agents only", n, len(hot))
	}
}

// TestMemoRepeatFlood: a bot that sends each header twice gets its agents
// admitted, but the memo stays within MemoAgents entries of at most
// MaxMemoAgentLen bytes, and a hot agent read between the bot's requests
// keeps its entry (unless three hot agents share its bucket, which two
// ways cannot hold).
func TestMemoRepeatFlood(t *testing.T) {
	m := newMemo()
	hot := roomy(m, hotAgents())
	if len(hot) < len(hotAgents())/2 {
		t.Fatalf("only %d of %d hot agents in buckets they can share", len(hot), len(hotAgents()))
	}
	for _, ua := range hot {
		m.lookup(ua)
		m.lookup(ua)
	}
	for i := range 20_000 {
		ua := randomAgent(i)
		m.lookup(ua)
		m.lookup(ua)
		for _, ua := range hot {
			m.lookup(ua)
		}
	}
	for _, ua := range hot {
		if !m.holds(ua) {
			t.Errorf("hot agent evicted by repeated bot agents: %q", ua)
		}
	}
	// Without hot traffic in between, the bot fills the memo, and no more.
	for i := range 3 * MemoAgents {
		ua := randomAgent(i) + strings.Repeat(" ", MaxMemoAgentLen-len(randomAgent(i)))
		m.lookup(ua)
		m.lookup(ua)
		m.lookup(ua)
	}
	n, keyBytes := m.size()
	if n > MemoAgents || keyBytes > MemoAgents*MaxMemoAgentLen {
		t.Errorf("%d entries, %d key bytes: over the bound (%d entries of at most %d bytes)", n, keyBytes, MemoAgents, MaxMemoAgentLen)
	}
	if n < MemoAgents/2 {
		t.Errorf("%d entries after %d agents seen three times: the memo admits too little", n, 3*MemoAgents)
	}
}

// TestLookupAgentConcurrent: lookups from many goroutines, hits, misses and
// admissions mixed, answer what parsing answers (run with -race).
func TestLookupAgentConcurrent(t *testing.T) {
	m := newMemo()
	uas := append(testAgents(), randomAgent(1), randomAgent(2), randomAgent(3))
	want := make([]Agent, len(uas))
	for i, ua := range uas {
		want[i] = ParseAgent(ua)
	}
	var wg sync.WaitGroup
	errs := make(chan string, 8)
	for g := range 8 {
		wg.Go(func() {
			for i := range 2000 {
				k := (i*7 + g) % len(uas)
				if got := m.lookup(uas[k]); got != want[k] {
					errs <- fmt.Sprintf("lookup(%q) = %+v, want %+v", uas[k], got, want[k])
					return
				}
				if i%50 == 0 {
					m.lookup(randomAgent(g*10_000 + i)) // a miss now and then
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}

// BenchmarkLookupAgent is the per-click User-Agent work on the redirect
// path, parallel as under load: parsing (ParseAgent), a memo hit, and a
// memo miss (every agent new, as in a flood of random headers).
//
//	go test -run '^$' -bench 'LookupAgent|MemoChoices' -benchmem ./classify/
func BenchmarkLookupAgent(b *testing.B) {
	hot := hotAgents()
	b.Run("parse", func(b *testing.B) {
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for i := 0; pb.Next(); i++ {
				ParseAgent(hot[i%len(hot)])
			}
		})
	})
	b.Run("hit", func(b *testing.B) {
		for _, ua := range hot {
			LookupAgent(ua)
			LookupAgent(ua)
		}
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for i := 0; pb.Next(); i++ {
				LookupAgent(hot[i%len(hot)])
			}
		})
	})
	b.Run("miss", func(b *testing.B) {
		// 32 agents per bucket in rotation: none misses twice in a row
		// in its bucket, so none is admitted and every lookup misses.
		uas := make([]string, 32*memoBuckets)
		for i := range uas {
			uas[i] = randomAgent(1_000_000 + i)
		}
		m := newMemo()
		var next atomic.Int64 // one rotation shared by the goroutines
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				m.lookup(uas[int(next.Add(1))%len(uas)])
			}
		})
		if n, _ := m.size(); n > len(uas)/100 {
			b.Errorf("%d agents admitted: not a miss benchmark", n)
		}
	})
	b.Run("parse-miss-agents", func(b *testing.B) { // the same agents, parsed: what a miss adds
		uas := make([]string, 32*memoBuckets)
		for i := range uas {
			uas[i] = randomAgent(1_000_000 + i)
		}
		var next atomic.Int64
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				ParseAgent(uas[int(next.Add(1))%len(uas)])
			}
		})
	})
}

// BenchmarkMemoChoices compares the hit of the memo's table with the two
// ready-made alternatives, golang-lru (a mutex and a list move per Get) and
// sync.Map, on 2 goroutines per CPU reading the hot agents.
func BenchmarkMemoChoices(b *testing.B) {
	hot := hotAgents()
	b.Run("table", func(b *testing.B) {
		m := newMemo()
		for _, ua := range hot {
			m.lookup(ua)
			m.lookup(ua)
		}
		b.ReportAllocs()
		b.SetParallelism(2)
		b.RunParallel(func(pb *testing.PB) {
			for i := 0; pb.Next(); i++ {
				m.lookup(hot[i%len(hot)])
			}
		})
	})
	b.Run("golang-lru", func(b *testing.B) {
		c, err := lru.New[string, Agent](MemoAgents)
		if err != nil {
			b.Fatal(err)
		}
		for _, ua := range hot {
			c.Add(ua, ParseAgent(ua))
		}
		b.ReportAllocs()
		b.SetParallelism(2)
		b.RunParallel(func(pb *testing.PB) {
			for i := 0; pb.Next(); i++ {
				if _, ok := c.Get(hot[i%len(hot)]); !ok {
					b.Error("miss")
					return
				}
			}
		})
	})
	b.Run("sync.Map", func(b *testing.B) {
		var c sync.Map
		for _, ua := range hot {
			c.Store(ua, ParseAgent(ua))
		}
		b.ReportAllocs()
		b.SetParallelism(2)
		b.RunParallel(func(pb *testing.PB) {
			for i := 0; pb.Next(); i++ {
				if _, ok := c.Load(hot[i%len(hot)]); !ok {
					b.Error("miss")
					return
				}
			}
		})
	})
}
