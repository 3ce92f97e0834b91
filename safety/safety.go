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
// of a popular host cost one query, even when they are checked at once.
type hostCache struct {
	mu sync.Mutex
	m  map[string]*verdict
}

// verdict is one host's answer; done is closed once it is set.
type verdict struct {
	done   chan struct{}
	reason string
	err    error
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
	if cache == nil {
		return c.askDNS(ctx, host)
	}
	cache.mu.Lock()
	v, ok := cache.m[host]
	if !ok {
		v = &verdict{done: make(chan struct{})}
		cache.m[host] = v
	}
	cache.mu.Unlock()
	if ok {
		select {
		case <-v.done:
			return v.reason, v.err
		case <-ctx.Done():
			return "", fmt.Errorf("threat check of %s: %w", host, ctx.Err())
		}
	}
	v.reason, v.err = c.askDNS(ctx, host)
	close(v.done)
	return v.reason, v.err
}

func (c *Checker) askDNS(ctx context.Context, host string) (string, error) {
	flagged, err := c.DNS.Flagged(ctx, host)
	if err != nil {
		return "", fmt.Errorf("threat check of %s: %w", host, err)
	}
	if flagged {
		return ReasonThreatDNS + host, nil
	}
	return "", nil
}

// CheckNew is the check of a link about to be created: an EUnsafeTarget
// error naming each target field whose host the resolver flags (the
// blocklist is linkforge.CheckTargets', which runs first). A resolver that
// does not answer lets the write through: the Job checks again.
func (c *Checker) CheckNew(ctx context.Context, l *linkforge.Link) error {
	found := c.flaggedTargets(ctx, l, nil)
	if len(found) == 0 {
		return nil
	}
	fields := make([]linkforge.FieldError, len(found))
	for i, f := range found {
		fields[i] = linkforge.FieldError{Field: f.field, Detail: "its host " + f.host + " is flagged as unsafe by the threat filter"}
	}
	return &linkforge.Error{Code: linkforge.EUnsafeTarget,
		Message: "the target of " + fields[0].Field + " is flagged as unsafe by the operator's threat filter", Fields: fields}
}

// NewTargetReason is the check of a link just updated: the reason to flag
// it ("" when none) for its first target that is not in kept (the target
// URLs before the update) and whose host the resolver flags. An update is
// not refused for it: its lookups would run inside the store's
// transaction.
func (c *Checker) NewTargetReason(ctx context.Context, kept map[string]bool, l *linkforge.Link) string {
	found := c.flaggedTargets(ctx, l, kept)
	if len(found) == 0 {
		return ""
	}
	return ReasonThreatDNS + found[0].host
}

// flaggedTarget is a target field whose host the resolver flags.
type flaggedTarget struct{ field, host string }

// flaggedTargets returns the targets of l not in kept whose host the
// resolver flags.
func (c *Checker) flaggedTargets(ctx context.Context, l *linkforge.Link, kept map[string]bool) []flaggedTarget {
	if c == nil || c.DNS == nil {
		return nil
	}
	var found []flaggedTarget
	verdict := map[string]bool{}
	l.TargetURLs(func(field, raw string) {
		if kept[raw] {
			return
		}
		h, err := linkforge.TargetURLHost(raw)
		if err != nil {
			return
		}
		flagged, ok := verdict[h]
		if !ok {
			flagged, err = c.DNS.Flagged(ctx, h)
			if err != nil {
				return
			}
			verdict[h] = flagged
		}
		if flagged {
			found = append(found, flaggedTarget{field, h})
		}
	})
	return found
}
