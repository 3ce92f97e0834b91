// Package web is LinkForge's HTTP server: the redirect handler on the hot
// path (GET/HEAD /{slug}, served from an in-process link cache), the admin
// API under /api/v1 (bearer tokens, one tenant per token, JSON in and
// application/problem+json errors out), and the operational endpoints
// (/healthz, /readyz, /metrics, /api/v1/openapi.json) and the live dashboard
// (/dashboard and its WebSocket feed, /api/v1/live).
//
// The server is an echo instance, but its middleware is composed once when
// routes are registered rather than by echo's per-request chain: echo v4
// rebuilds the chain's closures on every request, which would cost the
// redirect path one allocation per middleware.
package web

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"golang.org/x/time/rate"

	"github.com/linkforge/linkforge"
)

// Defaults of Config's zero values.
const (
	DefaultRateLimit rate.Limit = 20 // admin API requests per second per token
	DefaultRateBurst            = 40
	DefaultCacheSize            = 100_000 // links kept by the redirect cache
)

// Config configures a Server. Store and PublicURL are required.
type Config struct {
	Store linkforge.Store
	// Counter counts redirects; nil: clicks are not counted (until the
	// LinkCounter lands). Record receives a pointer into the link cache: it
	// must not modify the link. If Counter also implements
	// ExhaustionChecker, HEAD requests answer 410 (or the fallback) for a link
	// whose click limit is reached, without counting.
	Counter linkforge.ClickCounter
	// PublicURL is the base of the short_url field; its host is a self host
	// for the redirect-loop check of url and fallback_url.
	PublicURL *url.URL
	Logger    *slog.Logger         // nil: discard
	Registry  *prometheus.Registry // nil: a new one
	Now       func() time.Time     // nil: time.Now
	// RateLimit is the admin API's rate per token; 0: DefaultRateLimit with
	// DefaultRateBurst. RateBurst 0 with a RateLimit set: the rate rounded
	// up, at least 1.
	RateLimit rate.Limit
	RateBurst int
	// CacheSize bounds the redirect cache; 0: DefaultCacheSize. Unknown slugs
	// are cached separately, in at most a tenth of that.
	CacheSize int
	// Live serves the live dashboard's WebSocket feed (GET /api/v1/live,
	// package dashboard's Hub); nil: that route answers 503.
	Live LiveFeed
	// Alarms is told about every alarm a link write or a replay stores
	// (*expiry.Scheduler); nil: the scheduler finds them by its periodic
	// re-read only.
	Alarms AlarmScheduler
	// Peers is told the slug of every link this node creates, updates or
	// deletes, so that the other nodes sharing the store drop it from
	// their caches (a linkforge.Bus); nil: a single node.
	Peers PeerInvalidator
}

// PeerInvalidator tells the other nodes of a cluster to drop a slug from
// their link caches. linkforge.Bus implements it. It must not block: it is
// called on the request path, after the write.
type PeerInvalidator interface {
	PublishInvalidate(slug string)
}

// ExhaustionChecker is implemented by click counters that can tell, without
// counting a click, whether a link's MaxClicks is reached. The redirect
// handler asks it on HEAD, so that a link preview never shows the target of
// an exhausted link.
type ExhaustionChecker interface {
	Exhausted(l *linkforge.Link) bool
}

// SkipRecorder is implemented by click counters that keep a metric of the
// redirects they were not asked to count (HEAD requests, link previews and
// crawlers), so that operators can see the traffic that is not clicks.
type SkipRecorder interface {
	Skipped(reason string)
}

