package rules

import (
	"strings"

	"github.com/linkforge/linkforge"
)

// forwardQuery returns the Location value for target with the request's
// query added: the target's own parameters come first, except those whose
// key the request also sends (the request's value wins), then the
// request's in its order. The target's fragment stays last. The result goes
// through linkforge.RedirectLocation, so it is ASCII whatever the request
// sent.
func forwardQuery(target, reqQuery string) string {
	base, frag, hasFrag := strings.Cut(target, "#")
	base, tq, _ := strings.Cut(base, "?")
	var b strings.Builder
	b.Grow(len(target) + len(reqQuery) + 2)
	b.WriteString(base)
	sep := byte('?')
	for tq != "" {
		var pair string
		pair, tq, _ = strings.Cut(tq, "&")
		if pair == "" {
			continue
		}
		k, _, _ := strings.Cut(pair, "=")
		if hasQueryKey(reqQuery, unescape(k)) {
			continue
		}
		b.WriteByte(sep)
		b.WriteString(pair)
		sep = '&'
	}
	for reqQuery != "" {
		var pair string
		pair, reqQuery, _ = strings.Cut(reqQuery, "&")
		if pair == "" {
			continue
		}
		b.WriteByte(sep)
		// A '#' in a request's query can only arrive escaped; one written
		// raw would start a fragment, so it is escaped again.
		b.WriteString(strings.ReplaceAll(pair, "#", "%23"))
		sep = '&'
	}
	if hasFrag {
		b.WriteByte('#')
		b.WriteString(frag)
	}
	return linkforge.RedirectLocation(b.String())
}

func hasQueryKey(raw, key string) bool { return hasQuery(raw, key, "", false) }
