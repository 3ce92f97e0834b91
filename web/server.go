// Package web is LinkForge's HTTP server: its route table, which mounts
// the hot path's handlers (package redirect: GET/HEAD /{slug} and GET /,
// served from the link cache), the admin API under /api/v1 (bearer
// tokens, one tenant per token, JSON in and application/problem+json
// errors out), the operational endpoints (/healthz, /readyz, /metrics,
// /api/v1/openapi.json), sign-in and the live dashboard (/dashboard and
// its WebSocket feed, /api/v1/live).
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
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"golang.org/x/time/rate"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/access"
	"github.com/linkforge/linkforge/classify"
	"github.com/linkforge/linkforge/domain"
	"github.com/linkforge/linkforge/health"
	"github.com/linkforge/linkforge/linkcache"
	"github.com/linkforge/linkforge/links"
	"github.com/linkforge/linkforge/oidclogin"
	"github.com/linkforge/linkforge/password"
	"github.com/linkforge/linkforge/people"
	"github.com/linkforge/linkforge/redirect"
	"github.com/linkforge/linkforge/visitor"
	"github.com/linkforge/linkforge/webhook"
)

// Defaults of Config's zero values.
const (
	DefaultRateLimit = rate.Limit(20) // admin API requests per second per token
	DefaultRateBurst = 40
	DefaultCacheSize = 100_000 // links kept by the redirect cache
	// DefaultCacheBytes bounds the bytes of the redirect cache's entries
	// (--link-cache-bytes): a link with much routing takes a few hundred
	// kilobytes of it, a plain one well under one.
	DefaultCacheBytes = 256 << 20
	// DefaultLiveRateLimit and DefaultLiveRateBurst limit the live feed's
	// upgrades per token: 1,000 viewers sharing a token (re)connect at
	// once, and then 200 more every second.
	DefaultLiveRateLimit = rate.Limit(200)
	DefaultLiveRateBurst = 1000
)

