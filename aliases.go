package linkforge

import "context"

// AliasStore renames links (PATCH /api/v1/links/{slug} {"slug"}) and
// keeps each old slug as an alias of its link: the alias keeps
// redirecting to the link and counting to it, so that printed links and
// QR codes never break, until it is removed.
type AliasStore interface {
	// RenameLink gives the tenant's link slug on the domain the slug to,
	// in one transaction with its event and audit, and returns the link
	// renamed; the old slug becomes one of its aliases. A to in use by a
	// link, or by another link's alias, is EConflict naming "slug"; a to
	// that is an alias of this link stops being one.
	RenameLink(ctx context.Context, tenantID, domainID int64, slug, to string) (Link, error)
	// LinkAliases returns the aliases of the link id, in byte order.
	LinkAliases(ctx context.Context, linkID int64) ([]string, error)
	// DeleteAlias removes alias from the tenant's link slug on the
	// domain: it answers 404 from then on. ENotFound when the link has
	// no such alias.
	DeleteAlias(ctx context.Context, tenantID, domainID int64, slug, alias string) error
}

// SlugTakenError is the EConflict of a slug in use, naming the field.
func SlugTakenError(slug string, cause error) *Error {
	return &Error{
		Code:    EConflict,
		Message: "slug " + slug + " is already taken",
		Fields:  []FieldError{{Field: "slug", Detail: "is already taken (by a link or a renamed link's old slug)"}},
		Err:     cause,
	}
}
