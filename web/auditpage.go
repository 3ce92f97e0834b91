package web

// The dashboard's audit log page (owners only, as GET /api/v1/audit),
// served like the dashboard's own files (dashboard.go).
const (
	pathAuditPage = "/dashboard/audit"
	pathAuditJS   = "/static/audit.js"
)

func init() {
	addDashboardAssets(map[string]struct{ name, contentType string }{
		pathAuditPage: {"assets/audit.html", "text/html; charset=utf-8"},
		pathAuditJS:   {"assets/audit.js", "text/javascript; charset=utf-8"},
	})
}