// Config configures a Server. Store and PublicURL are required.
type Config struct {
	// Store is the database (a store/sqlite or store/postgres DB).
	Store Store
	// Counter counts redirects; nil: clicks are not counted. Record
	// receives a pointer into the link cache: it must not modify the link.
	Counter linkforge.ClickCounter
	// Exhaustion tells, without counting, whether a link's click limit is
	// reached, so that a HEAD request (a link preview) answers 410 or the
	// fallback rather than show the target of an exhausted link; nil: HEAD
	// is answered from the link alone. cmd passes its *linkcounter.Counter,
	// as Counter, Skips and Readiness.
	Exhaustion ExhaustionChecker
	// Skips is told of every redirect that is not counted (HEAD, link
	// previews and crawlers), for its metric; nil: not told.
	Skips SkipRecorder
	// Readiness is asked by /readyz whether clicks can be counted now;
	// nil: the answer says journal "none" and depends on nothing but the
	// process.
	Readiness ReadinessChecker
	// TLS is the certificates' state /readyz shows; nil: --tls off, and
	// /readyz shows none.
	TLS func() TLSReadiness
	// TLSHostState is the certificate state of a host ("off", "pending",
	// "ready", "failed"), for the domains' tls field; nil: "off" (--tls
	// off).
	TLSHostState func(host string) string
	// Classifier classifies each counted click (country, referrer, device,
	// browser, OS, utm_source) for the counter; nil: clicks are counted
	// under every dimension's default ("unknown", "direct", ...).
	Classifier *classify.Classifier
	// Visitors hashes visitors for the day, so that a link's A/B variant
	// is sticky per visitor and day (package visitor); nil: every visitor
	// hashes alike, and gets the same variant.
	Visitors *visitor.Hasher
	// PublicURL is the base of the short_url field; its host is a self host
	// for the redirect-loop check of url and fallback_url.
	PublicURL *url.URL
	Logger    *slog.Logger         // nil: discard
	Registry  *prometheus.Registry // nil: a new one
	Now       func() time.Time     // nil: time.Now
	// RateLimit is the admin API's rate per token; 0: DefaultRateLimit with
	// DefaultRateBurst; rate.Inf: no limit. RateBurst 0 with a RateLimit set: the rate rounded
	// up, at least 1.
	RateLimit rate.Limit
	RateBurst int
	// LiveRateLimit is the rate of live feed upgrades (GET /api/v1/live)
	// per token, a limit apart from the admin API's; 0: DefaultLiveRateLimit
	// with DefaultLiveRateBurst. LiveRateBurst 0 with a LiveRateLimit set:
	// the rate rounded up, at least 1. The cap on a tenant's open sockets is
	// the feed's (dashboard.Config.MaxClientsPerTenant).
	LiveRateLimit rate.Limit
	LiveRateBurst int
	// Cache is the redirect path's link cache; nil: one of CacheSize
	// links and CacheBytes built on Store.
	Cache *linkcache.Cache
	// CacheSize bounds the redirect cache; 0: DefaultCacheSize. Unknown slugs
	// are cached separately, in at most a tenth of that.
	CacheSize int
	// CacheBytes bounds the bytes the redirect cache's entries take
	// (--link-cache-bytes); 0: DefaultCacheBytes.
	CacheBytes int
	// Live serves the live dashboard's WebSocket feed (GET /api/v1/live,
	// package dashboard's Hub); nil: that route answers 503.
	Live LiveFeed
	// Alarms is told about every alarm a link write or a replay stores
	// (the node's scheduler); nil: the scheduler finds them by its
	// periodic re-read only.
	Alarms AlarmScheduler
	// Peers are the other nodes of a cluster (clusterfeed.Local), told of
	// this node's link and domain writes; nil: a single node.
	Peers Peers
	// Links writes links and runs their after-effects (package links, as
	// cmd builds it for the node); nil: one built here on Store, Cache,
	// Passwords, Peers, Alarms and LinkFeed.
	Links *links.Service
	// LinkFeed is this node's dashboards, shown the link writes of the
	// Links built here (when Links is nil).
	LinkFeed links.Viewers
	// Domains writes the tenants' domains, Verifier verifies them (as due
	// work of the scheduler); nil: built here.
	Domains  *domain.Service
	Verifier *domain.Verifier
	// PeerHealth says whether this node hears the other nodes; while it
	// does not, the link cache revalidates its entries sooner (the bus
	// again); nil: always healthy, right for a single node.
	PeerHealth linkcache.PeerHealth
	// RootURL is where GET / redirects (302): an absolute URL or a path;
	// empty: DefaultRootURL.
	RootURL string
	// RobotsAllow makes /robots.txt allow every crawler; the default keeps
	// them all out (wellknown.go).
	RobotsAllow bool
	// Targets is the operator's target blocklist (a *blocklist.Files):
	// the link service built when Links is nil (tests) checks targets
	// with it, and the operator's writes of its entries refresh it. nil:
	// none.
	Targets linkforge.TargetPolicy
	// Threats is the operator's threat filter (a *safety.Checker with
	// --threat-dns) of the Links built here; nil: none.
	Threats links.Threats
	// AbuseContact is the Contact of /.well-known/security.txt (a mailto:
	// or https: URI); empty: that file answers 404.
	AbuseContact string
	// Health checks links' targets (POST /api/v1/links/{slug}/check);
	// nil: one of its own under the webhooks' address policy.
	Health *health.Checker
	// ReportWebhook is the operator's receiver of report.created
	// (--report-webhook); a zero URL: none.
	ReportWebhook ReportWebhook
	// NotFoundURL is where an unknown slug redirects (302) instead of the
	// 404 page; empty: the 404 page.
	NotFoundURL string
	// Passwords hashes new passwords in the node's password slots, which
	// the unlocks share; nil: a hasher of PasswordParams.
	Passwords *password.Hasher
	// PasswordParams are the argon2id costs of new link passwords; zero:
	// password.DefaultParams. Verification uses whatever a hash names, so
	// changing them never locks out existing links.
	PasswordParams password.Params
	// Quota answers GET /api/v1/tenant with this node's unflushed clicks
	// counted (*quota.Service); nil: the store's rollup alone.
	Quota QuotaUsage
	// MaxConcurrentImports bounds the imports running at once on this node
	// (POST /api/v1/import; 503 past it); zero: DefaultMaxConcurrentImports.
	// A token runs one import at a time (429).
	MaxConcurrentImports int
	// WebhookAllowPrivate accepts webhook URLs on loopback, private,
	// link-local and unique-local addresses (--webhook-allow-private).
	WebhookAllowPrivate bool
	// SessionTTL ends a sign-in session unused that long (--session-ttl);
	// 0: people.DefaultSessionTTL.
	SessionTTL time.Duration
	// SessionMaxAge ends a sign-in session that long after it began,
	// however used (--session-max-age); 0: people.DefaultSessionMaxAge.
	SessionMaxAge time.Duration
	// WriteTimeout is the http.Server's WriteTimeout the Server runs
	// behind; 0: none. Routes that may work longer than that (a bulk of
	// password links) push the deadline forward as they progress.
	WriteTimeout time.Duration
	// DomainVerify is how tenants' new domains are verified
	// (--domain-verify); "": domain.VerifyDNS.
	DomainVerify domain.VerifyMode
	// AdminOnDomains answers the sign-in pages, the dashboard and the
	// admin API on the tenants' domains too (--admin-on-domains); false:
	// on the public host only, a domain answering them 404 (adminhost.go).
	AdminOnDomains bool
	// MaxDomainsPerTenant bounds a tenant's domains (--max-domains-per-tenant);
	// 0: domain.DefaultMaxPerTenant.
	MaxDomainsPerTenant int
	// AllowPublicSubdomains lets tenants add subdomains of the public
	// URL's host (--allow-public-subdomains).
	AllowPublicSubdomains bool
	// DomainDial connects to a domain's address for its verification,
	// once the webhooks' address policy (WebhookAllowPrivate) allowed it;
	// nil: the system's dialer. Tests only.
	DomainDial DomainDialer
	// DomainResolver resolves the domains' names for their verification;
	// nil: the system's resolver. Tests only: a DNS server of their own.
	DomainResolver *net.Resolver
	// OIDC turns on single sign-on (--oidc-issuer and its flags): the
	// issuer, client and auto-join; the Server fills in the store, the
	// people, the redirect URL, the clock and the logger. nil: off.
	OIDC *oidclogin.Config
}

