package web

// The dashboard's owner pages, served like the dashboard's own files
// (dashboard.go): the audit log (GET /api/v1/audit) and the alarms (the
// expiry alarms and the webhooks' dead deliveries, with replay).
const (
	pathAuditPage  = "/dashboard/audit"
	pathAuditJS    = "/static/audit.js"
	pathAlarmsPage = "/dashboard/alarms"
	pathAlarmsJS   = "/static/alarms.js"
)

func init() {
	addDashboardAssets(map[string]struct{ name, contentType string }{
		pathAuditPage:  {"assets/audit.html", "text/html; charset=utf-8"},
		pathAuditJS:    {"assets/audit.js", "text/javascript; charset=utf-8"},
		pathAlarmsPage: {"assets/alarms.html", "text/html; charset=utf-8"},
		pathAlarmsJS:   {"assets/alarms.js", "text/javascript; charset=utf-8"},
	})
}