// Server serves LinkForge's HTTP interface. It is an http.Handler.
type Server struct {
	echo      *echo.Echo
	store     linkforge.Store
	counter   linkforge.ClickCounter
	exhausted ExhaustionChecker // nil unless counter implements it
	skipped   SkipRecorder      // nil unless counter implements it
	logger    *slog.Logger
	now       func() time.Time
	cache     *linkCache
	limiter   *tokenLimiter
	metrics   *httpMetrics
	registry  *prometheus.Registry
	shortBase string   // PublicURL without a trailing slash; short_url = shortBase + "/" + slug
	selfHosts []string // PublicURL's host, for the redirect-loop check
	live      LiveFeed // nil: GET /api/v1/live answers 503
	// alarms is told about the alarms the API stores; nil: none to tell.
	alarms AlarmScheduler
	// peers is told about the link writes; nil: a single node.
	peers PeerInvalidator
	// publicOrigin is PublicURL, the origin the live feed admits besides
	// the request's own.
	publicOrigin *url.URL
	// dbDown is the database's state as /readyz last saw it.
	dbDown atomic.Bool
}

// New returns a Server with every route registered.
func New(cfg Config) (*Server, error) {
	if cfg.Store == nil {
		return nil, errors.New("web: Config.Store is required")
	}
	if cfg.PublicURL == nil || cfg.PublicURL.Host == "" ||
		(cfg.PublicURL.Scheme != "http" && cfg.PublicURL.Scheme != "https") {
		return nil, fmt.Errorf("web: Config.PublicURL must be an absolute http(s) URL, got %v", cfg.PublicURL)
	}
	s := &Server{
		store:     cfg.Store,
		counter:   cfg.Counter,
		logger:    cfg.Logger,
		now:       cfg.Now,
		registry:  cfg.Registry,
		shortBase: strings.TrimSuffix(cfg.PublicURL.String(), "/"),
		selfHosts: []string{selfHost(cfg.PublicURL)},
		live:      cfg.Live,
		alarms:    cfg.Alarms,
		peers:     cfg.Peers,

		publicOrigin: cfg.PublicURL,
	}
	if s.logger == nil {
		s.logger = slog.New(slog.DiscardHandler)
	}
	if s.now == nil {
		s.now = time.Now
	}
	if s.registry == nil {
		s.registry = prometheus.NewRegistry()
	}
	if ec, ok := cfg.Counter.(ExhaustionChecker); ok {
		s.exhausted = ec
	}
	if sr, ok := cfg.Counter.(SkipRecorder); ok {
		s.skipped = sr
	}
	size := cfg.CacheSize
	if size <= 0 {
		size = DefaultCacheSize
	}
	var err error
	heard, _ := cfg.Peers.(PeerHealth)
	if s.cache, err = newLinkCache(cfg.Store, s.now, size, s.registry, heard); err != nil {
		return nil, err
	}
	limit, burst := cfg.RateLimit, cfg.RateBurst
	if limit == 0 {
		limit, burst = DefaultRateLimit, DefaultRateBurst
	}
	if burst <= 0 {
		burst = max(1, int(limit+0.999999))
	}
	if s.limiter, err = newTokenLimiter(limit, burst, s.now); err != nil {
		return nil, err
	}
	if s.metrics, err = newHTTPMetrics(s.registry); err != nil {
		return nil, err
	}
	for _, c := range []prometheus.Collector{
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
	} {
		// cmd or another Server may have registered them on a shared
		// registry already; one copy is what we want.
		if err := s.registry.Register(c); err != nil && !errors.As(err, new(prometheus.AlreadyRegisteredError)) {
			return nil, fmt.Errorf("web: register collector: %w", err)
		}
	}
	s.routes()
	return s, nil
}

// selfHost returns u's host with its scheme's default port dropped, the form
// linkforge.ValidateTargetURL expects.
func selfHost(u *url.URL) string {
	host, port := u.Hostname(), u.Port()
	if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	if port == "" || (u.Scheme == "http" && port == "80") || (u.Scheme == "https" && port == "443") {
		return host
	}
	return host + ":" + port
}

// ServeHTTP serves one request.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.echo.ServeHTTP(w, r)
}

// Invalidate drops slug from this node's link cache, positive or negative,
// so that the next redirect reads the store. The admin API calls it after
// every write; expiry and cross-node invalidation (another node's write)
// call it later.
func (s *Server) Invalidate(slug string) {
	s.cache.invalidate(slug)
}