// DefaultRootURL is where GET / redirects when Config.RootURL is empty.
const DefaultRootURL = redirect.DefaultRootURL

// Peers are the other nodes of a cluster: told of this node's link writes
// (links.Peers) and domain writes (InvalidateHost). clusterfeed.Local
// implements it. Its methods must not block.
type Peers interface {
	links.Peers
	InvalidateHost(host string)
}

// ExhaustionChecker and SkipRecorder are the redirect handler's
// (package redirect), for Config.
type (
	ExhaustionChecker = redirect.ExhaustionChecker
	SkipRecorder      = redirect.SkipRecorder
)

// Server serves LinkForge's HTTP interface. It is an http.Handler.
type Server struct {
	echo  *echo.Echo
	store Store
	// robotsAllow and abuseContact are Config's (wellknown.go).
	robotsAllow  bool
	abuseContact string
	// reportHook is Config.ReportWebhook, reportClient its transport,
	// under the webhooks' address policy (reports.go).
	reportHook   ReportWebhook
	health       *health.Checker // Config.Health (health.go)
	reportClient *http.Client
	targets      linkforge.TargetPolicy // Config.Targets (targets.go)
	// redirects answers the short links, GET / and the password form
	// (package redirect).
	redirects *redirect.Handler
	// ready is what /readyz reports (ops.go).
	ready readyState

	logger    *slog.Logger
	now       func() time.Time
	cache     *linkcache.Cache
	metrics   *httpMetrics
	shortBase string   // PublicURL without a trailing slash; short_url = shortBase + "/" + slug
	selfHosts []string // PublicURL's host, for the redirect-loop check
	live      LiveFeed // nil: GET /api/v1/live answers 503
	// alarms is told about the alarms the API stores; nil: none to tell.
	alarms AlarmScheduler
	// webhookAllowPrivate: see Config.WebhookAllowPrivate.
	webhookAllowPrivate bool
	// peers is told about the domain writes; nil: a single node.
	peers Peers
	// publicOrigin is PublicURL, the origin the live feed admits besides
	// the request's own.
	publicOrigin *url.URL

	// limits are the limits on clients: the admin API's and the live
	// feed's per token, the sign-in guesses'.
	limits clientLimits
	// table is what the route table tells the handlers.
	table routeTable

	// passwordParams hash new link passwords; passwordSlots bounds the
	// passwords hashes new passwords in the password slots, which bound
	// the hashes and the unlocks' verifications running at once (each
	// holds Memory KiB; password.go).
	passwords *password.Hasher
	// writeTimeout: see Config.WriteTimeout.
	writeTimeout time.Duration

	quota QuotaUsage // nil: the store's usage alone (tenant.go)

	imports *importGate // the imports running (import.go)

	// links writes links and runs the writes' after-effects (linkwrites.go).
	links *links.Service
	// domains writes the tenants' domains and resolves a link request's
	// domain (domains.go); addresses renders short URLs.
	domains   *domain.Service
	addresses links.Addresses
	// verifier fetches the domains' verification URLs (verify.go).
	verifier *domain.Verifier

	// people signs users in (signin.go, session.go).
	people *people.Service
	// sso is the OpenID Connect sign-in (oidc.go); nil: not configured.
	sso *oidclogin.Login
}

// apiRoute is one admin API route: its method and its path template split
// at slashes.
type apiRoute struct {
	method   string
	segments []string
}

// matches reports whether path, split at slashes, fits the template.
func (r apiRoute) matches(path []string) bool {
	if len(path) != len(r.segments) {
		return false
	}
	for i, seg := range r.segments {
		if strings.HasPrefix(seg, ":") {
			if path[i] == "" {
				return false
			}
		} else if seg != path[i] {
			return false
		}
	}
	return true
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
	if cfg.Registry == nil {
		cfg.Registry = prometheus.NewRegistry()
	}
	s := newServer(cfg)
	if err := s.initServices(cfg); err != nil {
		return nil, err
	}
	if err := s.initLimiters(cfg); err != nil {
		return nil, err
	}
	if err := s.initMetrics(cfg.Registry); err != nil {
		return nil, err
	}
	s.routes(cfg)
	return s, nil
}

// newServer returns the Server of cfg with its fields set from cfg or their
// defaults, before its services, limiters, metrics and routes.
func newServer(cfg Config) *Server {
	s := &Server{
		store:        cfg.Store,
		robotsAllow:  cfg.RobotsAllow,
		abuseContact: cfg.AbuseContact,
		reportHook:   cfg.ReportWebhook,
		health:       cfg.Health,
		reportClient: &http.Client{Timeout: webhook.DefaultTimeout,
			Transport:     webhook.NewGuardedTransport(webhook.TransportOptions{AllowPrivate: cfg.WebhookAllowPrivate}),
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }},
		targets:   cfg.Targets,
		logger:    cfg.Logger,
		now:       cfg.Now,
		shortBase: strings.TrimSuffix(cfg.PublicURL.String(), "/"),
		selfHosts: []string{linkforge.SelfHost(cfg.PublicURL)},
		live:      cfg.Live,
		alarms:    cfg.Alarms,
		// webhooks (webhooks.go)
		webhookAllowPrivate: cfg.WebhookAllowPrivate,
		peers:               cfg.Peers,
		ready: readyState{journal: cfg.Readiness, bus: cfg.PeerHealth, tls: cfg.TLS,
			tlsHost: cfg.TLSHostState},

		publicOrigin: cfg.PublicURL,
		quota:        cfg.Quota,
		writeTimeout: cfg.WriteTimeout,
	}
	if s.logger == nil {
		s.logger = slog.New(slog.DiscardHandler)
	}
	if s.health == nil {
		s.health = health.New(health.Config{AllowPrivate: cfg.WebhookAllowPrivate, Now: s.now})
	}
	s.initPasswords(cfg)
	s.imports = newImportGate(cfg.MaxConcurrentImports)
	if s.now == nil {
		s.now = time.Now
	}
	return s
}

