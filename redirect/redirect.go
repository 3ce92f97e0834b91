// Package redirect is the redirect hot path: GET and HEAD /{slug} served
// from the link cache (package linkcache), the click counted before the
// 302 (a linkforge.ClickCounter, package linkcounter in a node), the
// routing of a link with rules, the social card for preview agents, the
// password form and its unlock, GET / and the answers to unknown slugs.
//
// It is apart from web, which mounts its handlers in its route table and
// keeps the admin API, the dashboard's pages and sign-in, so that what a
// click touches is small and shows in one place: a warm hit makes no
// query, writes no log line and allocates nothing, and nothing of the
// admin API (tokens, tenants, the store's writes) is within its reach.
package redirect

import (
	"cmp"
	"errors"
	"log/slog"
	"net/http"
	"net/netip"
	"net/url"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/classify"
	"github.com/linkforge/linkforge/linkcache"
	"github.com/linkforge/linkforge/password"
	"github.com/linkforge/linkforge/visitor"
)

// DefaultRootURL is where GET / redirects when Config.RootURL is empty.
const DefaultRootURL = "/dashboard"

// ExhaustionChecker tells, without counting a click, whether a link's
// MaxClicks is reached (*linkcounter.Counter does). The redirect
// handler asks it on HEAD, so that a link preview never shows the target of
// an exhausted link.
type ExhaustionChecker interface {
	Exhausted(l *linkforge.Link) bool
}

// SkipRecorder keeps a metric of the redirects that are not counted
// (*linkcounter.Counter does) (HEAD requests, link previews and
// crawlers), so that operators can see the traffic that is not clicks.
type SkipRecorder interface {
	Skipped(reason string)
}

// Config configures a Handler. Cache and PublicURL are required.
type Config struct {
	// Cache holds the links and the host table the redirects read.
	Cache *linkcache.Cache
	// Counter counts redirects; nil: clicks are not counted. Record
	// receives a pointer into the link cache: it must not modify the link.
	Counter linkforge.ClickCounter
	// Exhaustion tells, without counting, whether a link's click limit is
	// reached, so that a HEAD request (a link preview) answers 410 or the
	// fallback rather than show the target of an exhausted link; nil: HEAD
	// is answered from the link alone.
	Exhaustion ExhaustionChecker
	// Skips is told of every redirect that is not counted (HEAD, link
	// previews and crawlers), for its metric; nil: not told.
	Skips SkipRecorder
	// Classifier classifies each counted click for the counter; nil:
	// clicks are counted under every dimension's default.
	Classifier *classify.Classifier
	// Visitors hashes visitors for the day (sticky A/B variants, unique
	// visitors; a click's hash for the day of its time, Now's); nil:
	// every visitor hashes alike.
	Visitors *visitor.Hasher
	// Slots bounds the password verifications running at once, shared
	// with the hashing of new link passwords (web); nil: slots of its own.
	Slots *password.Slots
	// PublicURL is the base of the social card's short URL; over https,
	// its host gets Secure unlock cookies behind a TLS-terminating proxy.
	PublicURL *url.URL
	// RootURL is where GET / redirects (302); empty: DefaultRootURL.
	RootURL string
	// NotFoundURL is where an unknown slug redirects (302) instead of the
	// 404 page; empty: the 404 page.
	NotFoundURL string
	// APINotFound answers a path under /api/ that echo's router handed to
	// the slug routes (web's 404 or 405 problem); nil: 404.
	APINotFound echo.HandlerFunc
	// GetOnly says whether a path is one of the server's pages that
	// answers GET and HEAD only, so that a POST to it answers 405; nil:
	// none is.
	GetOnly    func(path string) bool
	Logger     *slog.Logger          // nil: discard
	Registerer prometheus.Registerer // nil: a new registry
	Now        func() time.Time      // nil: time.Now
}

