// Package client is the Go client of the LinkForge admin API, which a
// server describes in its OpenAPI document (GET /api/v1/openapi.json; the
// file is web/openapi.json): links, bulk creation, stats and breakdowns,
// tags, QR codes, import and export, alarms, webhooks, the tenant's quotas,
// and the live feed.
//
// It is written by hand over one small request core (do) rather than
// generated from web/openapi.json (docs/adr/019-command-line.md): a generator
// such as oapi-codegen would turn the tri-state PATCH body (absent, null,
// value), the streamed import and export, the mixed bulk answers, the
// Retry-After loop and the WebSocket feed into code we would wrap anyway,
// and would add a generator and a build step to every API change. What a generator guarantees, that the client and the
// document never drift, the table Operations and its test give instead:
// every operation of the served openapi.json must have a client method and
// every client method an operation.
//
// Every method takes a context. A problem answer (RFC 9457) comes back as
// *Error, found with errors.As, carrying the status, the problem code and
// the field errors. 429 and 503 answers are retried after their
// Retry-After, within RetryPolicy's bounds.
package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Client talks to one LinkForge server with one API token. It is safe for
// concurrent use.
type Client struct {
	base  *url.URL // scheme and host, and a path prefix if the server is mounted under one
	token string
	http  *http.Client
	retry RetryPolicy
	// sleep waits d or until ctx is done (WithSleep).
	sleep func(ctx context.Context, d time.Duration) error
	// live is the live feed's reconnection backoff.
	live LiveOptions
}

// RetryPolicy bounds the retries of answers 429 (rate limited) and 503
// (unavailable).
type RetryPolicy struct {
	// MaxAttempts is the number of tries of one call, the first included;
	// 1 disables retries.
	MaxAttempts int
	// MaxWait is the longest single wait: an answer that asks for longer
	// (its Retry-After) is returned to the caller instead of waited for;
	// 0: no bound.
	MaxWait time.Duration
	// DefaultWait is the wait when the answer has no usable Retry-After.
	DefaultWait time.Duration
}

// DefaultRetryPolicy: a token's rate limit refills within seconds, and a
// database failover takes tens of seconds, beyond which a script is better
// told than kept waiting.
var DefaultRetryPolicy = RetryPolicy{MaxAttempts: 4, MaxWait: 30 * time.Second, DefaultWait: time.Second}

// Option configures a Client.
type Option func(*Client)

// WithHTTPClient makes the client send its requests with hc (timeouts, TLS,
// proxies). The default is a client without a timeout: use contexts.
func WithHTTPClient(hc *http.Client) Option { return func(c *Client) { c.http = hc } }

// WithRetry replaces DefaultRetryPolicy.
func WithRetry(p RetryPolicy) Option { return func(c *Client) { c.retry = p } }

// WithLive replaces DefaultLiveOptions for Subscribe.
func WithLive(o LiveOptions) Option { return func(c *Client) { c.live = o } }

// WithSleep replaces how the client waits before a retry or a live feed
// reconnection: by default a timer that ends early with the context. A
// program with a clock of its own, or a test that moves a server's clock,
// waits its way; f returns ctx.Err() when ctx ends first.
func WithSleep(f func(ctx context.Context, d time.Duration) error) Option {
	return func(c *Client) { c.sleep = f }
}

