package linkforge

import "context"

// TagStore renames and deletes a tenant's tags on all of its links at
// once (PATCH and DELETE /api/v1/tags/{name}). Each call is one
// transaction with its audit event; the tags are normalized already
// (NormalizeTag), and the links' updated_at move as any update's.
type TagStore interface {
	// RenameTag replaces from by to on every link of the tenant carrying
	// from, merging it into to on the links carrying both, and returns
	// the number of links changed; ENotFound when no link carries from.
	RenameTag(ctx context.Context, tenantID int64, from, to string) (int64, error)
	// DeleteTag removes tag from every link of the tenant carrying it and
	// returns the number of links changed; ENotFound when none does.
	DeleteTag(ctx context.Context, tenantID int64, tag string) (int64, error)
}

// Retag returns a copy of tags with from replaced by to in its place, or
// removed when to is "", and without the second to a merge would make:
// the rule of both stores' RenameTag and DeleteTag.
func Retag(tags []string, from, to string) []string {
	out := make([]string, 0, len(tags))
	seen := false
	for _, t := range tags {
		if t == from {
			t = to
		}
		if t == "" {
			continue
		}
		if t == to {
			if seen {
				continue
			}
			seen = true
		}
		out = append(out, t)
	}
	return out
}