// Handler answers the short links. Its methods are echo handlers, for
// web's route table.
type Handler struct {
	cache     *linkcache.Cache
	counter   linkforge.ClickCounter
	exhausted ExhaustionChecker // nil: HEAD does not ask
	skipped   SkipRecorder      // nil: uncounted redirects are not told
	// classifier classifies counted clicks; nil: they carry the default
	// dimensions.
	classifier *classify.Classifier
	visitors   *visitor.Hasher
	// slots bounds the verifications (and web's hashes); guesses limits
	// wrong passwords per link and client (password.go).
	slots   *password.Slots
	guesses *password.Limiter
	metrics passwordMetrics
	// shortBase is PublicURL without a trailing slash (ogcard.go);
	// httpsPublic its host when it is https, else "" (unlock.go).
	shortBase, httpsPublic string
	// rootLocation is the Location of GET /; notFoundLocation that of an
	// unknown slug, nil for the 404 page. Built once: see the header values
	// in pages.go.
	rootLocation, notFoundLocation []string
	apiNotFound                    echo.HandlerFunc
	getOnly                        func(path string) bool
	logger                         *slog.Logger
	now                            func() time.Time
}

// New returns the Handler of cfg.
func New(cfg Config) (*Handler, error) {
	if cfg.Cache == nil {
		return nil, errors.New("redirect: Config.Cache is required")
	}
	if cfg.PublicURL == nil {
		return nil, errors.New("redirect: Config.PublicURL is required")
	}
	rd := &Handler{cache: cfg.Cache, counter: cfg.Counter, exhausted: cfg.Exhaustion, skipped: cfg.Skips,
		classifier: cfg.Classifier, visitors: cfg.Visitors, slots: cfg.Slots,
		guesses:      password.NewLimiter(password.DefaultMaxFailures, password.DefaultWindow, password.DefaultLimiterSize),
		shortBase:    strings.TrimSuffix(cfg.PublicURL.String(), "/"),
		rootLocation: []string{cmp.Or(cfg.RootURL, DefaultRootURL)},
		apiNotFound:  cfg.APINotFound, getOnly: cfg.GetOnly, logger: cfg.Logger, now: cfg.Now}
	if cfg.PublicURL.Scheme == "https" {
		rd.httpsPublic = linkforge.SelfHost(cfg.PublicURL)
	}
	if cfg.NotFoundURL != "" {
		rd.notFoundLocation = []string{cfg.NotFoundURL}
	}
	if rd.slots == nil {
		rd.slots = password.NewSlots(runtime.GOMAXPROCS(0) + 1)
	}
	if rd.apiNotFound == nil {
		rd.apiNotFound = func(echo.Context) error { return echo.ErrNotFound }
	}
	if rd.getOnly == nil {
		rd.getOnly = func(string) bool { return false }
	}
	if rd.logger == nil {
		rd.logger = slog.New(slog.DiscardHandler)
	}
	if rd.now == nil {
		rd.now = time.Now
	}
	reg := cfg.Registerer
	if reg == nil {
		reg = prometheus.NewRegistry()
	}
	var err error
	if rd.metrics, err = newPasswordMetrics(reg); err != nil {
		return nil, err
	}
	return rd, nil
}

// Visitors is Config.Visitors (nil when none).
func (rd *Handler) Visitors() *visitor.Hasher { return rd.visitors }

// ClientAddr is the client address of r as the clicks' classification
// finds it (classify.Classifier.ClientAddr: X-Forwarded-For only from
// --trusted-proxies), the TCP peer without a classifier: what the guess
// limits count per, the password form's and web's sign-in's.
func (rd *Handler) ClientAddr(r *http.Request) netip.Addr {
	peer := classify.RemoteAddrPort(r).Addr()
	if rd.classifier == nil {
		return peer
	}
	// Behind a trusted proxy every guess would come from the proxy's
	// address and share one limit: the client is the one it forwards for.
	return rd.classifier.ClientAddr(r.Header, peer)
}

