package web

// Dashboard pages served like the dashboard's own files (dashboard.go):
// the owners' audit log (GET /api/v1/audit) and alarms (the expiry alarms
// and the webhooks' dead deliveries, with replay), import and export, and
// tags.
const (
	pathAuditPage  = "/dashboard/audit"
	pathAuditJS    = "/static/audit.js"
	pathAlarmsPage = "/dashboard/alarms"
	pathAlarmsJS   = "/static/alarms.js"
	// The import and export page is every role's (a viewer exports the
	// clicks); it is here with the other pages made of one form and list.
	pathImportPage = "/dashboard/import"
	pathImportJS   = "/static/import.js"
	pathTagsPage   = "/dashboard/tags"
	pathTagsJS     = "/static/tags.js"
)

func init() {
	addDashboardAssets(map[string]struct{ name, contentType string }{
		pathAuditPage:  {"assets/audit.html", "text/html; charset=utf-8"},
		pathAuditJS:    {"assets/audit.js", "text/javascript; charset=utf-8"},
		pathAlarmsPage: {"assets/alarms.html", "text/html; charset=utf-8"},
		pathAlarmsJS:   {"assets/alarms.js", "text/javascript; charset=utf-8"},
		pathImportPage: {"assets/import.html", "text/html; charset=utf-8"},
		pathImportJS:   {"assets/import.js", "text/javascript; charset=utf-8"},
		pathTagsPage:   {"assets/tags.html", "text/html; charset=utf-8"},
		pathTagsJS:     {"assets/tags.js", "text/javascript; charset=utf-8"},
	})
}
