package redirect

import (
	"net/http"
	"net/netip"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/classify"
	"github.com/linkforge/linkforge/linkcache"
	"github.com/linkforge/linkforge/rules"
)

// The redirect path of a link with routing fields (package rules: rules,
// variants, redirect_status, forward_query, og). The link's routes were
// compiled when the cache loaded it; here the request is classified once,
// and that one classification serves the rules, the device URLs, the
// variant and the click's dimensions alike.

// routed is one request's classification and where it goes.
type routed struct {
	click classify.Click
	// client is the client address the classification found (the peer's
	// without a classifier): the routing's and the visitor hash's.
	client netip.Addr
	to     rules.Decision
}

// route classifies req (agent is its looked-up User-Agent) and decides
// where it goes, into rt.
func (rd *Handler) route(req *http.Request, e *linkcache.Entry, agent classify.Agent, ua string, now time.Time, rt *routed) {
	peer := classify.RemoteAddrPort(req)
	if rd.classifier != nil {
		rt.click, rt.client = rd.classifier.ClassifyClient(req, peer, agent)
	} else {
		rt.click = classify.Click{Country: classify.CountryUnknown, Device: agent.Device, Browser: agent.Browser, OS: agent.OS}
		rt.client = peer.Addr()
	}
	in := rules.Request{Device: rt.click.Device, OS: rt.click.OS, Browser: rt.click.Browser, Country: rt.click.Country,
		RawQuery: req.URL.RawQuery, Now: now, Visitors: rd.visitors, UserAgent: ua, Ctx: req.Context()}
	if v := req.Header["Accept-Language"]; len(v) > 0 {
		in.AcceptLanguage = v[0]
	}
	if e.Routes().NeedsAddr() {
		// The address the classifier found the country from; only ip
		// conditions and variants need it.
		in.Addr = rt.client
	}
	rt.to = e.Routes().Evaluate(&in)
}

// recordRouted counts one click of l with rt's classification, the one the
// routing used.
func (rd *Handler) recordRouted(req *http.Request, l *linkforge.Link, now time.Time, rt *routed) error {
	if rt.to.Stopped {
		// The request ended (the client hung up) before the rules chose a
		// target: nobody gets the redirect, so there is no click to count.
		return nil
	}
	dims := clickDims.Get().(*linkforge.ClickDims)
	if rd.classifier != nil {
		*dims = rt.click.Dims()
	}
	// The variant served, in the same record as the click: counted in the
	// same journal commit, so per-variant counts sum to the clicks.
	dims[linkforge.DimVariant] = rt.to.Variant
	if linkforge.IsQRScan(req.URL.RawQuery) {
		dims[linkforge.DimSource] = linkforge.SourceQR
	}
	private := rt.click.Private()
	if rd.classifier == nil {
		private = classify.IsPrivate(req.Header)
	}
	err := rd.countClick(req, l, now, dims, rt.client, private, rt.to.Visitor, rt.to.Hashed)
	*dims = linkforge.ClickDims{}
	clickDims.Put(dims)
	return err
}

// writeRouted answers the redirect rt decided: its code, its Location,
// and the Cache-Control that code means (rules.Decision).
func writeRouted(c echo.Context, rt *routed) error {
	w := c.Response()
	h := w.Header()
	h["Location"] = rt.to.Location
	h["Cache-Control"] = rt.to.CacheControl
	w.WriteHeader(rt.to.Status)
	return nil
}
