package web

// The dashboard's domains page and the script of the dashboard's link
// options (domain picker, traffic switch, routing editor, card preview),
// served like the dashboard's own files (dashboard.go). The link options
// are a file of their own so that the dashboard's script stays readable.
const (
	pathDomainsPage   = "/dashboard/domains"
	pathDomainsJS     = "/static/domains.js"
	pathLinkOptionsJS = "/static/link-options.js"
)

func init() {
	addDashboardAssets(map[string]struct{ name, contentType string }{
		pathDomainsPage:   {"assets/domains.html", "text/html; charset=utf-8"},
		pathDomainsJS:     {"assets/domains.js", "text/javascript; charset=utf-8"},
		pathLinkOptionsJS: {"assets/link-options.js", "text/javascript; charset=utf-8"},
	})
}