// initServices builds what the handlers call: the link cache, the link and
// domain services, the host tables, the domain verifier, the people service
// and sign-in.
func (s *Server) initServices(cfg Config) error {
	var err error
	if s.cache = cfg.Cache; s.cache == nil {
		if s.cache, err = linkcache.New(linkcache.Config{Store: cfg.Store, Size: cfg.CacheSize, Bytes: cfg.CacheBytes,
			SelfHosts: s.selfHosts, PeerHealth: cfg.PeerHealth, Registerer: cfg.Registry, Logger: s.logger, Now: s.now}); err != nil {
			return fmt.Errorf("web: %w", err)
		}
	}
	if s.redirects, err = redirect.New(redirect.Config{Cache: s.cache, Counter: cfg.Counter, Exhaustion: cfg.Exhaustion,
		Skips: cfg.Skips, Classifier: cfg.Classifier, Visitors: cfg.Visitors, Slots: s.passwords.Slots,
		PublicURL: cfg.PublicURL, RootURL: cfg.RootURL, NotFoundURL: cfg.NotFoundURL,
		APINotFound: s.apiNotFound, GetOnly: func(path string) bool { return s.table.getOnly[path] },
		Logger: s.logger, Registerer: cfg.Registry, Now: s.now}); err != nil {
		return fmt.Errorf("web: %w", err)
	}
	s.addresses = links.Addresses{Public: cfg.PublicURL, Hosts: s.cache}
	if s.domains = cfg.Domains; s.domains == nil {
		if s.domains, err = s.newDomainService(cfg); err != nil {
			return err
		}
	}
	if s.links = cfg.Links; s.links == nil {
		if s.links, err = s.newLinkService(cfg); err != nil {
			return err
		}
	}
	// The store's webhook events name a link's domain and short URL as
	// this server's link bodies do (linkBase): from the same public URL.
	cfg.Store.SetShortBase(domain.ShortBase(cfg.PublicURL))
	if s.verifier = cfg.Verifier; s.verifier == nil {
		if s.verifier, err = s.newVerifier(cfg); err != nil {
			return err
		}
	}
	if s.people, err = people.New(people.Config{Store: cfg.Store, Hasher: hasherFunc(s.hashPassword),
		PublicURL: s.shortBase, SessionTTL: cfg.SessionTTL, MaxAge: cfg.SessionMaxAge, Now: s.now}); err != nil {
		return err
	}
	s.sso, err = s.newSSO(cfg.OIDC)
	return err
}

// initLimiters builds the limits on clients: the sign-in failures, the API's
// token bucket (cfg.RateLimit and RateBurst, or their defaults) and the live
// feed's.
func (s *Server) initLimiters(cfg Config) error {
	s.limits.logins = password.NewLimiter(password.DefaultMaxFailures, password.DefaultWindow, password.DefaultLimiterSize)
	s.limits.reports = password.NewLimiter(reportsPerClient, reportsWindow, password.DefaultLimiterSize)
	s.limits.shareViews = password.NewLimiter(shareViewsPerClient, shareViewsWindow, password.DefaultLimiterSize)
	s.limits.shareGuesses = password.NewLimiter(password.DefaultMaxFailures, password.DefaultWindow, password.DefaultLimiterSize)
	limit, burst := cfg.RateLimit, cfg.RateBurst
	switch {
	case limit == 0:
		limit, burst = DefaultRateLimit, DefaultRateBurst
	case limit == rate.Inf:
		// No limit: the bucket never runs dry, whatever its size.
		burst = 1
	}
	if burst <= 0 {
		burst = max(1, int(limit+0.999999))
	}
	var err error
	if s.limits.api, err = newTokenLimiter(limit, burst, s.now); err != nil {
		return err
	}
	s.limits.live, err = newLiveLimiter(cfg, s.now)
	return err
}

// initMetrics registers the server's metrics on its registry, and Go's and
// the process's unless they are there already.
func (s *Server) initMetrics(reg *prometheus.Registry) error {
	var err error
	if s.metrics, err = newHTTPMetrics(reg); err != nil {
		return err
	}
	for _, c := range []prometheus.Collector{
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
	} {
		// cmd or another Server may have registered them on a shared
		// registry already; one copy is what we want.
		if err := reg.Register(c); err != nil && !errors.As(err, new(prometheus.AlreadyRegisteredError)) {
			return fmt.Errorf("web: register collector: %w", err)
		}
	}
	return nil
}

