package web

import (
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/classify"
	"github.com/linkforge/linkforge/linkcache"
)

// Header values of the redirect path, built once: assigning a shared slice
// to the header map costs nothing, where Header().Set allocates one per call.
// net/http only reads them.
var (
	cacheControlPrivate = []string{"private, max-age=0"}
	htmlContentType     = []string{"text/html; charset=utf-8"}
	// The pages below need no script, frame or outside resource.
	htmlCSP            = []string{"default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'"}
	htmlFrameOptions   = []string{"DENY"}
	htmlReferrerPolicy = []string{"no-referrer"}
	retryAfterOne      = []string{"1"}
)

// page is a small HTML answer of the redirect path, for the browsers that
// follow short links.
type page struct {
	status int
	body   []byte
	length []string // Content-Length value
}

func newPage(status int, title, text string) page {
	body := []byte(`<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>` + title + ` · LinkForge</title>
<style>body{font-family:system-ui,sans-serif;max-width:32rem;margin:4rem auto;padding:0 1rem;color:#222}h1{font-size:1.4rem}p{color:#555}</style>
</head>
<body><h1>` + title + `</h1><p>` + text + `</p></body>
</html>
`)
	return page{status: status, body: body, length: []string{strconv.Itoa(len(body))}}
}

var (
	pageNotFound = newPage(http.StatusNotFound, "Link not found", "This short link does not exist. Check that it was copied completely.")
	pageGone     = newPage(http.StatusGone, "Link expired", "This short link has expired or has reached its click limit.")
	// pagePreview answers the requests that are not counted (HEAD, link
	// previews) for a link whose target must be paid for with a click.
	pagePreview     = newPage(http.StatusOK, "Short link", "Open this short link in a browser to follow it.")
	pageUnavailable = newPage(http.StatusServiceUnavailable, "Temporarily unavailable", "This short link cannot be followed right now. Please try again in a moment.")
)

// redirect answers GET and HEAD /{slug}: the hot path. Once the link is in
// the cache it makes no query, writes no log line and does not allocate.
// It finds the link and answers what holds before any click (not found,
// gone, the OG card, the password form); followLink answers the rest.
func (s *Server) redirect(c echo.Context) error {
	slug := c.Param("slug")
	if !linkforge.IsSlugShape(slug) {
		// Garbage never reaches the cache or the store. echo's router
		// sends unknown paths of several segments here too: under /api/
		// they are API clients' mistakes, answered as problems.
		if strings.HasPrefix(slug, "api/") {
			return s.apiNotFound(c)
		}
		return s.notFound(c)
	}
	now := s.now()
	k, d, ok := s.linkKey(c, slug, now)
	if !ok {
		return s.writePage(c, &pageNotFound) // a pending domain redirects nothing
	}
	e, err := s.cache.Get(c.Request().Context(), k, now)
	if err != nil {
		s.logger.Error("redirect lookup failed", "error", err, "slug", slug)
		return s.writePage(c, &pageUnavailable)
	}
	if e == nil {
		return s.notFoundOn(c, d)
	}
	l := e.Link()
	// Read-time checks: they hold whatever the expiry alarm has done.
	if l.Expired(now) || (l.MaxClicks != nil && *l.MaxClicks == 0) {
		return s.gone(c, e)
	}
	if e.Routes().OG() != nil { // ogcard.go: the card for preview agents
		if done, err := s.ogPreview(c, e); done {
			return err
		}
	}
	if e.Protected() {
		return s.redirectProtected(c, e, now)
	}
	return s.followLink(c, e, slug, now)
}

// redirectProtected answers a password-protected link: nothing but the
// form, unless the unlock cookie is valid: no click, no target
// (password.go). HEAD gets the page that names no target. A link whose
// clicks are used up answers as a click would (410 or the fallback) rather
// than ask for a password that can lead nowhere.
func (s *Server) redirectProtected(c echo.Context, e *linkcache.Entry, now time.Time) error {
	req := c.Request()
	l := e.Link()
	if l.MaxClicks != nil && s.exhausted != nil && s.exhausted.Exhausted(l) {
		return s.gone(c, e)
	}
	if req.Method == http.MethodHead {
		return s.writePage(c, &pagePreview)
	}
	if unlocked(req, l, now) {
		// The GET that follows the right password's 303 (unlock.go):
		// the click.
		return s.followUnlocked(c, e, now)
	}
	return s.writeForm(c, &formAsk)
}