// Root answers GET / with a redirect to the configured root URL (by
// default the dashboard), or the request's domain's root, so that a
// newcomer opening the server's address lands somewhere useful.
func (rd *Handler) Root(c echo.Context) error {
	h := c.Response().Header()
	h["Location"] = rd.rootLocation
	if d := rd.RequestDomain(c, rd.now()); d != nil && d.Verified && d.Root != nil {
		h["Location"] = d.Root
	}
	h["Cache-Control"] = cacheControlPrivate
	return c.NoContent(http.StatusFound)
}

// notFound answers an unknown slug: a redirect to the configured not-found
// URL, or the 404 page.
func (rd *Handler) notFound(c echo.Context) error {
	if rd.notFoundLocation == nil {
		return WritePage(c, &PageNotFound)
	}
	return redirectNotFound(c, rd.notFoundLocation)
}

// redirectNotFound answers an unknown slug with a 302 to location.
func redirectNotFound(c echo.Context, location []string) error {
	w := c.Response()
	h := w.Header()
	h["Location"] = location
	// The slug may be created a moment later: never cached.
	h["Cache-Control"] = cacheControlPrivate
	w.WriteHeader(http.StatusFound)
	return nil
}

// Redirect answers GET and HEAD /{slug}: the hot path. Once the link is in
// the cache it makes no query, writes no log line and does not allocate.
// It finds the link and answers what holds before any click (not found,
// gone, the OG card, the password form); followLink answers the rest.
func (rd *Handler) Redirect(c echo.Context) error {
	slug := c.Param("slug")
	if !linkforge.IsSlugShape(slug) {
		// Garbage never reaches the cache or the store. echo's router
		// sends unknown paths of several segments here too: under /api/
		// they are API clients' mistakes, answered as problems.
		if strings.HasPrefix(slug, "api/") {
			return rd.apiNotFound(c)
		}
		return rd.notFound(c)
	}
	now := rd.now()
	k, d, ok := rd.linkKey(c, slug, now)
	if !ok {
		return WritePage(c, &PageNotFound) // a pending domain redirects nothing
	}
	e, err := rd.cache.Get(c.Request().Context(), k, now)
	if err != nil {
		rd.logger.Error("redirect lookup failed", "error", err, "slug", slug)
		return WritePage(c, &PageUnavailable)
	}
	// Before its start date a link answers as if it did not exist: the
	// entry holds the date, so it starts answering on time, cached or not.
	if e == nil || e.Link().NotYetValid(now) {
		return rd.NotFoundOn(c, d)
	}
	if done, err := rd.withheld(c, e); done {
		return err
	}
	l := e.Link()
	// Read-time checks: they hold whatever the expiry alarm has done.
	if l.Expired(now) || (l.MaxClicks != nil && *l.MaxClicks == 0) {
		return rd.gone(c, e)
	}
	if unsafeHere(c.Request(), e, now) { // unsafe.go: previews and HEAD too
		return rd.warnUnsafe(c, e)
	}
	if e.Routes().OG() != nil { // ogcard.go: the card for preview agents
		if done, err := rd.ogPreview(c, e); done {
			return err
		}
	}
	if e.Protected() {
		return rd.redirectProtected(c, e, now)
	}
	return rd.followLink(c, e, slug, now)
}

// redirectProtected answers a password-protected link: nothing but the
// form, unless the unlock cookie is valid: no click, no target
// (password.go). HEAD gets the page that names no target. A link whose
// clicks are used up answers as a click would (410 or the fallback) rather
// than ask for a password that can lead nowhere.
func (rd *Handler) redirectProtected(c echo.Context, e *linkcache.Entry, now time.Time) error {
	req := c.Request()
	l := e.Link()
	if l.MaxClicks != nil && rd.exhausted != nil && rd.exhausted.Exhausted(l) {
		return rd.gone(c, e)
	}
	if req.Method == http.MethodHead {
		return WritePage(c, &pagePreview)
	}
	if unlocked(req, l, now) {
		// The GET that follows the right password's 303 (unlock.go):
		// the click.
		return rd.followUnlocked(c, e, now)
	}
	return WriteForm(c, &formAsk)
}