// New returns a client of the server at serverURL (e.g.
// "https://sho.rt") authenticated with token.
func New(serverURL, token string, opts ...Option) (*Client, error) {
	u, err := url.Parse(strings.TrimSpace(serverURL))
	if err != nil {
		return nil, fmt.Errorf("client: server URL: %w", err)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("client: server URL %q: want http(s)://host[:port]", serverURL)
	}
	if u.RawQuery != "" || u.Fragment != "" {
		return nil, fmt.Errorf("client: server URL %q: no query or fragment expected", serverURL)
	}
	u.Path = strings.TrimSuffix(u.Path, "/")
	u.RawPath = ""
	c := &Client{base: u, token: token, http: &http.Client{}, retry: DefaultRetryPolicy, sleep: sleepCtx, live: DefaultLiveOptions}
	for _, o := range opts {
		o(c)
	}
	if c.retry.MaxAttempts < 1 {
		c.retry.MaxAttempts = 1
	}
	return c, nil
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// FieldError names one bad field of a request.
type FieldError struct {
	Field  string `json:"field"`
	Detail string `json:"detail"`
}

// Error is a problem answer of the server (RFC 9457), or an answer that is
// not the one the operation expects. Use errors.As to get it.
type Error struct {
	Method string `json:"-"`      // of the request
	Path   string `json:"-"`      // of the request, without the query
	Status int    `json:"status"` // HTTP status (of the answer, over the document's)
	Type   string `json:"type"`
	Title  string `json:"title"`
	Detail string `json:"detail"`
	// Code is the application error code ("invalid", "not_found",
	// "conflict", "rate_limited", "quota_exceeded", ...): stable, for
	// programs; Title and Detail are for people.
	Code   string       `json:"code"`
	Fields []FieldError `json:"errors"`
	// RetryAfter is the answer's Retry-After, when it had one.
	RetryAfter time.Duration `json:"-"`
}

func (e *Error) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s: %d", e.Method, e.Path, e.Status)
	if e.Title != "" {
		b.WriteString(" " + e.Title)
	}
	if e.Detail != "" {
		b.WriteString(": " + e.Detail)
	}
	for _, f := range e.Fields {
		fmt.Fprintf(&b, "; %s: %s", f.Field, f.Detail)
	}
	return b.String()
}

// Problem codes of the server: the code member of a problem answer, every
// value of the enum of schema Problem in the OpenAPI document.
const (
	CodeInvalid       = "invalid"        // 400: bad input; nothing was written
	CodeNotFound      = "not_found"      // 404: absent, or another tenant's
	CodeConflict      = "conflict"       // 409: the slug is taken
	CodeUnauthorized  = "unauthorized"   // 401: no token, or an unknown or revoked one
	CodeGone          = "gone"           // 410: expired, or its click limit is reached
	CodeTooLarge      = "too_large"      // 413: the request body is over the limit
	CodeRateLimited   = "rate_limited"   // 429: too many requests for this token
	CodeUnavailable   = "unavailable"    // 503: the server's database cannot be reached
	CodeInternal      = "internal"       // 500: a bug or an outage on the server
	CodeQuotaExceeded = "quota_exceeded" // 403: a tenant quota is reached
	CodeForbidden     = "forbidden"      // 403: the credential's role lacks the operation
	CodeBlockedTarget = "blocked_target" // 422: a target's host is on the operator's blocklist
	CodeUnsafeTarget  = "unsafe_target"  // 422: the operator's threat filter flags a target's host

	CodeMethodNotAllowed     = "method_not_allowed"     // 405: the route has no such method
	CodeUnsupportedMediaType = "unsupported_media_type" // 415: the body's Content-Type is not one the route reads
	CodeRequestTimeout       = "request_timeout"        // 408: the body did not arrive in time
)

// IsStatus reports whether err is an *Error with HTTP status status.
func IsStatus(err error, status int) bool {
	var e *Error
	return errors.As(err, &e) && e.Status == status
}

// request is one API call: what do sends, and what it expects back.
type request struct {
	method string
	path   string // escaped, from the API root: "/api/v1/links/abc"
	query  url.Values
	// body is sent as JSON when not nil; raw is sent as is (an import
	// file) with rawType.
	body    any
	raw     io.Reader
	rawType string
	want    int // the success status
	also    int // another success status (0: none)
	accept  string
}

