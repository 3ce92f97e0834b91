// Package safety checks where links point, after they are made: the
// operator's target policy (package blocklist: files and entries) and an
// optional filtering resolver (--threat-dns, DNSFilter). A link whose
// target either flags is unsafe (linkforge.LinkUnsafe): its visitors get a
// warning interstitial first (package redirect).
//
// The Job re-checks every link on the node's one scheduler (a
// schedule.Work, as the retention job: one node holds the run's lease in
// the main store, renewed page by page), every --threat-recheck. It flags
// the links whose target became flagged and clears the flags a check set
// whose target is no longer flagged (an allowlist entry, a blocklist entry
// removed); a flag the operator set by hand stays until the operator
// clears it. See docs/operations.md, "Unsafe links".
package safety

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"github.com/linkforge/linkforge"
)

// The prefixes of the reasons a check writes; a flag without one is the
// operator's, which the Job leaves alone.
const (
	ReasonBlocklist = "blocklist: "  // + the entry that matched
	ReasonThreatDNS = "threat-dns: " // + the host the resolver sinkholed
)

// FromCheck reports whether reason is one a check wrote.
func FromCheck(reason string) bool {
	return strings.HasPrefix(reason, ReasonBlocklist) || strings.HasPrefix(reason, ReasonThreatDNS)
}

// Filter says whether a host is flagged by a filtering resolver
// (DNSFilter). An error is no verdict: the link is left as it is.
type Filter interface {
	Flagged(ctx context.Context, host string) (bool, error)
}

// Checker decides whether a link's targets are unsafe. Its zero value
// flags nothing.
type Checker struct {
	// Targets is the operator's target policy; nil: none.
	Targets linkforge.TargetPolicy
	// DNS is the filtering resolver; nil: none (nothing is sent anywhere).
	DNS Filter
}

// Enabled reports whether c can flag anything.
func (c *Checker) Enabled() bool { return c != nil && (c.Targets != nil || c.DNS != nil) }

// hostCache memoizes the verdicts of one run per host, so that the links
// of a popular host cost one query.
type hostCache struct {
	mu sync.Mutex
	m  map[string]string
}

// Reason returns why a target of l is unsafe ("" when none is): the first
// target whose host the policy blocks, else the first the resolver flags.
// cache (nil: none) holds the verdicts of earlier calls by host.
func (c *Checker) Reason(ctx context.Context, l *linkforge.Link, cache *hostCache) (string, error) {
	var hosts []string
	seen := map[string]bool{}
	l.TargetURLs(func(_, raw string) {
		h, err := linkforge.TargetURLHost(raw)
		if err == nil && !seen[h] {
			seen[h] = true
			hosts = append(hosts, h)
		}
	})
	for _, h := range hosts {
		if c.Targets != nil {
			if entry, ok := c.Targets.BlockedHost(h); ok {
				return ReasonBlocklist + entry, nil
			}
		}
	}
	if c.DNS == nil {
		return "", nil
	}
	for _, h := range hosts {
		r, err := c.dnsReason(ctx, h, cache)
		if err != nil || r != "" {
			return r, err
		}
	}
	return "", nil
}

func (c *Checker) dnsReason(ctx context.Context, host string, cache *hostCache) (string, error) {
	if cache != nil {
		cache.mu.Lock()
		r, ok := cache.m[host]
		cache.mu.Unlock()
		if ok {
			return r, nil
		}
	}
	flagged, err := c.DNS.Flagged(ctx, host)
	if err != nil {
		return "", fmt.Errorf("threat check of %s: %w", host, err)
	}
	r := ""
	if flagged {
		r = ReasonThreatDNS + host
	}
	if cache != nil {
		cache.mu.Lock()
		cache.m[host] = r
		cache.mu.Unlock()
	}
	return r, nil
}
