package rules

import (
	"hash/maphash"
	"strings"
)

// The query conditions of a link read the request's query through one
// bounded set, parsed once per request (ADR 042): its first maxQueryPairs
// pairs that lie wholly within its first maxQueryBytes bytes. A condition
// then costs at most maxQueryPairs comparisons of two hashes, whatever the
// request sends, where it used to rescan and unescape the whole query; a
// pair beyond either bound is not seen by any rule (forwarding the query
// still passes all of it on). Each key and value is unescaped once, on
// the stack, and hashed, so that a condition compares a pair's bytes only
// when their hashes are its own; nothing is allocated.

const (
	maxQueryBytes = 4096 // bytes of the raw query the rules see
	maxQueryPairs = 64   // pairs of it the rules see
)

// querySeed is random per process, so that a request cannot be crafted to
// make its pairs collide with a condition's hash (compile time and request
// time hash in the same process).
var querySeed = maphash.MakeSeed()

// queryPair is one key=value of the request's query: where its unescaped
// key and value are in query.buf, and their hashes.
type queryPair struct {
	k0, k1, v0, v1 uint16
	keyHash        uint64
	valHash        uint64
}

// query is the bounded set of a request's query pairs, on the stack:
// their unescaped forms are in buf (never longer than the raw query), so
// that each is unescaped once and compared with a memory compare.
type query struct {
	n     int
	buf   [maxQueryBytes]byte
	pairs [maxQueryPairs]queryPair
}

// boundQuery returns the part of raw the rules see: raw cut after its last
// pair that ends within maxQueryBytes bytes (a pair is not seen cut short).
func boundQuery(raw string) string {
	if len(raw) <= maxQueryBytes {
		return raw
	}
	if raw[maxQueryBytes] == '&' {
		return raw[:maxQueryBytes]
	}
	if i := strings.LastIndexByte(raw[:maxQueryBytes], '&'); i >= 0 {
		return raw[:i]
	}
	return ""
}

// parse fills q from the request's raw query; empty pairs ("a=1&&b=2")
// are not pairs and take no place.
func (q *query) parse(raw string) {
	q.n = 0
	raw = boundQuery(raw)
	end := 0
	for raw != "" && q.n < maxQueryPairs {
		var pair string
		pair, raw, _ = strings.Cut(raw, "&")
		if pair == "" {
			continue
		}
		k, v, _ := strings.Cut(pair, "=")
		p := &q.pairs[q.n]
		// end is at most maxQueryBytes, so it fits a uint16.
		p.k0, end = uint16(end), q.unescape(end, k)
		p.k1 = uint16(end) //nolint:gosec // G115: see above
		p.v0, end = p.k1, q.unescape(end, v)
		p.v1 = uint16(end) //nolint:gosec // G115: see above
		p.keyHash = maphash.Bytes(querySeed, q.buf[p.k0:p.k1])
		p.valHash = maphash.Bytes(querySeed, q.buf[p.v0:p.v1])
		q.n++
	}
}

// unescape writes s's unescaped form into q.buf at end, returning the end
// of what it wrote. A pair's pieces are shorter than the bounded raw query,
// and an escape is shorter unescaped, so buf never overflows.
func (q *query) unescape(end int, s string) int {
	if !escaped(s) {
		return end + copy(q.buf[end:], s)
	}
	for i := 0; i < len(s); end++ {
		q.buf[end], i = decodeByte(s, i)
	}
	return end
}

// has reports whether a pair of q holds the query condition c (its key,
// and its value when it names one), comparing unescaped forms.
func (q *query) has(c *cond) bool {
	for i := range q.n {
		p := &q.pairs[i]
		if p.keyHash != c.keyHash || (c.hasVal && p.valHash != c.valHash) {
			continue
		}
		if string(q.buf[p.k0:p.k1]) == c.str && (!c.hasVal || string(q.buf[p.v0:p.v1]) == c.val) {
			return true
		}
	}
	return false
}

// escaped reports whether s holds an escape to decode: a '+' or a '%'
// with two hex digits after it, and no invalid '%' (a piece with an
// invalid escape is compared as written, as url.QueryUnescape refuses it).
func escaped(s string) bool {
	if strings.IndexByte(s, '%') < 0 {
		return strings.IndexByte(s, '+') >= 0
	}
	for i := 0; i < len(s); i++ {
		if s[i] == '%' {
			if i+2 >= len(s) || !ishex(s[i+1]) || !ishex(s[i+2]) {
				return false
			}
			i += 2
		}
	}
	return true
}

// decodeByte returns the byte of s (a valid escaped piece) at i and the
// index after it.
func decodeByte(s string, i int) (byte, int) {
	switch s[i] {
	case '+':
		return ' ', i + 1
	case '%':
		return unhex(s[i+1])<<4 | unhex(s[i+2]), i + 3
	}
	return s[i], i + 1
}

// unescapeTo appends s's unescaped form to dst (s as written when it
// holds no valid escape).
func unescapeTo(dst []byte, s string) []byte {
	if !escaped(s) {
		return append(dst, s...)
	}
	for i := 0; i < len(s); {
		var b byte
		b, i = decodeByte(s, i)
		dst = append(dst, b)
	}
	return dst
}

func ishex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

func unhex(c byte) byte {
	switch {
	case '0' <= c && c <= '9':
		return c - '0'
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10
	}
	return c - 'A' + 10
}