// InvalidateAll empties this node's link cache. The cluster bus calls it
// when it starts listening again after a lost connection: the other nodes'
// invalidations sent meanwhile are lost, and emptying the cache costs one
// lookup per hot link instead of up to a TTL of stale redirects.
func (s *Server) InvalidateAll() {
	s.cache.purge()
}

// invalidateEverywhere drops slug from this node's cache at once and tells
// the other nodes to do the same, after a write through this node's API.
func (s *Server) invalidateEverywhere(slug string) {
	s.Invalidate(slug)
	if s.peers != nil {
		s.peers.PublishInvalidate(slug)
	}
}

// API paths, also the templates the metrics and the OpenAPI test see.
const (
	apiPrefix     = "/api/v1"
	pathLinks     = apiPrefix + "/links"
	pathLink      = pathLinks + "/:slug"
	pathLinkStats = pathLink + "/stats"
	pathStats     = apiPrefix + "/stats"
	pathOpenAPI   = apiPrefix + "/openapi.json"
	pathLive      = apiPrefix + "/live"
	pathAlarms    = apiPrefix + "/alarms"
	pathRetry     = pathAlarms + "/:id/retry"
)

func (s *Server) routes() {
	e := echo.New()
	e.HideBanner = true
	e.HidePort = true
	// Echo's own logger would only report "response already committed";
	// we log through slog where it matters.
	e.Logger.SetOutput(io.Discard)
	// Errors of handlers registered below are answered inside instrument;
	// this handler sees only what echo's router answers by itself (405).
	e.HTTPErrorHandler = s.routerError
	s.echo = e

	add := func(method, path string, h echo.HandlerFunc, mw ...echo.MiddlewareFunc) {
		// Compose once: see the package comment.
		for i := len(mw) - 1; i >= 0; i-- {
			h = mw[i](h)
		}
		e.Add(method, path, s.instrument(h))
	}
	api := []echo.MiddlewareFunc{s.authenticate, s.rateLimit}
	withBody := append(api[:len(api):len(api)], limitBody)

	add(http.MethodGet, "/:slug", s.redirect)
	add(http.MethodHead, "/:slug", s.redirect)

	add(http.MethodPost, pathLinks, s.createLink, withBody...)
	add(http.MethodGet, pathLinks, s.listLinks, api...)
	add(http.MethodGet, pathLink, s.getLink, api...)
	add(http.MethodPatch, pathLink, s.patchLink, withBody...)
	add(http.MethodDelete, pathLink, s.deleteLink, api...)
	add(http.MethodGet, pathLinkStats, s.linkStats, api...)
	add(http.MethodGet, pathStats, s.tenantStats, api...)
	add(http.MethodGet, pathAlarms, s.listAlarms, api...)
	add(http.MethodPost, pathRetry, s.retryAlarm, api...)
	add(http.MethodGet, pathLive, s.serveLive, append([]echo.MiddlewareFunc{s.liveGate}, api...)...)

	add(http.MethodGet, pathOpenAPI, s.openAPI)
	add(http.MethodGet, "/healthz", s.healthz)
	add(http.MethodGet, "/readyz", s.readyz)
	add(http.MethodGet, "/metrics", echo.WrapHandler(promhttp.HandlerFor(s.registry, promhttp.HandlerOpts{
		ErrorLog: slog.NewLogLogger(s.logger.Handler(), slog.LevelError),
	})))
	add(http.MethodGet, "/dashboard", s.dashboardAsset)
	add(http.MethodGet, pathDashboardJS, s.dashboardAsset)
	add(http.MethodGet, pathDashboardCSS, s.dashboardAsset)
	// No RouteNotFound: echo gives a user 404 handler priority over its 405,
	// and would answer 404 to PUT /api/v1/links. Paths of several segments
	// reach the redirect handler anyway (echo's router falls back to
	// /:slug), which refuses them as malformed slugs; the rest (GET /)
	// reach routerError.
}
