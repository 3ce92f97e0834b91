package rules

import (
	"strings"

	"github.com/linkforge/linkforge"
)

// forwardQuery returns the Location value for t with the request's query
// added: the target's own parameters first, all of them as written, then
// those of the request whose key the target does not have, in the
// request's order, but for linkforge.QRQuery. A key the target has keeps
// the target's value: a visitor's ?next= must not replace the link's own
// next= (the link's owner chose it; a visitor could otherwise steer a
// login link's return address). The link's UTM pairs the target lacks
// (target.utm) come last, each unless the request has its key: a
// visitor's own utm_source is kept, as the target's are. The target's
// fragment stays last. The result goes through linkforge.RedirectLocation,
// so it is ASCII whatever the request sent.
//
// The work is linear in the request's query: each of its keys is looked
// up once in the target's keys (compiled with the target), without
// allocating unless an escaped key is longer than keyBuf.
func forwardQuery(t *target, reqQuery string) string {
	base, frag, hasFrag := strings.Cut(t.raw, "#")
	base, tq, _ := strings.Cut(base, "?")
	var b strings.Builder
	n := len(t.raw) + len(reqQuery) + 2
	for _, p := range t.utm {
		n += len(p) + 1
	}
	b.Grow(n)
	b.WriteString(base)
	sep := byte('?')
	for tq != "" {
		var pair string
		pair, tq, _ = strings.Cut(tq, "&")
		if pair == "" {
			continue
		}
		b.WriteByte(sep)
		b.WriteString(pair)
		sep = '&'
	}
	var keyBuf [256]byte
	var sent uint8 // bit i: the request has the key of t.utm[i]
	for reqQuery != "" {
		var pair string
		pair, reqQuery, _ = strings.Cut(reqQuery, "&")
		if pair == "" || pair == linkforge.QRQuery {
			// QRQuery marks a scan of the link's QR code for the click's
			// source dimension; it is the link's, not the target's.
			continue
		}
		if t.keys != nil || t.utm != nil {
			k, _, _ := strings.Cut(pair, "=")
			if t.keys != nil && t.hasKey(k, keyBuf[:0]) {
				continue
			}
			sent |= t.utmKey(k, keyBuf[:0])
		}
		b.WriteByte(sep)
		// A '#' in a request's query can only arrive escaped; one written
		// raw would start a fragment, so it is escaped again.
		b.WriteString(strings.ReplaceAll(pair, "#", "%23"))
		sep = '&'
	}
	for i, p := range t.utm {
		if sent&(1<<i) == 0 {
			b.WriteByte(sep)
			b.WriteString(p)
			sep = '&'
		}
	}
	if hasFrag {
		b.WriteByte('#')
		b.WriteString(frag)
	}
	return linkforge.RedirectLocation(b.String())
}

// utmKey returns the bit of the pair of t.utm whose key is k (as the
// request wrote it, compared unescaped), 0 when none is; buf is room to
// unescape k in.
func (t *target) utmKey(k string, buf []byte) uint8 {
	if t.utm == nil || len(k) > 3*len("utm_campaign") {
		return 0
	}
	u := unescapeTo(buf, k) // within buf: no allocation
	for i, p := range t.utm {
		if len(p) > len(u) && p[len(u)] == '=' && p[:len(u)] == string(u) {
			return 1 << i
		}
	}
	return 0
}

// hasKey reports whether t's query has the key k (as the request wrote
// it), compared unescaped; buf is room to unescape it in.
func (t *target) hasKey(k string, buf []byte) bool {
	if !escaped(k) {
		_, ok := t.keys[k]
		return ok
	}
	// An escape is at least one byte of its three: a key that cannot
	// unescape to keyMax bytes or fewer is not one of them.
	if len(k) > 3*t.keyMax {
		return false
	}
	_, ok := t.keys[string(unescapeTo(buf, k))]
	return ok
}

// targetKeys returns the unescaped keys of raw's query (nil: none) and the
// length of the longest.
func targetKeys(raw string) (map[string]struct{}, int) {
	base, _, _ := strings.Cut(raw, "#")
	_, tq, _ := strings.Cut(base, "?")
	var keys map[string]struct{}
	longest := 0
	for tq != "" {
		var pair string
		pair, tq, _ = strings.Cut(tq, "&")
		if pair == "" {
			continue
		}
		k, _, _ := strings.Cut(pair, "=")
		if keys == nil {
			keys = map[string]struct{}{}
		}
		u := string(unescapeTo(nil, k))
		keys[u] = struct{}{}
		longest = max(longest, len(u))
	}
	return keys, longest
}
