package classify

import (
	"math/bits"
	"net/http"
	"regexp"
	"strings"
	"sync"

	"github.com/linkforge/linkforge"
)

//go:generate go run ./patterns/gen.go

// Traffic values: the traffic dimension says whether a counted click was a
// person's (human) or a program's (automated).
const (
	TrafficHuman     = linkforge.TrafficHuman
	TrafficAutomated = linkforge.TrafficAutomated
)

// Traffics is the complete value set of the traffic dimension.
var Traffics = [...]string{TrafficHuman, TrafficAutomated}

// botPattern is one of isbot's patterns, translated to RE2 by
// patterns/gen.go: a header matches when core matches at a place that no
// notBefore string ends just before and that notAfter does not match just
// after. lit is a literal every match contains (empty: none); pure means the
// pattern is lit alone, so that finding lit decides.
//
// first, last and only, when set, are the bytes a match can begin with, end
// with and consist of (for an expression anchored at the start, the end,
// both): a header outside them is not matched without running the
// expression, which is what keeps isbot's catch-all expressions, tried on
// every header, cheap.
type botPattern struct {
	src, lit, core, notAfter string
	pure                     bool
	notBefore                []string
	first, last, only        *[4]uint64
	// span and ends, when set: the pattern is anchored at the start and
	// ends with one of the bytes ends or at the end of the text; a match
	// consists of span bytes. So it lies in the header's longest prefix of
	// span bytes and, unless that is the whole header, ends with an ends
	// byte inside it.
	span, ends *[4]uint64
}

// botMatcher is botPatterns compiled, once, with an Aho-Corasick automaton
// of their literals, so that one pass over the header finds every literal
// present: trying each literal at each position cost several microseconds
// a header, the automaton one table load a byte.
type botMatcher struct {
	res   []*regexp.Regexp // by pattern; nil for a pure literal
	after []*regexp.Regexp // by pattern; nil without a lookahead
	lits  []string
	// byLit are the patterns that need each literal; pureLit whether one of
	// them is the literal alone (finding it decides); unlit the patterns
	// without a literal, tried on every header.
	byLit   [][]int
	pureLit []bool
	unlit   []int
	ac      automaton
}

// automaton is a deterministic Aho-Corasick automaton over byte classes
// (the bytes that occur in a literal, and one class for all others).
type automaton struct {
	class [256]uint8
	n     int // classes
	// next[state*n+class] is the next state, with hasOutput set when
	// literals end there, so that the walk loads the outputs only then.
	next   []uint16
	output [][]int // by state: the literals that end there
}

// hasOutput marks, in automaton.next, a state where literals end.
const hasOutput = 1 << 15

func newAutomaton(lits []string) automaton {
	var a automaton
	a.n = 1
	for _, l := range lits {
		for i := 0; i < len(l); i++ {
			if a.class[l[i]] == 0 {
				a.class[l[i]] = uint8(a.n) //nolint:gosec // G115: the literals are ASCII patterns: far fewer than 255 distinct bytes
				a.n++
			}
		}
	}
	// The trie: goto[state][class], 0 meaning none (the root is never a
	// target of a goto edge).
	trie := [][]uint16{make([]uint16, a.n)}
	a.output = [][]int{nil}
	for id, l := range lits {
		s := 0
		for i := 0; i < len(l); i++ {
			c := a.class[l[i]]
			if trie[s][c] == 0 {
				trie = append(trie, make([]uint16, a.n))
				a.output = append(a.output, nil)
				trie[s][c] = uint16(len(trie) - 1) //nolint:gosec // G115: bounded below hasOutput, checked after the build (a few thousand states)
			}
			s = int(trie[s][c])
		}
		a.output[s] = append(a.output[s], id)
	}
	if len(trie) >= hasOutput {
		panic("classify: too many automaton states")
	}
	// Breadth first: each state's missing edges are its failure state's.
	a.next = make([]uint16, len(trie)*a.n)
	fail := make([]int, len(trie))
	queue := []int{0}
	for len(queue) > 0 {
		s := queue[0]
		queue = queue[1:]
		for c := 0; c < a.n; c++ {
			t := int(trie[s][c])
			if t == 0 {
				if s != 0 {
					a.next[s*a.n+c] = a.next[fail[s]*a.n+c]
				}
				continue
			}
			a.next[s*a.n+c] = uint16(t) //nolint:gosec // G115: t < len(trie) < hasOutput, checked above
			if s != 0 {
				fail[t] = int(a.next[fail[s]*a.n+c])
			}
			a.output[t] = append(a.output[t], a.output[fail[t]]...)
			queue = append(queue, t)
		}
	}
	for i, t := range a.next {
		if len(a.output[t]) > 0 {
			a.next[i] = t | hasOutput
		}
	}
	return a
}

var bots = compileBots()

func compileBots() *botMatcher {
	m := &botMatcher{}
	litIdx := map[string]int{}
	for pi, p := range botPatterns {
		var re, after *regexp.Regexp
		if !p.pure {
			re = regexp.MustCompile(p.core)
		}
		if p.notAfter != "" {
			after = regexp.MustCompile("^(?:" + p.notAfter + ")")
		}
		m.res, m.after = append(m.res, re), append(m.after, after)
		if p.lit == "" {
			m.unlit = append(m.unlit, pi)
			continue
		}
		i, ok := litIdx[p.lit]
		if !ok {
			i = len(m.lits)
			litIdx[p.lit] = i
			m.lits = append(m.lits, p.lit)
			m.byLit, m.pureLit = append(m.byLit, nil), append(m.pureLit, false)
		}
		m.byLit[i] = append(m.byLit[i], pi)
		m.pureLit[i] = m.pureLit[i] || p.pure
	}
	if len(m.lits) > maxBotLits {
		panic("classify: more bot pattern literals than maxBotLits")
	}
	m.ac = newAutomaton(m.lits)
	return m
}

