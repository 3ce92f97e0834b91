package domain

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/schedule"
	"github.com/linkforge/linkforge/webhook"
)

// VerificationPath is where a domain's verification is fetched, followed
// by its id; the server answers it with the domain's token.
const VerificationPath = "/.well-known/linkforge-domain/"

// VerificationURL is the URL --domain-verify http fetches for d.
func VerificationURL(d linkforge.Domain) string {
	return "http://" + d.Host + VerificationPath + strconv.FormatInt(d.ID, 10)
}

// NewToken returns a new verification token: 32 random bytes, hex.
func NewToken() string {
	var b [32]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails
	return hex.EncodeToString(b[:])
}

// VerifyStore is what a Verifier needs of linkforge.Store.
type VerifyStore interface {
	NextDomainVerification(ctx context.Context) (time.Time, bool, error)
	ClaimDomainVerifications(ctx context.Context, now time.Time, lease time.Duration, limit int) ([]linkforge.Domain, error)
	UpdateDomain(ctx context.Context, tenantID int64, host string, fn func(*linkforge.Domain) error) (linkforge.Domain, error)
	TenantDomain(ctx context.Context, tenantID int64, host string) (linkforge.Domain, error)
	DeleteDomain(ctx context.Context, tenantID int64, host string) (linkforge.Domain, error)
	AllDomains(ctx context.Context) ([]linkforge.Domain, error)
}

// Verification bounds.
const (
	// maxVerifyDelay caps the alarm backoff between two attempts, so that
	// a DNS record added hours later is seen within the hour.
	maxVerifyDelay = time.Hour
	// verifyTimeout bounds one fetch.
	verifyTimeout = 10 * time.Second
	// maxAnswerBytes bounds what is read of an answer.
	maxAnswerBytes = 1024
)

// VerifierConfig configures a Verifier; Store is required.
type VerifierConfig struct {
	Store VerifyStore
	// Mode is what proves a domain: VerifyDNS (the default) reads its TXT
	// record; VerifyHTTP and VerifyNone (whose new domains are verified
	// at once, so only older ones are pending) fetch its verification
	// URL.
	Mode VerifyMode
	// Dial connects to the domain's address once the address policy
	// allowed it (with AllowPrivate, to its host:port unchecked); nil is
	// net.Dialer's. Tests dial a loopback receiver instead.
	Dial func(ctx context.Context, network, addr string) (net.Conn, error)
	// Resolver resolves the domains' names; nil: the system's. Tests ask
	// a DNS server of their own on loopback.
	Resolver *net.Resolver
	// AllowPrivate lets the fetch reach loopback, private, link-local and
	// unique-local addresses (--webhook-allow-private); refused by
	// default, as webhooks' are (webhook.Private).
	AllowPrivate bool
	// Changed is told of every domain a verification wrote (the host
	// tables); nil: nobody.
	Changed func(d linkforge.Domain)
	Logger  *slog.Logger     // nil: discard
	Now     func() time.Time // nil: time.Now
}

// Verifier checks pending domains (their TXT record, or their
// verification URL): now for POST .../verify, and as due work of the
// node's one scheduler (schedule.Work) otherwise, retried with the alarm
// backoff, at most an hour apart, until PendingTTL after the domain's
// creation; then the scheduler's claim deletes the domain, which frees
// its host.
type Verifier struct {
	cfg    VerifierConfig
	client *http.Client
	wg     sync.WaitGroup

	mu      sync.Mutex
	planned bool // planUnplanned ran to its end
}

var _ schedule.Work = (*Verifier)(nil)