// ServeHTTP serves one request.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.echo.ServeHTTP(w, r)
}

// API paths, also the templates the metrics and the OpenAPI test see.
const (
	apiPrefix     = "/api/v1"
	pathLinks     = apiPrefix + "/links"
	pathLink      = pathLinks + "/:slug"
	pathLinkStats = pathLink + "/stats"
	pathLinkQR    = pathLink + "/qr"
	pathLinkAlias = pathLink + "/aliases/:alias"
	pathLinkCheck = pathLink + "/check"
	pathBulkLinks = apiPrefix + "/bulk/links"
	pathTags      = apiPrefix + "/tags"
	pathTag       = pathTags + "/:name"
	pathStats     = apiPrefix + "/stats"
	pathOpenAPI   = apiPrefix + "/openapi.json"
	pathLive      = apiPrefix + "/live"
	pathAlarms    = apiPrefix + "/alarms"
	pathRetry     = pathAlarms + "/:id/retry"
	pathExport    = apiPrefix + "/export"
	pathImport    = apiPrefix + "/import"
)

func (s *Server) routes(cfg Config) {
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

	r := &router{s: s, e: e, adminOnDomains: cfg.AdminOnDomains}
	r.getHead("/", s.redirects.Root)
	r.getHead("/favicon.ico", s.favicon)
	r.getHead(pathRobots, s.robots)                         // wellknown.go
	r.getHead(pathSecurityTxt, s.securityTxt)               // wellknown.go
	r.getHead(pathVerificationAnswer, s.verificationAnswer) // verify.go
	r.getHead(pathAASA, s.appSiteAssociation)               // deeplinks.go
	r.getHead(pathAssetLinks, s.assetLinks)                 // deeplinks.go
	r.getHead("/:slug", s.redirects.Redirect)
	// The password form's post (redirect/password.go): a small form body,
	// read within its own limit.
	r.add(http.MethodPost, "/:slug", true, s.redirects.Unlock)
	s.apiRouteTable(r)
	r.getHead(pathOpenAPI, s.openAPI)
	r.getHead("/healthz", s.healthz)
	r.getHead("/readyz", s.readyz)
	r.getHead("/metrics", echo.WrapHandler(promhttp.HandlerFor(cfg.Registry, promhttp.HandlerOpts{
		ErrorLog: slog.NewLogLogger(s.logger.Handler(), slog.LevelError),
	})))
	r.getHead("/dashboard", s.dashboardAsset)
	r.getHead(pathAnalyticsPage, s.dashboardAsset)
	r.getHead(pathLinkPage, s.dashboardAsset)
	r.getHead(pathDashboardJS, s.dashboardAsset)
	r.getHead(pathDashboardCSS, s.dashboardAsset)
	r.getHead(pathWebhooksPage, s.dashboardAsset) // webhooks.go
	r.getHead(pathWebhooksJS, s.dashboardAsset)
	for _, p := range []string{pathPeoplePage, pathPeopleJS, pathPeopleCSS, pathSessionJS} { // peoplepage.go
		r.getHead(p, s.dashboardAsset)
	}
	r.getHead(pathOperatorPage, s.dashboardAsset) // operatorpage.go
	r.getHead(pathOperatorJS, s.dashboardAsset)
	r.getHead(pathDomainsPage, s.dashboardAsset) // domainspage.go
	r.getHead(pathDomainsJS, s.dashboardAsset)
	r.getHead(pathAuditPage, s.dashboardAsset) // auditpage.go
	r.getHead(pathAuditJS, s.dashboardAsset)
	r.getHead(pathAlarmsPage, s.dashboardAsset)
	r.getHead(pathAlarmsJS, s.dashboardAsset)
	r.getHead(pathImportPage, s.dashboardAsset)
	r.getHead(pathImportJS, s.dashboardAsset)
	r.getHead(pathTagsPage, s.dashboardAsset)
	r.getHead(pathTagsJS, s.dashboardAsset)
	r.getHead(pathLinkOptionsJS, s.dashboardAsset)
	// Sign-in (signin.go): small form bodies, read within their limit.
	r.getHead(pathLogin, s.loginPage)
	r.add(http.MethodPost, pathLogin, true, s.login)
	r.add(http.MethodPost, pathLogout, false, s.logout) // no body: the cookie says who
	// Single sign-on (oidc.go).
	r.add(http.MethodGet, oidclogin.StartPath, false, s.ssoStart)
	r.add(http.MethodGet, oidclogin.CallbackPath, false, s.ssoCallback)
	for _, p := range []string{pathInvite, pathReset} {
		r.getHead(p, s.ticketPage)
		r.add(http.MethodPost, p, true, s.setPassword)
	}
	s.table.getOnly = getOnlyPaths(e.Routes())
	// No RouteNotFound: echo gives a user 404 handler priority over its 405,
	// and would answer 404 to PUT /api/v1/links. Paths of several segments
	// reach the redirect handler anyway (echo's router falls back to
	// /:slug), which refuses them as malformed slugs.
}

