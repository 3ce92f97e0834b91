// Package health checks that links' targets still answer: a HEAD (then a
// GET whose body is not read, for servers that refuse HEAD), a few
// redirects followed, through the webhooks' address policy (public
// unicast addresses only, unless --webhook-allow-private), at most one
// request a second per host from a node, with a user agent that names
// LinkForge. A link is broken when a target answers 4xx or 5xx, does not
// answer in time, loops in redirects or cannot be reached.
//
// The Job re-checks every link on the node's one scheduler, as package
// safety's does (one node at a time under the job's lease), every
// --health-check-interval; POST /api/v1/links/{slug}/check checks one now.
package health

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/webhook"
)

// Defaults of Config's zero values.
const (
	DefaultTimeout      = 10 * time.Second
	DefaultMaxRedirects = 5
	DefaultPerHost      = time.Second
	// UserAgent names LinkForge to the sites it checks.
	UserAgent = "LinkForge-HealthCheck/1.0 (link target check; +https://github.com/linkforge/linkforge)"
)

// Config configures a Checker.
type Config struct {
	// AllowPrivate lets checks reach any address (--webhook-allow-private).
	AllowPrivate bool
	// Transport replaces the guarded transport (tests pass one with a
	// dial hook); nil: webhook.NewGuardedTransport of AllowPrivate.
	Transport http.RoundTripper
	// Timeout bounds one target's check, redirects included.
	Timeout time.Duration
	// MaxRedirects is how many redirects are followed before the target
	// counts as a loop.
	MaxRedirects int
	// PerHost is the least time between two requests to one host; a
	// negative value: no wait (tests).
	PerHost time.Duration
	Now     func() time.Time // nil: time.Now
}

// Checker checks targets. It is safe for concurrent use.
type Checker struct {
	client  *http.Client
	perHost time.Duration
	now     func() time.Time

	mu   sync.Mutex
	next map[string]time.Time // host: when it may be asked again
}

// New returns a Checker of cfg.
func New(cfg Config) *Checker {
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	if cfg.MaxRedirects <= 0 {
		cfg.MaxRedirects = DefaultMaxRedirects
	}
	if cfg.PerHost == 0 {
		cfg.PerHost = DefaultPerHost
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	rt := cfg.Transport
	if rt == nil {
		rt = webhook.NewGuardedTransport(webhook.TransportOptions{AllowPrivate: cfg.AllowPrivate})
	}
	c := &Checker{perHost: cfg.PerHost, now: cfg.Now, next: map[string]time.Time{}}
	maxRedirects := cfg.MaxRedirects
	c.client = &http.Client{Transport: rt, Timeout: cfg.Timeout,
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if len(via) > maxRedirects {
				return errTooManyRedirects
			}
			return c.polite(req.Context(), req.URL.Hostname())
		}}
	return c
}

var errTooManyRedirects = errors.New("too many redirects")

// polite waits until host may be asked again, and books its next slot.
func (c *Checker) polite(ctx context.Context, host string) error {
	if c.perHost < 0 {
		return nil
	}
	c.mu.Lock()
	now := c.now()
	at := c.next[host]
	if at.Before(now) {
		at = now
	}
	c.next[host] = at.Add(c.perHost)
	if len(c.next) > 10_000 { // forget the hosts of long ago
		for h, t := range c.next {
			if t.Before(now) {
				delete(c.next, h)
			}
		}
	}
	c.mu.Unlock()
	if wait := at.Sub(now); wait > 0 {
		t := time.NewTimer(wait)
		defer t.Stop()
		select {
		case <-t.C:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

// CheckURL checks one target: HEAD, then GET when HEAD is refused or
// fails; the answer's body is never read.
func (c *Checker) CheckURL(ctx context.Context, raw string) linkforge.LinkHealth {
	h := linkforge.LinkHealth{State: linkforge.HealthOK, CheckedAt: c.now().UTC()}
	u, err := url.Parse(raw)
	if err != nil {
		h.State, h.Error = linkforge.HealthBroken, "malformed URL"
		return h
	}
	status, err := c.ask(ctx, http.MethodHead, u)
	if err != nil || status >= 400 {
		status, err = c.ask(ctx, http.MethodGet, u)
	}
	h.Status = status
	switch {
	case err != nil:
		h.State, h.Error = linkforge.HealthBroken, describe(err)
	case status >= 400:
		h.State, h.Error = linkforge.HealthBroken, fmt.Sprintf("HTTP %d", status)
	}
	return h
}

func (c *Checker) ask(ctx context.Context, method string, u *url.URL) (int, error) {
	if err := c.polite(ctx, u.Hostname()); err != nil {
		return 0, err
	}
	req, err := http.NewRequestWithContext(ctx, method, u.String(), nil)
	if err != nil {
		return 0, err
	}
	req.Header.Set("User-Agent", UserAgent)
	resp, err := c.client.Do(req)
	if err != nil {
		return 0, err
	}
	// The body is not read: the status is the verdict.
	resp.Body.Close()
	return resp.StatusCode, nil
}

// describe is the error a link's health shows: short, and never an
// address the policy refused.
func describe(err error) string {
	var ue *url.Error
	switch {
	case errors.Is(err, errTooManyRedirects):
		return "redirect loop (more than the redirects followed)"
	case errors.Is(err, webhook.ErrPrivateAddress):
		return "refused: the target is not on a public address"
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &ue) && ue.Timeout():
		return "timeout"
	}
	msg := err.Error()
	if i := strings.LastIndex(msg, ": "); i >= 0 {
		msg = msg[i+2:]
	}
	return msg
}

// Check checks every http(s) target of l (its url, fallback, device,
// rule and variant URLs): broken at the first broken one, else ok.
func (c *Checker) Check(ctx context.Context, l *linkforge.Link) linkforge.LinkHealth {
	out := linkforge.LinkHealth{State: linkforge.HealthOK, CheckedAt: c.now().UTC()}
	seen := map[string]bool{}
	done := false
	l.TargetURLs(func(_, raw string) {
		// A target of a tenant's extra scheme (mailto:, an app's) has no
		// server to ask: it is not checked, and never broken.
		if done || seen[raw] || !linkforge.IsWebURL(raw) {
			return
		}
		seen[raw] = true
		h := c.CheckURL(ctx, raw)
		if out.Status == 0 {
			out.Status = h.Status
		}
		if h.State == linkforge.HealthBroken {
			out, done = h, true
		}
	})
	return out
}