// followLink answers the GET or HEAD of a link that asks nothing first:
// it counts a GET from anything but a preview agent, durably, before the
// 302, and sends the visitor to the link's target (or its routed one).
func (s *Server) followLink(c echo.Context, e *linkcache.Entry, slug string, now time.Time) error {
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
		s.route(req, e, agent, ua, now, &rt)
	}
	counted = s.countsAsClick(counted, agent)
	if counted {
		if s.counter != nil {
			// Before the 302: the redirect leaves only once its click is
			// durable.
			var err error
			if e.Routes() != nil {
				err = s.recordRouted(req, l, now, &rt)
			} else {
				err = s.recordAgentClick(req, l, now, agent)
			}
			if err != nil {
				return s.clickNotRecorded(c, e, slug, err)
			}
		}
	} else if l.MaxClicks != nil {
		// A request that is not counted must not show a limited link's
		// target: a HEAD request or a preview agent could otherwise read a
		// one-time link for ever without using its click. It gets a page
		// that names no target (or, once the limit is reached, what a
		// click would get).
		if s.exhausted != nil && s.exhausted.Exhausted(l) {
			return s.gone(c, e)
		}
		return s.writePage(c, &pagePreview)
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
func (s *Server) countsAsClick(get bool, agent classify.Agent) bool {
	if get && agent.Preview {
		if s.skipped != nil {
			s.skipped.Skipped(linkforge.SkipPreview)
		}
		return false
	}
	if !get && s.skipped != nil {
		s.skipped.Skipped(linkforge.SkipHead)
	}
	return get
}

// clickNotRecorded answers a click the counter refused: what a used-up
// link answers when the limit was reached meanwhile (EGone), else 503
// (the click is not durable, so the visitor is not sent on).
func (s *Server) clickNotRecorded(c echo.Context, e *linkcache.Entry, slug string, err error) error {
	if linkforge.ErrorCode(err) == linkforge.EGone {
		return s.gone(c, e)
	}
	s.logger.Error("record click", "error", err, "link_id", e.Link().ID, "slug", slug)
	return s.writePage(c, &pageUnavailable)
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
func (s *Server) recordClick(req *http.Request, l *linkforge.Link, now time.Time) error {
	if s.classifier == nil {
		return s.counter.Record(req.Context(), l, now, nil)
	}
	return s.recordAgentClick(req, l, now, classify.LookupAgent(req.UserAgent()))
}

// recordAgentClick is recordClick for a caller that has looked up the
// request's agent already (classify.LookupAgent(req.UserAgent())).
func (s *Server) recordAgentClick(req *http.Request, l *linkforge.Link, now time.Time, agent classify.Agent) error {
	if s.classifier == nil {
		return s.counter.Record(req.Context(), l, now, nil)
	}
	dims := clickDims.Get().(*linkforge.ClickDims)
	click, client := s.classifier.ClassifyClient(req, classify.RemoteAddrPort(req), agent)
	*dims = click.Dims()
	err := s.countClick(req, l, now, dims, client, 0, false)
	// Cleared, so that the pool holds no reference into this request's
	// headers or URL (Referrer and UTMSource may share their memory).
	*dims = linkforge.ClickDims{}
	clickDims.Put(dims)
	return err
}

// countClick counts one click of l with dims, as a visit when it adds to
// the link's unique visitors: a click that is not private, on a server
// that hashes visitors and a counter that counts them. client is the
// client address the classifier found behind trusted proxies (the
// connection's address without a classifier), as the classification
// returned it, so that the header is walked once; the hash takes it, and
// neither is kept. A routed click whose variant was picked by the visitor
// hash passes it (hashed): the same hash, not computed twice.
func (s *Server) countClick(req *http.Request, l *linkforge.Link, now time.Time, dims *linkforge.ClickDims, client netip.Addr,
	visit uint64, hashed bool) error {
	vc, ok := s.counter.(linkforge.VisitCounter)
	if !ok || s.visitors == nil || classify.IsPrivate(req.Header) {
		return s.counter.Record(req.Context(), l, now, dims)
	}
	if hashed {
		return vc.RecordVisit(req.Context(), l, now, dims, visit)
	}
	addr := client
	var ua string
	if v := req.Header["User-Agent"]; len(v) > 0 {
		ua = v[0]
	}
	h := s.visitors.Hash(req.Context(), addr, ua)
	return vc.RecordVisit(req.Context(), l, now, dims, h)
}

// gone answers an expired or exhausted link: its fallback, never its target.
func (s *Server) gone(c echo.Context, e *linkcache.Entry) error {
	if e.Fallback() == nil {
		return s.writePage(c, &pageGone)
	}
	w := c.Response()
	h := w.Header()
	h["Location"] = e.Fallback()
	h["Cache-Control"] = cacheControlPrivate
	w.WriteHeader(http.StatusFound)
	return nil
}

func (s *Server) writePage(c echo.Context, p *page) error {
	w := c.Response()
	h := w.Header()
	setHTMLHeaders(h)
	// A browser must ask again: the slug may be created, or the link
	// changed, a moment later.
	h["Cache-Control"] = cacheControlPrivate
	h["Content-Length"] = p.length
	if p.status == http.StatusServiceUnavailable {
		h["Retry-After"] = retryAfterOne
	}
	w.WriteHeader(p.status)
	if c.Request().Method != http.MethodHead {
		// The client may be gone; there is nobody left to tell.
		_, _ = w.Write(p.body)
	}
	return nil
}

// setHTMLHeaders sets the headers of every HTML answer.
func setHTMLHeaders(h http.Header) {
	h["Content-Type"] = htmlContentType
	h["Content-Security-Policy"] = htmlCSP
	h["X-Frame-Options"] = htmlFrameOptions
	h["Referrer-Policy"] = htmlReferrerPolicy
}