// followLink answers the GET or HEAD of a link that asks nothing first:
// it counts a GET from anything but a preview agent, durably, before the
// 302, and sends the visitor to the link's target (or its routed one).
func (rd *Handler) followLink(c echo.Context, e *linkcache.Entry, slug string, now time.Time) error {
	req := c.Request()
	l := e.Link()
	counted := req.Method == http.MethodGet
	// Read once, straight from the map (req.UserAgent would first check the
	// key's canonical form): the agent is wanted up to three times here (the
	// preview check, the classification, the device target). A counted
	// click looks it up in the memo once (classify.LookupAgent: a warm
	// agent costs a hash, not a parse) and hands the answer on; a HEAD
	// looks it up only for a device target.
	var ua string
	if v := req.Header["User-Agent"]; len(v) > 0 {
		ua = v[0]
	}
	var agent classify.Agent
	looked := counted || e.Routes() != nil // agent holds ua's answers
	if looked {
		agent = classify.LookupAgent(ua)
	}
	var rt routed // routing.go: a link with routing fields
	if e.Routes() != nil {
		rd.route(req, e, agent, ua, now, &rt)
	}
	counted = rd.countsAsClick(counted, agent)
	if counted {
		if rd.counter != nil {
			// Before the 302: the redirect leaves only once its click is
			// durable.
			var err error
			if e.Routes() != nil {
				err = rd.recordRouted(req, l, now, &rt)
			} else {
				err = rd.recordAgentClick(req, l, now, agent)
			}
			if err != nil {
				return rd.clickNotRecorded(c, e, slug, err)
			}
		}
	} else if l.MaxClicks != nil {
		// A request that is not counted must not show a limited link's
		// target: a HEAD request or a preview agent could otherwise read a
		// one-time link for ever without using its click. It gets a page
		// that names no target (or, once the limit is reached, what a
		// click would get).
		if rd.exhausted != nil && rd.exhausted.Exhausted(l) {
			return rd.gone(c, e)
		}
		return WritePage(c, &pagePreview)
	}
	if e.Routes() != nil {
		return writeRouted(c, &rt)
	}
	h := c.Response().Header()
	if looked {
		h["Location"] = e.AgentTarget(agent)
	} else {
		h["Location"] = e.Target(ua)
	}
	h["Cache-Control"] = cacheControlPrivate
	c.Response().WriteHeader(http.StatusFound)
	return nil
}

// countsAsClick reports whether a request that would be counted (a GET:
// get) is a click, and counts the skip of one that is not: an unfurler
// fetching a pasted link is redirected like any visitor, but is not a
// click, and neither is a HEAD.
func (rd *Handler) countsAsClick(get bool, agent classify.Agent) bool {
	if get && agent.Preview {
		if rd.skipped != nil {
			rd.skipped.Skipped(linkforge.SkipPreview)
		}
		return false
	}
	if !get && rd.skipped != nil {
		rd.skipped.Skipped(linkforge.SkipHead)
	}
	return get
}

// clickNotRecorded answers a click the counter refused: what a used-up
// link answers when the limit was reached meanwhile (EGone), else 503
// (the click is not durable, so the visitor is not sent on).
func (rd *Handler) clickNotRecorded(c echo.Context, e *linkcache.Entry, slug string, err error) error {
	if linkforge.ErrorCode(err) == linkforge.EGone {
		return rd.gone(c, e)
	}
	rd.logger.Error("record click", "error", err, "link_id", e.Link().ID, "slug", slug)
	return WritePage(c, &PageUnavailable)
}

// clickDims recycles the ClickDims handed to the counter. Record is an
// interface call, so a ClickDims on the handler's stack would escape to the
// heap: one allocation per counted click that the pool saves. The counter
// copies the values during Record and keeps nothing of dims once it returns
// (linkforge.ClickCounter).
var clickDims = sync.Pool{New: func() any { return new(linkforge.ClickDims) }}