// apiRouteTable registers the admin API's routes.
func (s *Server) apiRouteTable(r *router) {
	api, withBody := r.api, r.withBody
	r.add(http.MethodPost, pathLinks, true, s.createLink, withBody(http.MethodPost, pathLinks)...)
	r.add(http.MethodGet, pathLinks, false, s.listLinks, api(http.MethodGet, pathLinks)...)
	r.add(http.MethodPost, pathBulkLinks, true, s.createLinks,
		append(api(http.MethodPost, pathBulkLinks), limitBulkBody, requireJSON)...)
	r.add(http.MethodGet, pathTags, false, s.listTags, api(http.MethodGet, pathTags)...)
	r.add(http.MethodPatch, pathTag, true, s.renameTag, withBody(http.MethodPatch, pathTag)...) // tags.go
	r.add(http.MethodDelete, pathTag, false, s.deleteTag, api(http.MethodDelete, pathTag)...)
	r.add(http.MethodGet, pathLink, false, s.getLink, api(http.MethodGet, pathLink)...)
	r.add(http.MethodPatch, pathLink, true, s.patchLink, withBody(http.MethodPatch, pathLink)...)
	r.add(http.MethodDelete, pathLink, false, s.deleteLink, api(http.MethodDelete, pathLink)...)
	r.add(http.MethodDelete, pathLinkAlias, false, s.deleteAlias, api(http.MethodDelete, pathLinkAlias)...)
	r.add(http.MethodGet, pathLinkStats, false, s.linkStats, api(http.MethodGet, pathLinkStats)...)
	r.add(http.MethodGet, pathLinkQR, false, s.linkQR, api(http.MethodGet, pathLinkQR)...)
	r.add(http.MethodPost, pathLinkCheck, false, s.checkLink, api(http.MethodPost, pathLinkCheck)...) // health.go
	r.add(http.MethodGet, pathStats, false, s.tenantStats, api(http.MethodGet, pathStats)...)
	r.add(http.MethodGet, pathLinkBreakdown, false, s.linkBreakdown, api(http.MethodGet, pathLinkBreakdown)...)
	r.add(http.MethodGet, pathBreakdown, false, s.tenantBreakdown, api(http.MethodGet, pathBreakdown)...)
	r.add(http.MethodGet, pathTopLinks, false, s.topLinks, api(http.MethodGet, pathTopLinks)...)
	r.add(http.MethodGet, pathStatsExport, false, s.statsExport, api(http.MethodGet, pathStatsExport)...)
	// The UTM builder (utm.go).
	r.add(http.MethodGet, pathCampaigns, false, s.campaigns, api(http.MethodGet, pathCampaigns)...)
	r.add(http.MethodGet, pathUTMTemplates, false, s.listUTMTemplates, api(http.MethodGet, pathUTMTemplates)...)
	r.add(http.MethodPost, pathUTMTemplates, true, s.createUTMTemplate, withBody(http.MethodPost, pathUTMTemplates)...)
	r.add(http.MethodDelete, pathUTMTemplate, false, s.deleteUTMTemplate, api(http.MethodDelete, pathUTMTemplate)...)
	r.add(http.MethodGet, pathAlarms, false, s.listAlarms, api(http.MethodGet, pathAlarms)...)
	r.add(http.MethodPost, pathRetry, false, s.retryAlarm, api(http.MethodPost, pathRetry)...)
	r.add(http.MethodGet, pathExport, false, s.exportLinks, api(http.MethodGet, pathExport)...)
	// Webhooks (webhooks.go).
	r.add(http.MethodPost, pathWebhooks, true, s.createWebhook, withBody(http.MethodPost, pathWebhooks)...)
	r.add(http.MethodGet, pathWebhooks, false, s.listWebhooks, api(http.MethodGet, pathWebhooks)...)
	r.add(http.MethodPatch, pathWebhook, true, s.patchWebhook, withBody(http.MethodPatch, pathWebhook)...)
	r.add(http.MethodDelete, pathWebhook, false, s.deleteWebhook, api(http.MethodDelete, pathWebhook)...)
	r.add(http.MethodGet, pathWebhookDelivery, false, s.listDeliveries, api(http.MethodGet, pathWebhookDelivery)...)
	r.add(http.MethodPost, pathDeliveryRetry, false, s.retryDelivery, api(http.MethodPost, pathDeliveryRetry)...)
	r.add(http.MethodPost, pathWebhookTest, false, s.testWebhook, api(http.MethodPost, pathWebhookTest)...) // webhooktest.go
	// The import's body is a file of up to MaxImportBytes, in the format
	// the query names: it has its own limit and no JSON requirement.
	r.add(http.MethodPost, pathImport, true, s.importLinks, api(http.MethodPost, pathImport)...)
	// Domains (domains.go); their bodies carry up to two app-link documents
	// (deeplinks.go).
	r.add(http.MethodPost, pathDomains, true, s.createDomain,
		append(api(http.MethodPost, pathDomains), limitDomainBody, requireJSON)...)
	r.add(http.MethodGet, pathDomains, false, s.listDomains, api(http.MethodGet, pathDomains)...)
	r.add(http.MethodGet, pathDomain, false, s.getDomain, api(http.MethodGet, pathDomain)...)
	r.add(http.MethodPatch, pathDomain, true, s.patchDomain,
		append(api(http.MethodPatch, pathDomain), limitDomainBody, requireJSON)...)
	r.add(http.MethodDelete, pathDomain, false, s.deleteDomain, api(http.MethodDelete, pathDomain)...)
	r.add(http.MethodPost, pathDomainVerify, false, s.verifyDomain, api(http.MethodPost, pathDomainVerify)...)
	s.qrRouteTable(r) // qrsettings.go
	// Tenant quotas (tenant.go).
	r.add(http.MethodGet, pathTenant, false, s.getTenant, api(http.MethodGet, pathTenant)...)
	r.add(http.MethodPatch, pathTenant, true, s.patchTenant, withBody(http.MethodPatch, pathTenant)...)
	// Tokens and the caller (tokens.go).
	r.add(http.MethodPost, pathTokens, true, s.createToken, withBody(http.MethodPost, pathTokens)...)
	r.add(http.MethodGet, pathTokens, false, s.listTokens, api(http.MethodGet, pathTokens)...)
	r.add(http.MethodDelete, pathToken, false, s.revokeToken, api(http.MethodDelete, pathToken)...)
	r.add(http.MethodGet, pathMe, false, s.me, api(http.MethodGet, pathMe)...)
	r.add(http.MethodGet, pathAudit, false, s.listAudit, api(http.MethodGet, pathAudit)...) // audit.go
	r.add(http.MethodDelete, pathMySessions, false, s.endMySessions, api(http.MethodDelete, pathMySessions)...)
	r.add(http.MethodGet, pathMySessions, false, s.mySessions, api(http.MethodGet, pathMySessions)...)
	// Users (users.go).
	r.add(http.MethodPost, pathUsers, true, s.inviteUser, withBody(http.MethodPost, pathUsers)...)
	r.add(http.MethodGet, pathUsers, false, s.listUsers, api(http.MethodGet, pathUsers)...)
	r.add(http.MethodPatch, pathUser, true, s.patchUser, withBody(http.MethodPatch, pathUser)...)
	r.add(http.MethodDelete, pathUser, false, s.deleteUser, api(http.MethodDelete, pathUser)...)
	r.add(http.MethodPost, pathInvitationAccept, false, s.answerInvitation(true), api(http.MethodPost, pathInvitationAccept)...)
	r.add(http.MethodPost, pathInvitationDecline, false, s.answerInvitation(false), api(http.MethodPost, pathInvitationDecline)...)
	// The live feed has its own per-token limit: see liveRateLimit.
	r.add(http.MethodGet, pathLive, false, s.serveLive, s.liveGate, s.authenticate, s.liveRateLimit, allowQuery(apiQuery[http.MethodGet+" "+pathLive]))
	s.operatorRouteTable(r) // operator.go
	s.sharesRouteTable(r)   // shares.go
}

