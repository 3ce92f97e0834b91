package web

// The dashboard's operator page (operator.go's API in a browser): every
// tenant with suspend and resume, the links of every tenant with block and
// unblock. Served like the dashboard's own files (dashboard.go); it holds
// no data, the API answers only an operator's credential.
const (
	pathOperatorPage = "/dashboard/operator"
	pathOperatorJS   = "/static/operator.js"
)

func init() {
	addDashboardAssets(map[string]struct{ name, contentType string }{
		pathOperatorPage: {"assets/operator.html", "text/html; charset=utf-8"},
		pathOperatorJS:   {"assets/operator.js", "text/javascript; charset=utf-8"},
	})
}
