package rules

import "strings"

// The language condition ranks the visitor's Accept-Language entries by
// their q-order: the rules are tried once per acceptable language, best
// first (ties in header order), and within one pass in the link's order;
// a language condition holds in the pass of a language it is the tag or a
// prefix of. A rule without a language condition holds or fails alike in
// every pass, so it is tried in the first only. The visitor who prefers
// German then gets the German rule even when the French one is listed
// first, which is what "by its q-order" promises; the list order still
// decides between rules that hold for the same language.

// maxLanguages bounds the entries read: the ranking reads the header's
// first maxLanguages comma-separated entries and ignores the rest (a
// browser sends them best first, and rarely more than a few), so the
// ranking lives on the stack, and neither a long header nor many entries
// make a request do more work: at most maxLanguages passes over the rules
// (ADR 042).
const maxLanguages = 8

// maxLanguageBytes bounds the bytes of the header read, for the same
// reason: an entry is at most a few dozen bytes, and one cut by the bound
// is not read.
const maxLanguageBytes = 1024

// languages are the acceptable entries of an Accept-Language header,
// best first. tags are pieces of the header: parsing allocates nothing.
type languages struct {
	n    int
	tags [maxLanguages]string
	q    [maxLanguages]uint16 // the weight in thousandths, 1..1000
}

// parse reads the entries with a weight above 0 (q=0 means "not this
// one") of header's first maxLanguages, skipping "*" (no language in
// particular) and entries whose q is not a qvalue (RFC 9110: 0 to 1, at
// most three decimals). Every comma-separated piece counts towards the
// bound, an empty or refused one too, so that the bytes read are bounded
// as well.
func (ls *languages) parse(header string) {
	ls.n = 0
	if len(header) > maxLanguageBytes {
		cut := header[:maxLanguageBytes]
		if header[maxLanguageBytes] != ',' {
			i := strings.LastIndexByte(cut, ',')
			cut = cut[:max(i, 0)]
		}
		header = cut
	}
	for read := 0; header != "" && read < maxLanguages; read++ {
		var item string
		item, header, _ = strings.Cut(header, ",")
		tag, params, _ := strings.Cut(item, ";")
		tag = strings.TrimSpace(tag)
		if tag == "" || tag == "*" {
			continue
		}
		q, ok := weight(params)
		if !ok || q == 0 {
			continue
		}
		ls.insert(tag, q)
	}
}

// insert places tag after every entry of at least its weight, so equal
// weights keep the header's order; when full, the worst entry goes.
func (ls *languages) insert(tag string, q uint16) {
	i := ls.n
	for i > 0 && ls.q[i-1] < q {
		i--
	}
	if i == maxLanguages {
		return // worse than every kept entry
	}
	end := min(ls.n, maxLanguages-1)
	copy(ls.tags[i+1:end+1], ls.tags[i:end])
	copy(ls.q[i+1:end+1], ls.q[i:end])
	ls.tags[i], ls.q[i] = tag, q
	ls.n = end + 1
}

// weight reads the q parameter of an entry's parameters: 1000 when there
// is none; ok is false when it is not a qvalue.
func weight(params string) (q uint16, ok bool) {
	for params != "" {
		var p string
		p, params, _ = strings.Cut(params, ";")
		p = strings.TrimSpace(p)
		if len(p) < 2 || (p[0] != 'q' && p[0] != 'Q') || p[1] != '=' {
			continue
		}
		return qvalue(strings.TrimSpace(p[2:]))
	}
	return 1000, true
}

// qvalue parses "0", "0.5", "1.000" into thousandths.
func qvalue(v string) (uint16, bool) {
	if v == "" || (v[0] != '0' && v[0] != '1') {
		return 0, false
	}
	whole := uint16(v[0]-'0') * 1000
	if len(v) == 1 {
		return whole, true
	}
	if v[1] != '.' || len(v) > 5 {
		return 0, false
	}
	frac, scale := uint16(0), uint16(100)
	for i := 2; i < len(v); i++ {
		d := v[i]
		if d < '0' || d > '9' || (whole == 1000 && d != '0') {
			return 0, false
		}
		frac += uint16(d-'0') * scale
		scale /= 10
	}
	return whole + frac, true
}

// languageMatches reports whether tag (lowercase) is lang or a prefix of
// it at a subtag boundary ("de" matches "de-AT", not "deu").
func languageMatches(lang, tag string) bool {
	if len(lang) < len(tag) || !strings.EqualFold(lang[:len(tag)], tag) {
		return false
	}
	return len(lang) == len(tag) || lang[len(tag)] == '-'
}
