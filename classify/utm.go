package classify

import (
	"net/url"
	"strings"
)

// MaxUTMSourceLen bounds a utm_source value in bytes. Real sources are short
// names ("newsletter", "twitter.com"); the bound keeps a crafted query from
// turning into a long stored value.
const MaxUTMSourceLen = 64

// UTMSource returns the utm_source dimension value of a raw query string
// (URL.RawQuery): the first utm_source parameter, as url.Values.Get would
// return it (the same parameters are skipped: badly escaped ones and those
// holding a semicolon; only url.ParseQuery's limit on the number of
// parameters is not repeated), lowercased and trimmed of spaces, or UTMNone when there is none
// or it is empty. Since it becomes a stored value, it is then made safe:
// bytes outside printable ASCII, '%', '(' and ')' are written as %xx (so
// "(more)", the counter's overflow value, can never be a source, and an
// escaped byte cannot pass for a literal one), and the result is cut to at
// most MaxUTMSourceLen bytes, never inside a %xx.
func UTMSource(rawQuery string) string {
	for q := rawQuery; q != ""; {
		var param string
		if i := strings.IndexByte(q, '&'); i >= 0 {
			param, q = q[:i], q[i+1:]
		} else {
			param, q = q, ""
		}
		if strings.IndexByte(param, ';') >= 0 {
			continue // url.ParseQuery refuses such a parameter (Go 1.17+)
		}
		key, value, _ := strings.Cut(param, "=")
		if key != "utm_source" {
			if !escaped(key) {
				continue
			}
			// An escaped key ("utm%5Fsource") is the same parameter to
			// url.ParseQuery; rare, so the allocation is fine here.
			k, err := url.QueryUnescape(key)
			if err != nil || k != "utm_source" {
				continue
			}
		}
		if escaped(value) {
			v, err := url.QueryUnescape(value)
			if err != nil {
				continue // url.ParseQuery skips a badly escaped parameter too
			}
			value = v
		}
		return utmValue(value)
	}
	return UTMNone
}

// escaped reports whether a query key or value holds '%' or '+', which
// url.QueryUnescape would change: strings.ContainsAny(s, "%+") without the
// set ContainsAny builds on every call, for every parameter of every click.
func escaped(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] == '%' || s[i] == '+' {
			return true
		}
	}
	return false
}

// utmValue normalizes a decoded utm_source value.
func utmValue(v string) string {
	v = strings.Trim(v, " \t\r\n")
	if v == "" {
		return UTMNone
	}
	if clean := cleanUTM(v); clean {
		return v // the common case: no copy
	}
	var buf [MaxUTMSourceLen]byte
	n := 0
	const hex = "0123456789abcdef"
	for i := 0; i < len(v); i++ {
		c := v[i]
		if c >= 0x20 && c < 0x7f && c != '%' && c != '(' && c != ')' {
			if n+1 > len(buf) {
				break
			}
			if 'A' <= c && c <= 'Z' {
				c += 'a' - 'A'
			}
			buf[n] = c
			n++
			continue
		}
		if n+3 > len(buf) {
			break
		}
		buf[n], buf[n+1], buf[n+2] = '%', hex[c>>4], hex[c&0xf] //nolint:gosec // G602: n+3 <= len(buf), checked above
		n += 3
	}
	out := strings.TrimRight(string(buf[:n]), " ")
	if out == "" {
		return UTMNone
	}
	return out
}

// cleanUTM reports whether v is already a final value: short enough, and
// only lower-case printable ASCII without the escaped characters.
func cleanUTM(v string) bool {
	if len(v) > MaxUTMSourceLen {
		return false
	}
	for i := 0; i < len(v); i++ {
		c := v[i]
		if c < 0x20 || c >= 0x7f || c == '%' || c == '(' || c == ')' || ('A' <= c && c <= 'Z') {
			return false
		}
	}
	return true
}
