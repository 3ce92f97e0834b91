// Package access is LinkForge's authorization model: the one table that
// says which role each operation of the HTTP interface needs (the admin
// API, the dashboard's pages and the live feed), and the check of a
// caller's role against it (docs/adr/022-authorization.md).
//
// An operation is a route as the web server's router registers it: its
// method and its path template in echo's syntax ("GET /api/v1/links/:slug").
// The server looks each route up once, when it registers it, so a request
// pays one comparison of two small integers; a route the table does not
// name needs an owner (closed by default), and the web package's tests fail
// for any route or OpenAPI operation without an entry of its own.
//
// The roles themselves (owner > editor > viewer) are linkforge.Role.
package access

import (
	"net/http"

	"github.com/linkforge/linkforge"
)

// Requirement is what an operation needs of its caller.
type Requirement struct {
	// Public operations need no credential: the redirects, the health
	// and metrics endpoints, the OpenAPI document, the dashboard's static
	// pages (which then call the API with the caller's own credential).
	Public bool
	// Role is the lowest role admitted, when not Public.
	Role linkforge.Role
	// Operator operations are the operator's alone (an operator token or
	// an operator user's session): no tenant role reaches them.
	Operator bool
}

var (
	public = Requirement{Public: true}
	viewer = Requirement{Role: linkforge.RoleViewer}
	editor = Requirement{Role: linkforge.RoleEditor}
	owner  = Requirement{Role: linkforge.RoleOwner}
	// operator's Role names no tenant role, so that Check refuses every
	// tenant credential even where Operator were not looked at.
	operator = Requirement{Role: "operator", Operator: true}
)