// router registers the Server's routes on its echo instance.
type router struct {
	s *Server
	e *echo.Echo
	// adminOnDomains: see Config.AdminOnDomains (adminhost.go).
	adminOnDomains bool
}

// routeTable is what the route table tells the handlers once registered.
type routeTable struct {
	// api are the admin API's routes, for apiNotFound.
	api []apiRoute
	// getOnly are the paths without parameters that answer only GET and
	// HEAD (the favicon, the dashboard's pages and assets): a POST to one
	// reaches the unlock through echo's /:slug fallback, which answers it
	// 405 (redirect.Config.GetOnly).
	getOnly map[string]bool
}

// clientLimits are the Server's limits on clients.
type clientLimits struct {
	// api is the admin API's per token, live the live feed's upgrades'
	// (auth.go).
	api, live *tokenLimiter
	// logins limits sign-in guesses per account and per client address
	// (signin.go).
	logins *password.Limiter
	// reports limits abuse reports per client address (reports.go).
	reports *password.Limiter
	// shareViews limits the share pages' views per client address,
	// shareGuesses their password guesses per share and address
	// (shares.go).
	shareViews, shareGuesses *password.Limiter
}

// add registers one route. Routes that take no body answer without
// waiting for one (see instrument); takesBody marks the ones that read a
// body.
func (r *router) add(method, path string, takesBody bool, h echo.HandlerFunc, mw ...echo.MiddlewareFunc) {
	// Authorization, for every route in this one place: package access's
	// table names the role each route needs (an unnamed one: owner). It
	// wraps the handler itself, so that no middleware list can leave it
	// out; authenticate, earlier in the list, has set the caller's role.
	switch need, _ := access.Of(method, path); {
	case need.Operator:
		h = authorizeOperator(h)
	case !need.Public:
		h = authorize(need.Role, h)
	}
	// Compose once: see the package comment.
	for i := len(mw) - 1; i >= 0; i-- {
		h = mw[i](h)
	}
	if !takesBody {
		h = ignoreBody(h)
	}
	h = r.s.publicHostOnly(path, r.adminOnDomains, h) // adminhost.go
	if strings.HasPrefix(path, apiPrefix+"/") {
		r.s.table.api = append(r.s.table.api, apiRoute{method, strings.Split(path, "/")})
	}
	r.e.Add(method, path, r.s.instrument(h))
}

