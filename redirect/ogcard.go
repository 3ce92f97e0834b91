package redirect

import (
	"bytes"
	"html/template"
	"net/http"
	"strconv"

	"github.com/labstack/echo/v4"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/classify"
	"github.com/linkforge/linkforge/linkcache"
)

// The social card of a link with og (schema OG of web/openapi.json):
// link-preview agents (classify.PreviewAgents, the unfurlers the redirect
// already leaves uncounted) get an HTML page with Open Graph and Twitter card
// tags instead of the redirect. Browsers never get it: they are not preview
// agents. html/template escapes every value for its place.

var ogCardTemplate = template.Must(template.New("og").Parse(`<!doctype html>
<html lang="en">
<head><meta charset="utf-8">
<title>{{or .OG.Title "Short link"}}</title>
<meta property="og:type" content="website">
<meta property="og:url" content="{{.ShortURL}}">
{{with .OG.Title}}<meta property="og:title" content="{{.}}">
<meta name="twitter:title" content="{{.}}">
{{end}}{{with .OG.Description}}<meta property="og:description" content="{{.}}">
<meta name="twitter:description" content="{{.}}">
<meta name="description" content="{{.}}">
{{end}}{{with .OG.ImageURL}}<meta property="og:image" content="{{.}}">
<meta name="twitter:image" content="{{.}}">
<meta name="twitter:card" content="summary_large_image">
{{else}}<meta name="twitter:card" content="summary">
{{end}}</head>
<body><h1>{{or .OG.Title "Short link"}}</h1>{{with .OG.Description}}<p>{{.}}</p>{{end}}
{{with .Target}}<p><a href="{{.}}">{{.}}</a></p>{{end}}</body>
</html>
`))

// ogCard is what the card template reads. Target is empty for a link
// whose target must be paid for with a click or a password.
type ogCard struct {
	OG       *linkforge.OG
	ShortURL string
	Target   string
}

// ogPreview answers a preview agent's request for a link with a card,
// reporting whether it did. Nothing is counted: it is the preview the
// redirect would have left uncounted anyway.
func (rd *Handler) ogPreview(c echo.Context, e *linkcache.Entry) (bool, error) {
	og := e.Routes().OG()
	if og == nil {
		return false, nil
	}
	req := c.Request()
	var ua string
	if v := req.Header["User-Agent"]; len(v) > 0 {
		ua = v[0]
	}
	if !classify.LookupAgent(ua).Preview {
		return false, nil
	}
	if rd.skipped != nil {
		rd.skipped.Skipped(linkforge.SkipPreview)
	}
	l := e.Link()
	card := ogCard{OG: og, ShortURL: rd.shortBase + "/" + l.Slug}
	// A password or a click limit is paid for before the target is seen:
	// the card does not show it.
	if !e.Protected() && l.MaxClicks == nil {
		card.Target = e.Location()[0]
	}
	var b bytes.Buffer
	if err := ogCardTemplate.Execute(&b, card); err != nil {
		return true, err
	}
	w := c.Response()
	h := w.Header()
	SetHTMLHeaders(h)
	h["Cache-Control"] = cacheControlPrivate
	h["Content-Length"] = []string{strconv.Itoa(b.Len())}
	w.WriteHeader(http.StatusOK)
	if req.Method != http.MethodHead {
		_, _ = w.Write(b.Bytes())
	}
	return true, nil
}
