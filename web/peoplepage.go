package web

import (
	"crypto/sha256"
	"encoding/base64"
	"fmt"
)

// The dashboard's People page (tokens and users) and the script every
// dashboard page signs in with (a pasted token or the session cookie),
// served like the dashboard's own files (dashboard.go).
const (
	pathPeoplePage = "/dashboard/people"
	pathPeopleJS   = "/static/people.js"
	pathPeopleCSS  = "/static/people.css"
	pathSessionJS  = "/static/session.js"
)

func init() {
	addDashboardAssets(map[string]struct{ name, contentType string }{
		pathPeoplePage: {"assets/people.html", "text/html; charset=utf-8"},
		pathPeopleJS:   {"assets/people.js", "text/javascript; charset=utf-8"},
		pathPeopleCSS:  {"assets/people.css", "text/css; charset=utf-8"},
		pathSessionJS:  {"assets/session.js", "text/javascript; charset=utf-8"},
	})
}

// addDashboardAssets embeds files, by route, among the dashboard's assets,
// each with its ETag.
func addDashboardAssets(files map[string]struct{ name, contentType string }) {
	for path, f := range files {
		body, err := assets.ReadFile(f.name)
		if err != nil {
			panic(fmt.Sprintf("web: embedded %s: %v", f.name, err)) // a broken build
		}
		body = withMenu(path, body)
		sum := sha256.Sum256(body)
		dashboardAssets[path] = asset{body: body, contentType: f.contentType,
			etag: `"` + base64.RawURLEncoding.EncodeToString(sum[:12]) + `"`}
	}
}
