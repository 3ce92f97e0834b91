package web

import (
	"bytes"
	"html"
	"strings"
)

// menuMark is where a dashboard page's HTML takes the menu: one menu,
// written here, for every page, so that no page's copy drifts (the People
// page's once lacked Domains).
const menuMark = "<!--menu-->"

// menuPages are the menu's links, in order. needs is the role a link is
// shown to (people.css hides it from the others; the server refuses them
// anyway).
var menuPages = []struct{ path, label, needs string }{
	{"/dashboard", "Links", ""},
	{pathAnalyticsPage, "Analytics", ""},
	{pathWebhooksPage, "Webhooks", ""},
	{pathDomainsPage, "Domains", ""},
	{pathTagsPage, "Tags", ""},
	{pathImportPage, "Import", ""},
	{pathPeoplePage, "People", "owner"},
	{pathAlarmsPage, "Alarms", "owner"},
	{pathAuditPage, "Audit log", "owner"},
}

// withMenu is the page at route with its menu in place of menuMark, the
// page's own link marked current. The menu stays hidden until the page
// is signed in.
func withMenu(route string, page []byte) []byte {
	if !bytes.Contains(page, []byte(menuMark)) {
		return page
	}
	var b strings.Builder
	b.WriteString(`<nav id="nav" class="nav" aria-label="Pages" hidden>`)
	for _, m := range menuPages {
		b.WriteString("\n    <a href=\"" + html.EscapeString(m.path) + `"`)
		if m.needs != "" {
			b.WriteString(` data-needs="` + m.needs + `"`)
		}
		if m.path == route {
			b.WriteString(` aria-current="page"`)
		}
		b.WriteString(">" + html.EscapeString(m.label) + "</a>")
	}
	b.WriteString("\n  </nav>")
	return bytes.Replace(page, []byte(menuMark), []byte(b.String()), 1)
}
