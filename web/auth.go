package web

import (
	"fmt"
	"math"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	lru "github.com/hashicorp/golang-lru/v2"
	"github.com/labstack/echo/v4"
	"golang.org/x/time/rate"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/access"
)

// Keys of the values authenticate stores in the echo context.
const (
	ctxTenantID = "linkforge.tenant_id"
	ctxTokenID  = "linkforge.token_id"
	ctxRole     = "linkforge.role" // a linkforge.Role; absent: not authenticated
)

// authenticate admits requests that carry "Authorization: Bearer <token>"
// with an unrevoked token, and records its tenant in the context. Anything
// that does not even look like a token is refused before it costs a query.
//
// Tokens are deliberately not cached: each request reads the store (one
// index probe), so that a revocation, made by the CLI in another process
// and possibly for another node, refuses the very next request everywhere.
// Live feeds, authenticated once at their upgrade, are checked again by the
// feed itself (dashboard.Config.Tokens).
func (s *Server) authenticate(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		header := c.Request().Header.Get("Authorization")
		if header == "" {
			if ck, err := c.Request().Cookie(sessionCookie); err == nil && ck.Value != "" {
				return s.authenticateSession(c, ck.Value, next)
			}
			return linkforge.Errorf(linkforge.EUnauthorized, "missing bearer token: send Authorization: Bearer <token>")
		}
		scheme, secret, _ := strings.Cut(header, " ")
		if !strings.EqualFold(scheme, "Bearer") {
			c.Response().Header().Set("WWW-Authenticate", `Bearer realm="linkforge", error="invalid_request"`)
			return linkforge.Errorf(linkforge.EUnauthorized, "the Authorization header must use the Bearer scheme")
		}
		secret = strings.TrimSpace(secret)
		if !linkforge.LooksLikeToken(secret) {
			return invalidToken(c)
		}
		tok, err := s.store.TokenByHash(c.Request().Context(), linkforge.HashToken(secret))
		if linkforge.ErrorCode(err) == linkforge.ENotFound {
			return invalidToken(c)
		}
		if err != nil {
			return fmt.Errorf("authenticate: %w", err)
		}
		if tok.TenantSuspended {
			return linkforge.ErrTenantSuspended()
		}
		c.Set(ctxTenantID, tok.TenantID)
		c.Set(ctxTokenID, tok.ID)
		c.Set(ctxRole, roleValues[tok.Role])
		if m := c.Request().Method; m != http.MethodGet && m != http.MethodHead {
			// The writes' audit events name the token: the stores read the
			// actor inside each write transaction. Reads skip the
			// request copy this costs.
			r := c.Request()
			c.SetRequest(r.WithContext(linkforge.WithActor(r.Context(),
				linkforge.Actor{Type: linkforge.ActorToken, ID: tok.ID, Name: tok.Name})))
		}
		return next(c)
	}
}

func invalidToken(c echo.Context) error {
	c.Response().Header().Set("WWW-Authenticate", `Bearer realm="linkforge", error="invalid_token"`)
	return linkforge.Errorf(linkforge.EUnauthorized, "the bearer token is unknown or revoked")
}

// roleValues are the roles as context values, boxed once: boxing a string
// on every request would cost the admin API an allocation.
var roleValues = func() map[linkforge.Role]any {
	m := make(map[linkforge.Role]any, len(linkforge.Roles))
	for _, r := range linkforge.Roles {
		m[r] = r
	}
	return m
}()

// authorize runs next only for a caller whose role covers need (package
// access decides; router.add wraps every route that is not public).
func authorize(need linkforge.Role, next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		have, _ := c.Get(ctxRole).(linkforge.Role)
		if err := access.Check(have, need); err != nil {
			return err
		}
		return next(c)
	}
}

// tenantID returns the tenant that authenticate admitted.
func tenantID(c echo.Context) int64 {
	id, _ := c.Get(ctxTenantID).(int64)
	return id
}

// tokenLimiter keeps one token bucket per API token. It is bounded: the
// least recently used buckets are forgotten, which at worst gives an idle
// token a full burst again.
type tokenLimiter struct {
	limit rate.Limit
	burst int
	now   func() time.Time

	mu       sync.Mutex // makes get-or-create atomic
	limiters *lru.Cache[int64, *rate.Limiter]
}

func newTokenLimiter(limit rate.Limit, burst int, now func() time.Time) (*tokenLimiter, error) {
	c, err := lru.New[int64, *rate.Limiter](10_000)
	if err != nil {
		return nil, fmt.Errorf("web: rate limiter: %w", err)
	}
	return &tokenLimiter{limit: limit, burst: burst, now: now, limiters: c}, nil
}

// newLiveLimiter returns the live feed's upgrade limiter, with Config's
// rules for LiveRateLimit and LiveRateBurst.
func newLiveLimiter(cfg Config, now func() time.Time) (*tokenLimiter, error) {
	limit, burst := cfg.LiveRateLimit, cfg.LiveRateBurst
	if limit == 0 {
		limit, burst = DefaultLiveRateLimit, DefaultLiveRateBurst
	}
	if burst <= 0 {
		burst = max(1, int(limit+0.999999))
	}
	return newTokenLimiter(limit, burst, now)
}

// allow takes one request from the token's bucket, or reports how long until
// one would be available.
func (t *tokenLimiter) allow(tokenID int64) (bool, time.Duration) {
	t.mu.Lock()
	lim, ok := t.limiters.Get(tokenID)
	if !ok {
		lim = rate.NewLimiter(t.limit, t.burst)
		t.limiters.Add(tokenID, lim)
	}
	t.mu.Unlock()

	now := t.now()
	r := lim.ReserveN(now, 1)
	if !r.OK() { // burst < 1: never
		return false, time.Hour
	}
	if d := r.DelayFrom(now); d > 0 {
		r.CancelAt(now)
		return false, d
	}
	return true, 0
}

// rateLimit answers 429 with Retry-After once a token exceeds its admin
// API rate. It runs after authenticate, so the bucket is the token's, not
// the client address's.
func (s *Server) rateLimit(next echo.HandlerFunc) echo.HandlerFunc {
	return limitWith(s.limits.api, "too many requests for this token", next)
}

// liveRateLimit is rateLimit for the live feed's upgrades, with buckets of
// their own: the viewers of a dashboard often share one token, and a node
// restart makes all of them reconnect at once, so the API's 40-request
// burst would refuse all but a few of them. Upgrades take nothing from the
// API's buckets, and the other way round.
func (s *Server) liveRateLimit(next echo.HandlerFunc) echo.HandlerFunc {
	return limitWith(s.limits.live, "too many live feed connections opened with this token", next)
}

func limitWith(l *tokenLimiter, what string, next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		id, _ := c.Get(ctxTokenID).(int64)
		if ok, wait := l.allow(id); !ok {
			secs := max(1, int(math.Ceil(wait.Seconds())))
			c.Response().Header().Set("Retry-After", strconv.Itoa(secs))
			return linkforge.Errorf(linkforge.ERateLimited, "%s; retry in %d s", what, secs)
		}
		return next(c)
	}
}
