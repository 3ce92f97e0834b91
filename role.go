package linkforge

// Role is what a token (and, later, a user) may do in its tenant. The
// three roles are ordered: each may everything the one below it may. The
// table of which operation needs which role is package access's.
type Role string

// The roles (x-linkforge-role in web/openapi.json;
// docs/adr/022-authorization.md).
const (
	RoleViewer Role = "viewer" // reads of links, tags, stats, QR, tenant, live feed
	RoleEditor Role = "editor" // and the writes of links and tags
	RoleOwner  Role = "owner"  // everything of the tenant: tokens, webhooks, audit, ...
)

// Roles lists the roles, lowest first.
var Roles = []Role{RoleViewer, RoleEditor, RoleOwner}

// Rank orders the roles: viewer 1, editor 2, owner 3; anything else 0,
// which no operation admits.
func (r Role) Rank() int {
	switch r {
	case RoleViewer:
		return 1
	case RoleEditor:
		return 2
	case RoleOwner:
		return 3
	}
	return 0
}

// Valid reports whether r is one of Roles.
func (r Role) Valid() bool { return r.Rank() > 0 }

// Covers reports whether r may do what need may: a role at least as high.
// An invalid r covers nothing.
func (r Role) Covers(need Role) bool { return r.Valid() && r.Rank() >= need.Rank() }

// ParseRole returns the role named s, or EInvalid naming field.
func ParseRole(field, s string) (Role, error) {
	if r := Role(s); r.Valid() {
		return r, nil
	}
	return "", InvalidField(field, "want owner, editor or viewer")
}