// do sends r, retrying 429 and 503 within the retry policy, and returns the
// response of the expected status, whose body the caller closes. Any other
// answer is returned as *Error.
func (c *Client) do(ctx context.Context, r request) (*http.Response, error) {
	var payload []byte
	if r.body != nil {
		var err error
		if payload, err = json.Marshal(r.body); err != nil {
			return nil, fmt.Errorf("client: %s %s: encode body: %w", r.method, r.path, err)
		}
	}
	// r.path is escaped already: joined as text, not through url.URL.Path,
	// so that a slug's escapes survive.
	target := c.base.String() + r.path
	if len(r.query) > 0 {
		target += "?" + r.query.Encode()
	}

	for attempt := 1; ; attempt++ {
		var body io.Reader
		switch {
		case payload != nil:
			body = bytes.NewReader(payload)
		case r.raw != nil:
			body = r.raw
		}
		req, err := http.NewRequestWithContext(ctx, r.method, target, body)
		if err != nil {
			return nil, fmt.Errorf("client: %s %s: %w", r.method, r.path, err)
		}
		req.Header.Set("Authorization", "Bearer "+c.token)
		req.Header.Set("User-Agent", "linkforge-go-client")
		if r.accept != "" {
			req.Header.Set("Accept", r.accept)
		}
		if payload != nil {
			req.Header.Set("Content-Type", "application/json")
		} else if r.raw != nil && r.rawType != "" {
			req.Header.Set("Content-Type", r.rawType)
		}
		resp, err := c.http.Do(req)
		if err != nil {
			return nil, fmt.Errorf("client: %s %s: %w", r.method, r.path, err)
		}
		if resp.StatusCode == r.want || (r.also != 0 && resp.StatusCode == r.also) {
			return resp, nil
		}
		apiErr := readError(resp, r.method, r.path)
		wait, ok := c.retryWait(resp.StatusCode, apiErr.RetryAfter, attempt)
		// A streamed body is consumed by the first try: it can be sent
		// again only if it can be rewound.
		if ok && r.raw != nil {
			s, seekable := r.raw.(io.Seeker)
			ok = seekable
			if ok {
				if _, err := s.Seek(0, io.SeekStart); err != nil {
					ok = false
				}
			}
		}
		if !ok {
			return nil, apiErr
		}
		if err := c.sleep(ctx, wait); err != nil {
			return nil, fmt.Errorf("client: %s %s: waiting %v to retry: %w (last answer: %w)", r.method, r.path, wait, err, apiErr)
		}
	}
}

// retryWait decides whether the answer status is retried on attempt, and
// after how long.
func (c *Client) retryWait(status int, retryAfter time.Duration, attempt int) (time.Duration, bool) {
	if status != http.StatusTooManyRequests && status != http.StatusServiceUnavailable {
		return 0, false
	}
	if attempt >= c.retry.MaxAttempts {
		return 0, false
	}
	wait := retryAfter
	if wait <= 0 {
		wait = c.retry.DefaultWait
	}
	if c.retry.MaxWait > 0 && wait > c.retry.MaxWait {
		return 0, false
	}
	return wait, true
}

// maxErrorBody bounds what is read of an unexpected answer.
const maxErrorBody = 64 << 10

// readError reads an unexpected answer into an *Error and closes it.
func readError(resp *http.Response, method, path string) *Error {
	defer resp.Body.Close()
	e := &Error{Method: method, Path: path, Status: resp.StatusCode}
	if s := resp.Header.Get("Retry-After"); s != "" {
		if secs, err := strconv.Atoi(strings.TrimSpace(s)); err == nil && secs >= 0 {
			e.RetryAfter = time.Duration(secs) * time.Second
		} else if t, err := http.ParseTime(s); err == nil {
			e.RetryAfter = max(0, time.Until(t))
		}
	}
	data, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
	mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if mt == "application/problem+json" || mt == "application/json" {
		// The status of the answer wins over the document's.
		_ = json.Unmarshal(data, e)
		e.Status = resp.StatusCode
	}
	if e.Title == "" {
		e.Title = http.StatusText(resp.StatusCode)
	}
	return e
}

// call sends r and decodes the JSON answer into out (nil: the body is
// dropped).
func (c *Client) call(ctx context.Context, r request, out any) error {
	resp, err := c.do(ctx, r)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if out == nil {
		_, _ = io.Copy(io.Discard, resp.Body)
		return nil
	}
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		return fmt.Errorf("client: %s %s: decode answer: %w", r.method, r.path, err)
	}
	return nil
}

// seg escapes one path segment (a slug, an id).
func seg(s string) string { return url.PathEscape(s) }

// timeParam sets key to t in RFC 3339 unless t is zero.
func timeParam(q url.Values, key string, t time.Time) {
	if !t.IsZero() {
		q.Set(key, t.UTC().Format(time.RFC3339))
	}
}

// intParam sets key to n unless n is 0.
func intParam(q url.Values, key string, n int) {
	if n != 0 {
		q.Set(key, strconv.Itoa(n))
	}
}

// strParam sets key to s unless s is empty.
func strParam(q url.Values, key, s string) {
	if s != "" {
		q.Set(key, s)
	}
}