// getHead registers GET and HEAD: a load balancer or uptime checker
// probing with HEAD gets the GET answer without its body (net/http drops
// the body of a HEAD answer).
func (r *router) getHead(path string, h echo.HandlerFunc, mw ...echo.MiddlewareFunc) {
	r.add(http.MethodGet, path, false, h, mw...)
	r.add(http.MethodHead, path, false, h, mw...)
}

// api authenticates and rate-limits, then refuses query parameters the
// route does not know (apiQuery), so that a typo or a filter this version
// does not have is an error rather than silently ignored.
func (r *router) api(method, path string) []echo.MiddlewareFunc {
	return []echo.MiddlewareFunc{r.s.authenticate, r.s.rateLimit, allowQuery(apiQuery[method+" "+path])}
}

// withBody is api with the JSON body's limit and Content-Type check.
func (r *router) withBody(method, path string) []echo.MiddlewareFunc {
	return append(r.api(method, path), limitBody, requireJSON)
}

// getOnlyPaths returns the paths without parameters that routes answer
// for GET and HEAD only.
func getOnlyPaths(routes []*echo.Route) map[string]bool {
	only := make(map[string]bool)
	for _, r := range routes {
		if r.Method == http.MethodGet && !strings.Contains(r.Path, ":") {
			only[r.Path] = true
		}
	}
	for _, r := range routes {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			delete(only, r.Path)
		}
	}
	return only
}

// apiQuery lists the query parameters each admin API route accepts, by
// "METHOD path template"; a route not listed accepts none. A later feature
// that adds a parameter adds it here.
var apiQuery = map[string][]string{
	http.MethodGet + " " + pathLinks: {"q", "tag", "state", "archived", "health", "sort", "limit", "cursor", "domain"},
	// The operator's (operator.go).
	http.MethodGet + " " + pathOperatorLinks:        {"q", "target_host", "state", "limit", "cursor"},
	http.MethodGet + " " + pathOperatorReports:      {"state", "limit", "cursor"},
	http.MethodGet + " " + pathOperatorAudit:        {"limit", "cursor"},
	http.MethodDelete + " " + pathOperatorBlocklist: {"host"},
	http.MethodDelete + " " + pathOperatorAllowlist: {"host"},
	http.MethodGet + " " + pathLinkStats:            {"from", "to", "interval", "domain"},
	http.MethodGet + " " + pathLinkQR:               {"format", "size", "domain", "fg", "bg", "ec", "margin"},
	// A link on another domain than the tenant's default (domains.go).
	http.MethodGet + " " + pathLink:         {"domain"},
	http.MethodPatch + " " + pathLink:       {"domain"},
	http.MethodDelete + " " + pathLink:      {"domain"},
	http.MethodDelete + " " + pathLinkAlias: {"domain"},
	// Shares of a link's stats (shares.go).
	http.MethodPost + " " + pathLinkShares:  {"domain"},
	http.MethodGet + " " + pathLinkShares:   {"domain"},
	http.MethodDelete + " " + pathLinkShare: {"domain"},
	http.MethodGet + " " + pathStats:        {"from", "to", "interval"},
	http.MethodGet + " " + pathAlarms:       {"state", "limit"},
	// webhooks.go
	http.MethodGet + " " + pathWebhookDelivery: {"state", "limit"},
	http.MethodGet + " " + pathExport:          {"format"},
	http.MethodPost + " " + pathImport:         {"format", "domain_map", "slug"},
	http.MethodGet + " " + pathAudit:           {"limit", "cursor", "action", "actor"},
	// A session's tenant, where a browser cannot send the header (live.go).
	http.MethodGet + " " + pathLive: {"tenant"},

	// Analytics (web/analytics.go).
	http.MethodGet + " " + pathLinkBreakdown: {"from", "to", "limit", "traffic", "domain"},
	http.MethodGet + " " + pathBreakdown:     {"from", "to", "limit", "traffic"},
	http.MethodGet + " " + pathTopLinks:      {"from", "to", "limit", "traffic"},
	http.MethodGet + " " + pathStatsExport:   {"from", "to", "traffic"},
	http.MethodGet + " " + pathCampaigns:     {"from", "to", "traffic"},
}

// apiNotFound answers a GET or HEAD under /api/ that echo's router handed
// to the redirect handler: echo prefers its /:slug fallback to a 405, so a
// path that exists for other methods (GET /api/v1/alarms/1/retry) is told
// here, 405 with Allow, and any other path 404.
func (s *Server) apiNotFound(c echo.Context) error {
	path := strings.Split(c.Request().URL.Path, "/")
	var allow []string
	for _, r := range s.table.api {
		if r.matches(path) && !slices.Contains(allow, r.method) {
			allow = append(allow, r.method)
		}
	}
	if len(allow) == 0 {
		return echo.ErrNotFound
	}
	c.Response().Header().Set(echo.HeaderAllow, strings.Join(allow, ", "))
	return echo.ErrMethodNotAllowed
}

// blob answers 200 with body and its Content-Length, so that a HEAD answer,
// which has no body, still tells the size: net/http computes it by itself
// only for bodies that fit its 2 KiB buffer.
func blob(c echo.Context, contentType string, body []byte) error {
	c.Response().Header().Set(echo.HeaderContentLength, strconv.Itoa(len(body)))
	return c.Blob(http.StatusOK, contentType, body)
}
