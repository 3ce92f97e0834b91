// Package blocklist is the operator's target blocklist and allowlist:
// the hosts no link may point to, read from files (--blocklist, in the
// formats of the common feeds) and from the operator's own entries. An
// entry blocks its host and every host under it (evil.test blocks
// x.evil.test), compared in the form a browser connects to
// (linkforge.CanonicalHost: IDNA-mapped, lowercase, no trailing dot), so
// that a Unicode, upper-case or punycode spelling of a blocked host is
// blocked too. An allowlist entry wins over every blocklist entry.
package blocklist

import (
	"errors"
	"fmt"
	"net/netip"
	"strings"

	"golang.org/x/net/publicsuffix"

	"github.com/linkforge/linkforge"
)

// Set is a set of entries: canonical hosts, each blocking itself and the
// hosts under it (IP addresses only themselves). The zero Set is empty.
type Set struct {
	hosts map[string]string // canonical host → the entry as reported
}

// Add adds the canonical host, reported as entry.
func (s *Set) Add(host, entry string) {
	if s.hosts == nil {
		s.hosts = make(map[string]string)
	}
	if _, ok := s.hosts[host]; !ok {
		s.hosts[host] = entry
	}
}

// Len is the number of entries.
func (s *Set) Len() int { return len(s.hosts) }

// Merge adds every entry of o.
func (s *Set) Merge(o *Set) {
	for h, e := range o.hosts {
		s.Add(h, e)
	}
}

// Match returns the entry that matches the canonical host: the host
// itself, or the nearest domain above it.
func (s *Set) Match(host string) (string, bool) {
	if len(s.hosts) == 0 {
		return "", false
	}
	if e, ok := s.hosts[host]; ok {
		return e, true
	}
	if _, err := netip.ParseAddr(host); err == nil {
		return "", false
	}
	for h := host; ; {
		i := strings.IndexByte(h, '.')
		if i < 0 {
			return "", false
		}
		h = h[i+1:]
		if e, ok := s.hosts[h]; ok {
			return e, true
		}
	}
}

// ErrPublicSuffix is the error of an entry that is a public suffix (com,
// co.uk, github.io): it would block every site under it.
var ErrPublicSuffix = errors.New("is a public suffix, which would block every site under it")

// Normalize returns the canonical form of an entry: a host name (any
// spelling; a leading "*." or "." is dropped) or an IP address. A public
// suffix is refused (ErrPublicSuffix).
func Normalize(entry string) (string, error) {
	e := strings.TrimSpace(entry)
	e = strings.TrimPrefix(e, "*.")
	e = strings.TrimPrefix(e, ".")
	if e == "" {
		return "", errors.New("is empty")
	}
	h, err := linkforge.CanonicalHost(e)
	if err != nil {
		return "", err
	}
	if _, err := netip.ParseAddr(h); err == nil {
		return h, nil
	}
	if s, _ := publicsuffix.PublicSuffix(h); s == h {
		return "", ErrPublicSuffix
	}
	return h, nil
}

// Lists are a blocklist and its allowlist, decided together.
type Lists struct {
	Block, Allow *Set
}

// BlockedHost reports whether l blocks the canonical host: a blocklist
// entry matches it and no allowlist entry does.
func (l Lists) BlockedHost(host string) (string, bool) {
	if l.Block == nil {
		return "", false
	}
	entry, ok := l.Block.Match(host)
	if !ok {
		return "", false
	}
	if l.Allow != nil {
		if _, allowed := l.Allow.Match(host); allowed {
			return "", false
		}
	}
	return entry, true
}

// Empty reports whether l blocks nothing.
func (l Lists) Empty() bool { return l.Block == nil || l.Block.Len() == 0 }

// BlockedURL is BlockedHost of the host of a target URL; a URL whose host
// cannot be read is not blocked (the target check refuses it).
func (l Lists) BlockedURL(raw string) (string, bool) {
	h, err := linkforge.TargetURLHost(raw)
	if err != nil {
		return "", false
	}
	return l.BlockedHost(h)
}

// lineError is a parse error at a line of a file.
func lineError(line int, format string, args ...any) error {
	return fmt.Errorf("line %d: %s", line, fmt.Sprintf(format, args...))
}