// maxBotLits bounds the literals the matcher tracks in one bitset; the
// generator's input has about 170.
const maxBotLits = 512

// IsAutomatedAgent reports whether userAgent is a program's rather than a
// browser's: isbot's patterns (crawlers, HTTP libraries and command-line
// clients, headless browsers, monitors, scanners), or an empty header,
// which no browser sends. The redirect path asks LookupAgent, which
// remembers the answer per header.
func IsAutomatedAgent(userAgent string) bool {
	if userAgent == "" {
		return true
	}
	buf := lowerBufs.Get().(*[]byte)
	automated := bots.match(userAgent, buf)
	lowerBufs.Put(buf)
	return automated
}

// lowerBufs hold the lowered header: the expressions take a []byte, which
// escapes, and a pool keeps a miss from allocating one per header.
var lowerBufs = sync.Pool{New: func() any {
	b := make([]byte, 0, MaxMemoAgentLen)
	return &b
}}

// match lowers ua into *buf and walks the automaton in the same pass,
// noting the bytes present; then it tries the expressions whose literal
// was found and those without one.
func (m *botMatcher) match(ua string, buf *[]byte) bool {
	low := (*buf)[:0]
	var found [maxBotLits / 64]uint64
	var present [4]uint64
	a := &m.ac
	state := 0
	for i := 0; i < len(ua); i++ {
		c := ua[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		low = append(low, c)
		present[c/64] |= 1 << (c % 64)
		next := a.next[state*a.n+int(a.class[c])]
		state = int(next &^ hasOutput)
		if next&hasOutput == 0 {
			continue
		}
		for _, l := range a.output[state] {
			if m.pureLit[l] {
				*buf = low
				return true
			}
			found[l/64] |= 1 << (l % 64)
		}
	}
	*buf = low
	for _, p := range m.unlit {
		if m.try(p, low, &present) {
			return true
		}
	}
	for w, bits := range found {
		for ; bits != 0; bits &= bits - 1 {
			for _, p := range m.byLit[w*64+bits0(bits)] {
				if m.try(p, low, &present) {
					return true
				}
			}
		}
	}
	return false
}

// bits0 is the index of the lowest set bit of a non-zero word.
func bits0(w uint64) int { return bits.TrailingZeros64(w) }

// try runs pattern p on low unless its byte sets rule it out.
func (m *botMatcher) try(p int, low []byte, present *[4]uint64) bool {
	return !excluded(&botPatterns[p], low, present) && m.matchAt(p, low)
}

// excluded reports whether the pattern's byte sets rule out a match in low
// (not empty), whose bytes are present.
func excluded(bp *botPattern, low []byte, present *[4]uint64) bool {
	if s := bp.first; s != nil && s[low[0]/64]&(1<<(low[0]%64)) == 0 {
		return true
	}
	if c := low[len(low)-1]; bp.last != nil && bp.last[c/64]&(1<<(c%64)) == 0 {
		return true
	}
	if s := bp.only; s != nil {
		for i := range present {
			if present[i]&^s[i] != 0 {
				return true
			}
		}
	}
	if bp.span != nil {
		for _, c := range low {
			if bp.ends[c/64]&(1<<(c%64)) != 0 {
				return false // a possible end inside the prefix
			}
			if bp.span[c/64]&(1<<(c%64)) == 0 {
				return true // the prefix ends before the text does
			}
		}
	}
	return false
}

// matchAt runs pattern p's expression on low, with its lookarounds.
func (m *botMatcher) matchAt(p int, low []byte) bool {
	re, bp := m.res[p], &botPatterns[p]
	if bp.notBefore == nil && m.after[p] == nil {
		return re.Match(low)
	}
	for _, loc := range re.FindAllIndex(low, -1) {
		if m.after[p] != nil && m.after[p].Match(low[loc[1]:]) {
			continue
		}
		if endsWithAny(low[:loc[0]], bp.notBefore) {
			continue
		}
		return true
	}
	return false
}

func endsWithAny(b []byte, suffixes []string) bool {
	for _, s := range suffixes {
		if len(b) >= len(s) && string(b[len(b)-len(s):]) == s {
			return true
		}
	}
	return false
}

// IsAutomatedRequest reports whether r is one no person's click sends,
// whatever its User-Agent: a prefetch (Sec-Purpose or Purpose: prefetch,
// which the browser makes before, and often without, a click), a request
// without Accept (every browser sends one with a navigation), or HTTP/1.0
// without Accept-Language (no browser of this century speaks HTTP/1.0 for
// a navigation; scripts and some scanners do). It reads headers only.
func IsAutomatedRequest(r *http.Request) bool {
	if strings.Contains(headerValue(r.Header, "Sec-Purpose"), "prefetch") ||
		strings.Contains(headerValue(r.Header, "Purpose"), "prefetch") {
		return true
	}
	if len(r.Header["Accept"]) == 0 {
		return true
	}
	return r.ProtoMajor == 1 && r.ProtoMinor == 0 && len(r.Header["Accept-Language"]) == 0
}
