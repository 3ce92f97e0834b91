package redirect

import (
	"html"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/classify"
	"github.com/linkforge/linkforge/linkcache"
)

// The warning interstitial of an unsafe link (linkforge.LinkUnsafe: a check
// flagged its target). Every GET and HEAD of the link gets it, previews
// included; it names the target's host, never the whole target, and has a
// "continue" form that posts to the short link itself. Only that POST is a
// click: a crawler, an unfurler or a browser's prefetch GETs, and never
// counts one. The POST is answered as an unlock is (writeContinue): a 302
// after a form's post would be checked against the page's form-action
// 'self' by Chromium and refused.

// continueField is the field of the interstitial's form.
const continueField = "continue"

// passwordField is the field of the password form.
const passwordField = "password"

// unsafeHere reports whether r must get the interstitial of the unsafe
// link e rather than what the link answers otherwise: a protected link that
// r has unlocked (its password was given after the interstitial's
// continue) is followed.
func unsafeHere(r *http.Request, e *linkcache.Entry, now time.Time) bool {
	l := e.Link()
	if l.UnsafeReason == "" {
		return false
	}
	return !e.Protected() || !unlocked(r, l, now)
}

// targetHost is the host the interstitial names: that of the link's
// target (its main URL; routed targets may differ, and are checked alike).
func targetHost(e *linkcache.Entry) string {
	loc := e.Target("")
	if len(loc) == 0 {
		return ""
	}
	u, err := url.Parse(loc[0])
	if err != nil {
		return ""
	}
	if h := u.Hostname(); h != "" {
		return h
	}
	// A tenant's extra scheme: a mailto: address's domain, else the
	// scheme itself ("tel:"), so the page still says where it leads.
	if h, err := linkforge.TargetURLHost(loc[0]); err == nil && h != "" {
		return h
	}
	return u.Scheme + ":"
}

// warnUnsafe answers the interstitial of the unsafe link e: 200, never
// cached, indexed or framed, for GET and HEAD alike.
func (rd *Handler) warnUnsafe(c echo.Context, e *linkcache.Entry) error {
	req := c.Request()
	if req.Method == http.MethodHead && rd.skipped != nil {
		rd.skipped.Skipped(linkforge.SkipHead)
	}
	host := html.EscapeString(targetHost(e))
	action := html.EscapeString(req.URL.RequestURI())
	report := html.EscapeString("/report?url=" + url.QueryEscape(rd.shortBase+"/"+e.Link().Slug))
	body := Document("Warning: this link may be unsafe", `<p>This short link leads to <strong id="target-host">`+host+`</strong>, which a safety check of this service flagged as possibly harmful (phishing or malware). Do not enter passwords or personal details there.</p>
<form method="post" action="`+action+`"><input type="hidden" name="`+continueField+`" value="1"><button type="submit" id="continue">Continue to `+host+`</button></form>
<p><a href="`+report+`">Report this link</a></p>`)
	w := c.Response()
	h := w.Header()
	SetHTMLHeaders(h)
	h["Content-Security-Policy"] = formCSP
	h["Cache-Control"] = cacheControlNo
	h["Content-Length"] = []string{strconv.Itoa(len(body))}
	w.WriteHeader(http.StatusOK)
	if req.Method != http.MethodHead {
		_, _ = w.Write(body)
	}
	return nil
}

// continueUnsafe answers the interstitial's POST for the unsafe link e:
// the click, counted durably first, then the page that sends the browser
// on to the target (or its routed or device target). A protected link
// asks for its password now (the unlock's GET is then followed).
func (rd *Handler) continueUnsafe(c echo.Context, e *linkcache.Entry, slug string, now time.Time) error {
	req := c.Request()
	if err := ReadForm(c, "the interstitial's form is application/x-www-form-urlencoded"); err != nil {
		return err
	}
	if e.Protected() {
		// The continue leads to the password form; its post to the check.
		if req.PostForm.Has(passwordField) {
			return rd.checkPassword(c, e, slug, now)
		}
		if req.PostForm.Get(continueField) == "" {
			return rd.warnUnsafe(c, e)
		}
		return WriteForm(c, &formAsk)
	}
	if req.PostForm.Get(continueField) == "" {
		return rd.warnUnsafe(c, e)
	}
	l := e.Link()
	if l.MaxClicks != nil && rd.exhausted != nil && rd.exhausted.Exhausted(l) {
		return rd.gone(c, e)
	}
	agent := classify.LookupAgent(req.UserAgent())
	var rt routed
	if e.Routes() != nil {
		rd.route(req, e, agent, req.UserAgent(), now, &rt)
	}
	if rd.counter != nil && rd.countsAsClick(true, agent) {
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
	to := e.AgentTarget(agent)[0]
	if e.Routes() != nil {
		to = rt.to.Location[0]
	}
	return writeContinue(c, to)
}