// recordClick classifies req (when the server has a classifier) and counts
// one click of l with those dimensions: the path of every counted click,
// the redirect's and the unlocked GET's. The client's address and
// User-Agent go no further than the classifier: neither is passed on,
// stored or logged.
func (rd *Handler) recordClick(req *http.Request, l *linkforge.Link, now time.Time) error {
	var agent classify.Agent
	if rd.classifier != nil {
		agent = classify.LookupAgent(req.UserAgent())
	}
	return rd.recordAgentClick(req, l, now, agent)
}

// recordAgentClick is recordClick for a caller that has looked up the
// request's agent already (classify.LookupAgent(req.UserAgent())).
//
// A request whose query carries linkforge.QRQuery is a scan of the link's
// QR code: its source is SourceQR (with or without a classifier), any
// other click's the dimension's default, SourceLink.
func (rd *Handler) recordAgentClick(req *http.Request, l *linkforge.Link, now time.Time, agent classify.Agent) error {
	qr := linkforge.IsQRScan(req.URL.RawQuery)
	if rd.classifier == nil && !qr {
		return rd.counter.Record(req.Context(), l, now, nil)
	}
	dims := clickDims.Get().(*linkforge.ClickDims)
	var err error
	if rd.classifier == nil {
		dims[linkforge.DimSource] = linkforge.SourceQR
		err = rd.counter.Record(req.Context(), l, now, dims)
	} else {
		click, client := rd.classifier.ClassifyClient(req, classify.RemoteAddrPort(req), agent)
		*dims = click.Dims()
		if qr {
			dims[linkforge.DimSource] = linkforge.SourceQR
		}
		err = rd.countClick(req, l, now, dims, client, click.Private(), 0, false)
	}
	// Cleared, so that the pool holds no reference into this request's
	// headers or URL (Referrer and UTMSource may share their memory).
	*dims = linkforge.ClickDims{}
	clickDims.Put(dims)
	return err
}

// countClick counts one click of l with dims, as a visit when it adds to
// the link's unique visitors: a click that is not private (classify's
// IsPrivate, which the classification has answered), on a server that
// hashes visitors and a counter that counts them. client is the client
// address the classifier found behind trusted proxies (the connection's
// address without a classifier), as the classification returned it, so
// that the header is walked once; the hash takes it, and neither is kept.
// A routed click whose variant was picked by the visitor hash passes it
// (hashed): the same hash, not computed twice.
func (rd *Handler) countClick(req *http.Request, l *linkforge.Link, now time.Time, dims *linkforge.ClickDims, client netip.Addr,
	private bool, visit uint64, hashed bool) error {
	vc, ok := rd.counter.(linkforge.VisitCounter)
	if !ok || rd.visitors == nil || private {
		return rd.counter.Record(req.Context(), l, now, dims)
	}
	if hashed {
		return vc.RecordVisit(req.Context(), l, now, dims, visit)
	}
	addr := client
	var ua string
	if v := req.Header["User-Agent"]; len(v) > 0 {
		ua = v[0]
	}
	h := rd.visitors.HashAt(req.Context(), now, addr, ua)
	return vc.RecordVisit(req.Context(), l, now, dims, h)
}

// withheld answers, before anything else and whatever the request (a
// click, HEAD, a preview agent, the password form), a link that must not
// be followed: blocked by the operator, or of a suspended tenant (451,
// naming no target), or disabled by its tenant (as an expired link: 410 or
// the fallback). No click is counted. done is false for a link in service.
func (rd *Handler) withheld(c echo.Context, e *linkcache.Entry) (done bool, err error) {
	l := e.Link()
	switch {
	case l.BlockedReason != "" || l.TenantSuspended:
		return true, WritePage(c, &pageWithheld)
	case l.Disabled:
		return true, rd.gone(c, e)
	}
	return false, nil
}

// gone answers an expired or exhausted link: its fallback, never its target.
func (rd *Handler) gone(c echo.Context, e *linkcache.Entry) error {
	if e.Fallback() == nil {
		return WritePage(c, &pageGone)
	}
	w := c.Response()
	h := w.Header()
	h["Location"] = e.Fallback()
	h["Cache-Control"] = cacheControlPrivate
	w.WriteHeader(http.StatusFound)
	return nil
}