// NewVerifier returns a Verifier on cfg.
func NewVerifier(cfg VerifierConfig) (*Verifier, error) {
	if cfg.Store == nil {
		return nil, fmt.Errorf("domain: VerifierConfig.Store is required")
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Mode == "" {
		cfg.Mode = VerifyDNS
	}
	var tr *http.Transport
	if cfg.AllowPrivate {
		dial := cfg.Dial
		if dial == nil {
			dial = (&net.Dialer{Timeout: verifyTimeout, Resolver: cfg.Resolver}).DialContext
		}
		tr = &http.Transport{DialContext: dial}
	} else {
		// The webhooks' address policy: the fetch is a request the server
		// makes to a name a tenant chose, so it may reach only what a
		// webhook may (public unicast, checked on the resolved addresses
		// and again on the socket).
		o := webhook.TransportOptions{Dial: cfg.Dial}
		if cfg.Resolver != nil {
			o.Resolver = cfg.Resolver
		}
		tr = webhook.NewGuardedTransport(o)
	}
	// Proxies from the environment would answer for the host themselves:
	// the point is where the host's own DNS leads.
	tr.Proxy, tr.DisableKeepAlives = nil, true
	client := &http.Client{
		Timeout:   verifyTimeout,
		Transport: tr,
		// The answer must come from the host itself.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	return &Verifier{cfg: cfg, client: client}, nil
}

// Name implements schedule.Work.
func (v *Verifier) Name() string { return "domain_verification" }

// NextDue implements schedule.Work.
func (v *Verifier) NextDue(ctx context.Context) (time.Time, bool, error) {
	if err := v.planUnplanned(ctx); err != nil {
		return time.Time{}, false, err
	}
	return v.cfg.Store.NextDomainVerification(ctx)
}

// planUnplanned, once per process, makes an attempt due now for every
// pending domain that has none planned: earlier versions stopped trying
// a day after the domain was added, and such a domain would otherwise
// hold its host for ever instead of expiring after PendingTTL.
func (v *Verifier) planUnplanned(ctx context.Context) error {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.planned {
		return nil
	}
	ds, err := v.cfg.Store.AllDomains(ctx)
	if err != nil {
		return fmt.Errorf("plan domain verifications: %w", err)
	}
	now := v.cfg.Now()
	for _, d := range ds {
		if d.State != linkforge.DomainPending || d.VerifyDueAt != nil {
			continue
		}
		_, err := v.cfg.Store.UpdateDomain(ctx, d.TenantID, d.Host, func(cur *linkforge.Domain) error {
			if cur.State == linkforge.DomainPending && cur.VerifyDueAt == nil {
				cur.VerifyDueAt = &now
			}
			return nil
		})
		if err != nil && linkforge.ErrorCode(err) != linkforge.ENotFound {
			return fmt.Errorf("plan verification of %s: %w", d.Host, err)
		}
	}
	v.planned = true
	return nil
}

// Claim implements schedule.Work: each claimed domain is fetched in the
// background, and its outcome recorded.
func (v *Verifier) Claim(ctx context.Context, c schedule.Claim) (int, error) {
	ds, err := v.cfg.Store.ClaimDomainVerifications(ctx, c.Now, c.Lease, c.Limit)
	if err != nil {
		return 0, fmt.Errorf("claim domain verifications: %w", err)
	}
	for _, d := range ds {
		v.wg.Add(1)
		go func() {
			defer v.wg.Done()
			actx, cancel := context.WithTimeout(context.WithoutCancel(ctx), c.Lease/2)
			defer cancel()
			// ENotFound: the domain expired here, or went meanwhile.
			if _, err := v.attempt(actx, d, c.Backoff, c.Wake); err != nil && linkforge.ErrorCode(err) != linkforge.ENotFound {
				v.cfg.Logger.Error("domain verification: record", "host", d.Host, "domain_id", d.ID, "error", err)
			}
		}()
	}
	return len(ds), nil
}

// Wait waits for the attempts in flight (a stop).
func (v *Verifier) Wait() { v.wg.Wait() }

// VerifyNow checks d at once and records the outcome; a failure plans the
// next attempt with the alarm backoff. A pending domain past PendingTTL
// is deleted instead: ENotFound.
func (v *Verifier) VerifyNow(ctx context.Context, d linkforge.Domain, wake func(time.Time)) (linkforge.Domain, error) {
	if d.State == linkforge.DomainVerified {
		return d, nil
	}
	return v.attempt(ctx, d, schedule.JitteredBackoff, wake)
}

// attempt checks d and records the outcome: verified, or the attempt
// counted and the next one planned, the last at the domain's expiry
// (PendingTTL after its creation), when the attempt deletes it instead.
func (v *Verifier) attempt(ctx context.Context, d linkforge.Domain, backoff func(int) time.Duration, wake func(time.Time)) (linkforge.Domain, error) {
	expires := d.CreatedAt.Add(PendingTTL)
	if !v.cfg.Now().Before(expires) {
		return linkforge.Domain{}, v.expire(ctx, d)
	}
	ferr := v.check(ctx, d)
	now := v.cfg.Now()
	var next *time.Time
	out, err := v.cfg.Store.UpdateDomain(ctx, d.TenantID, d.Host, func(cur *linkforge.Domain) error {
		if cur.ID != d.ID || cur.State == linkforge.DomainVerified {
			return nil // re-created meanwhile, or verified by another attempt
		}
		cur.VerifyAttempts++
		if ferr == nil {
			cur.State, cur.VerifiedAt, cur.VerifyDueAt, cur.VerifyError = linkforge.DomainVerified, &now, nil, ""
			return nil
		}
		cur.VerifyError = truncateError(ferr.Error())
		at := now.Add(min(backoff(cur.VerifyAttempts), maxVerifyDelay))
		if at.After(expires) {
			at = expires
		}
		cur.VerifyDueAt, next = &at, &at
		return nil
	})
	if err != nil {
		return linkforge.Domain{}, fmt.Errorf("record verification of %s: %w", d.Host, err)
	}
	if ferr != nil {
		v.cfg.Logger.Info("domain verification failed", "host", d.Host, "domain_id", d.ID,
			"attempt", out.VerifyAttempts, "error", ferr.Error())
	} else {
		v.cfg.Logger.Info("domain verified", "host", d.Host, "domain_id", d.ID, "attempt", out.VerifyAttempts)
	}
	if next != nil && wake != nil {
		wake(*next)
	}
	if v.cfg.Changed != nil {
		v.cfg.Changed(out)
	}
	return out, nil
}

// expire deletes d, a pending domain past PendingTTL, which frees its
// host; ENotFound tells the caller it is gone. A domain verified or
// re-created meanwhile is left alone.
func (v *Verifier) expire(ctx context.Context, d linkforge.Domain) error {
	cur, err := v.cfg.Store.TenantDomain(ctx, d.TenantID, d.Host)
	if err != nil {
		return fmt.Errorf("expire domain %s: %w", d.Host, err)
	}
	if cur.ID != d.ID || cur.State != linkforge.DomainPending {
		return linkforge.Errorf(linkforge.ENotFound, "domain %s changed meanwhile", d.Host)
	}
	// A verification that lands between the read above and this delete
	// is lost with the domain: it could only be one made in the same
	// instant as the expiry, and the tenant adds the domain again.
	gone, err := v.cfg.Store.DeleteDomain(ctx, d.TenantID, d.Host)
	if err != nil {
		return fmt.Errorf("expire domain %s: %w", d.Host, err)
	}
	v.cfg.Logger.Info("pending domain expired", "host", d.Host, "domain_id", d.ID, "tenant_id", d.TenantID,
		"pending_for", PendingTTL.String())
	if v.cfg.Changed != nil {
		v.cfg.Changed(gone)
	}
	return linkforge.Errorf(linkforge.ENotFound, "domain %s was pending for %s and expired: add it again",
		d.Host, PendingTTL)
}

// check proves d as the mode says: its TXT record, or its verification
// URL.
func (v *Verifier) check(ctx context.Context, d linkforge.Domain) error {
	if v.cfg.Mode == VerifyDNS {
		return v.lookupTXT(ctx, d)
	}
	return v.fetch(ctx, d)
}

// lookupTXT checks that the TXT record RecordName(d.Host) holds d's token:
// proof that whoever added the domain controls its DNS.
func (v *Verifier) lookupTXT(ctx context.Context, d linkforge.Domain) error {
	name := RecordName(d.Host)
	r := v.cfg.Resolver
	if r == nil {
		r = net.DefaultResolver
	}
	ctx, cancel := context.WithTimeout(ctx, verifyTimeout)
	defer cancel()
	txts, err := r.LookupTXT(ctx, name)
	var dnsErr *net.DNSError
	if errors.As(err, &dnsErr) && dnsErr.IsNotFound {
		return fmt.Errorf("no TXT record at %s: add one holding the domain's verification_token", name)
	}
	if err != nil {
		return fmt.Errorf("look up the TXT record at %s: %w", name, err)
	}
	for _, t := range txts {
		if d.VerifyToken != "" && strings.TrimSpace(t) == d.VerifyToken {
			return nil
		}
	}
	return fmt.Errorf("the TXT record at %s does not hold the domain's verification_token", name)
}

// fetch requests d's verification URL and checks that the answer is d's
// token: proof that the host's DNS reaches this deployment.
func (v *Verifier) fetch(ctx context.Context, d linkforge.Domain) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, VerificationURL(d), nil)
	if err != nil {
		return fmt.Errorf("verification request: %w", err)
	}
	req.Header.Set("User-Agent", "LinkForge-domain-verification")
	resp, err := v.client.Do(req)
	if err != nil {
		return fmt.Errorf("fetch %s: %w", VerificationURL(d), err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswerBytes))
	if err != nil {
		return fmt.Errorf("read %s: %w", VerificationURL(d), err)
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s answered %d, want 200 from this deployment: does the host's DNS point here?", VerificationURL(d), resp.StatusCode)
	}
	if d.VerifyToken == "" || strings.TrimSpace(string(body)) != d.VerifyToken {
		return fmt.Errorf("%s answered, but not with this deployment's token: the host's DNS points to another server", VerificationURL(d))
	}
	return nil
}

func truncateError(s string) string {
	if len(s) > 500 {
		return s[:500]
	}
	return s
}