// table is every operation's requirement, by "METHOD path". HEAD follows GET
// unless listed. The contract (each operation's x-linkforge-role in
// web/openapi.json) reads: an editor has the links (create, update, delete,
// bulk, import, export), tags, QR, stats and the live feed; a viewer every
// read of those and of the tenant; an owner everything, including tokens,
// webhooks, alarms and the audit log. What the contract does not give to an
// editor or a viewer is an owner's.
var table = map[string]Requirement{
	// The redirect path and the link password form.
	"GET /":                         public,
	"GET /favicon.ico":              public,
	"GET /robots.txt":               public,
	"GET /.well-known/security.txt": public,
	"GET /:slug":                    public,
	"POST /:slug":                   public,

	// Operations and documentation.
	"GET /api/v1/openapi.json": public,
	"GET /healthz":             public,
	"GET /readyz":              public,
	"GET /metrics":             public,

	// The dashboard's pages and assets: static, the data comes from the API.
	"GET /dashboard":            public,
	"GET /dashboard/webhooks":   public,
	"GET /static/dashboard.js":  public,
	"GET /static/dashboard.css": public,
	"GET /static/webhooks.js":   public,
	"GET /dashboard/people":     public,
	"GET /static/people.js":     public,
	"GET /static/people.css":    public,
	"GET /static/session.js":    public,

	// The domains page and the dashboard's link options (web/domainspage.go).
	"GET /dashboard/domains":      public,
	"GET /dashboard/audit":        public,
	"GET /dashboard/analytics":    public,
	"GET /dashboard/links/:slug":  public,
	"GET /dashboard/alarms":       public,
	"GET /dashboard/import":       public,
	"GET /dashboard/tags":         public,
	"GET /dashboard/operator":     public,
	"GET /static/operator.js":     public,
	"GET /static/domains.js":      public,
	"GET /static/audit.js":        public,
	"GET /static/alarms.js":       public,
	"GET /static/import.js":       public,
	"GET /static/tags.js":         public,
	"GET /static/link-options.js": public,

	// Links, tags, QR codes, stats.
	"GET /api/v1/links":                         viewer,
	"POST /api/v1/links":                        editor,
	"GET /api/v1/links/:slug":                   viewer,
	"PATCH /api/v1/links/:slug":                 editor,
	"DELETE /api/v1/links/:slug":                editor,
	"DELETE /api/v1/links/:slug/aliases/:alias": editor,
	"POST /api/v1/bulk/links":                   editor,
	"GET /api/v1/links/:slug/qr":                viewer,
	"GET /api/v1/qr/defaults":                   viewer,
	"PUT /api/v1/qr/defaults":                   editor,
	"GET /api/v1/qr/logo":                       viewer,
	"PUT /api/v1/qr/logo":                       editor,
	"DELETE /api/v1/qr/logo":                    editor,
	"GET /api/v1/links/:slug/stats":             viewer,
	"GET /api/v1/links/:slug/stats/:dimension":  viewer,
	"GET /api/v1/stats":                         viewer,
	"GET /api/v1/stats/links":                   viewer,
	"GET /api/v1/stats/export":                  viewer,
	"GET /api/v1/stats/:dimension":              viewer,
	"GET /api/v1/tags":                          viewer,
	"PATCH /api/v1/tags/:name":                  editor,
	"DELETE /api/v1/tags/:name":                 editor,
	"GET /api/v1/stats/campaigns":               viewer,
	"GET /api/v1/utm-templates":                 viewer,
	"POST /api/v1/utm-templates":                editor,
	"DELETE /api/v1/utm-templates/:id":          editor,
	"GET /api/v1/export":                        editor,
	"POST /api/v1/import":                       editor,
	"GET /api/v1/tenant":                        viewer,
	"GET /api/v1/live":                          viewer,
	"GET /api/v1/domains":                       viewer,
	"GET /api/v1/domains/:host":                 viewer,
	// Shared stats: an editor shares, a viewer sees what is shared; the
	// page is anyone's who holds its URL (web/shares.go).
	"POST /api/v1/links/:slug/shares":       editor,
	"GET /api/v1/links/:slug/shares":        viewer,
	"DELETE /api/v1/links/:slug/shares/:id": editor,
	"POST /api/v1/tags/:name/shares":        editor,
	"GET /api/v1/tags/:name/shares":         viewer,
	"DELETE /api/v1/tags/:name/shares/:id":  editor,
	"GET /share/:token":                     public,
	"POST /share/:token":                    public,

	// The tenant's machinery: alarms, webhooks (whose secrets a viewer
	// must not read), tokens, the audit log.
	"GET /api/v1/alarms":                         owner,
	"POST /api/v1/alarms/:id/retry":              owner,
	"GET /api/v1/webhooks":                       owner,
	"POST /api/v1/webhooks":                      owner,
	"PATCH /api/v1/webhooks/:id":                 owner,
	"DELETE /api/v1/webhooks/:id":                owner,
	"GET /api/v1/webhooks/:id/deliveries":        owner,
	"POST /api/v1/webhooks/deliveries/:id/retry": owner,
	"POST /api/v1/webhooks/:id/test":             owner,
	"POST /api/v1/tokens":                        owner,
	"GET /api/v1/tokens":                         owner,
	"DELETE /api/v1/tokens/:id":                  owner,
	"GET /api/v1/audit":                          owner,
	"POST /api/v1/users":                         owner,
	"GET /api/v1/users":                          owner,
	"PATCH /api/v1/users/:id":                    owner,
	"DELETE /api/v1/users/:id":                   owner,
	"POST /api/v1/domains":                       owner,
	"PATCH /api/v1/tenant":                       owner, // its target schemes
	"PATCH /api/v1/domains/:host":                owner,
	"DELETE /api/v1/domains/:host":               owner,
	"POST /api/v1/domains/:host/verify":          owner,
	"GET /api/v1/domains/:host/qr/defaults":      viewer,
	"PUT /api/v1/domains/:host/qr/defaults":      owner,
	"GET /api/v1/domains/:host/qr/logo":          viewer,
	"PUT /api/v1/domains/:host/qr/logo":          owner,
	"DELETE /api/v1/domains/:host/qr/logo":       owner,

	// The caller itself.
	"GET /api/v1/me":             viewer,
	"DELETE /api/v1/me/sessions": viewer,
	"GET /api/v1/me/sessions":    viewer,
	// A user's answer to their own invitation: any signed-in user.
	"POST /api/v1/me/invitations/:tenant/accept":  viewer,
	"POST /api/v1/me/invitations/:tenant/decline": viewer,

	// Sign-in: the forms and one-time URLs check their own credentials.
	"GET /login":           public,
	"POST /login":          public,
	"POST /logout":         public,
	"GET /invite/:ticket":  public,
	"POST /invite/:ticket": public,
	"GET /reset/:ticket":   public,
	"POST /reset/:ticket":  public,

	// Single sign-on: the identity provider's answer is the credential.
	"GET /login/oidc":          public,
	"GET /login/oidc/callback": public,

	// The operator, above tenants (web/operator.go).
	"GET /api/v1/operator/tenants":                operator,
	"POST /api/v1/operator/tenants/:name/suspend": operator,
	"POST /api/v1/operator/tenants/:name/resume":  operator,
	"GET /api/v1/operator/links":                  operator,
	"POST /api/v1/operator/links/:id/block":       operator,
	"DELETE /api/v1/operator/links/:id/block":     operator,
	"POST /api/v1/operator/links/:id/unsafe":      operator,
	"POST /api/v1/links/:slug/check":              editor,
	"DELETE /api/v1/operator/links/:id/unsafe":    operator,
	"GET /api/v1/operator/reports":                operator,
	"POST /api/v1/operator/reports/:id/resolve":   operator,
	// Abuse reports: anyone, limited per client address (web/reports.go).
	"GET /report":                       public,
	"POST /report":                      public,
	"POST /api/v1/reports":              public,
	"GET /api/v1/operator/audit":        operator,
	"GET /api/v1/operator/blocklist":    operator,
	"POST /api/v1/operator/blocklist":   operator,
	"DELETE /api/v1/operator/blocklist": operator,
	"GET /api/v1/operator/allowlist":    operator,
	"POST /api/v1/operator/allowlist":   operator,
	"DELETE /api/v1/operator/allowlist": operator,

	// A domain's verification answer: the token is not a secret, and the
	// verifier fetching it holds no credential.
	"GET /.well-known/linkforge-domain/:id": public,
	// A domain's app-link documents: fetched by the platforms' crawlers.
	"GET /.well-known/apple-app-site-association": public,
	"GET /.well-known/assetlinks.json":            public,
}

// Of returns the requirement of the operation method path (an echo path
// template), and whether the table names it. An operation it does not
// name needs an owner.
func Of(method, path string) (Requirement, bool) {
	if r, ok := table[method+" "+path]; ok {
		return r, true
	}
	if method == http.MethodHead {
		if r, ok := table[http.MethodGet+" "+path]; ok {
			return r, true
		}
	}
	return owner, false
}

// Check answers whether a caller of role have may run an operation that
// needs need: nil, EUnauthorized without a role (no credential was
// checked), or EForbidden for a role below it.
func Check(have, need linkforge.Role) error {
	if have == "" {
		return linkforge.Errorf(linkforge.EUnauthorized, "this operation needs a token")
	}
	if !have.Covers(need) {
		return linkforge.Errorf(linkforge.EForbidden, "this operation needs the role %s or higher; the caller is %s", need, have)
	}
	return nil
}

// CanGrant answers whether a caller of role have may give a credential
// role want: nil, or EForbidden for a role above the caller's own (no one
// mints a role above their own).
func CanGrant(have, want linkforge.Role) error {
	if !have.Covers(want) {
		return linkforge.Errorf(linkforge.EForbidden, "a %s cannot give the role %s: it is above its own", have, want)
	}
	return nil
}
