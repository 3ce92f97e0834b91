package linkforge

import (
	"context"
	"reflect"
	"slices"
)

// MaxFindCandidates bounds the links of one URL FindIfExists compares.
const MaxFindCandidates = 100

// LinkFinder finds a tenant's links by target (POST /api/v1/links with
// find_if_exists).
type LinkFinder interface {
	// LinksByURL returns up to limit of the tenant's links on the domain
	// whose url is exactly url, oldest first, with their Clicks.
	LinksByURL(ctx context.Context, tenantID, domainID int64, url string, limit int) ([]Link, error)
}

// FindMatch reports whether existing answers a create of want with
// find_if_exists: the same URL and domain, redirecting (neither disabled
// nor blocked), and no field want sets (a non-zero value) that differs.
// A create with a password never matches: the stored hash cannot be
// compared without the slow hash, and a new password is a new link.
func FindMatch(existing, want Link, password string) bool {
	if existing.URL != want.URL || existing.DomainID != want.DomainID || existing.TenantID != want.TenantID ||
		existing.Disabled || existing.BlockedReason != "" || password != "" {
		return false
	}
	want = NormalizeLink(want)
	switch {
	case want.Slug != "" && want.Slug != existing.Slug,
		want.Title != "" && want.Title != existing.Title,
		want.Notes != "" && want.Notes != existing.Notes,
		want.FallbackURL != "" && want.FallbackURL != existing.FallbackURL,
		want.Archived && !existing.Archived,
		want.ExpiresAt != nil && !sameTime(want.ExpiresAt, existing.ExpiresAt),
		want.ValidSince != nil && !sameTime(want.ValidSince, existing.ValidSince),
		want.MaxClicks != nil && (existing.MaxClicks == nil || *want.MaxClicks != *existing.MaxClicks),
		!want.DeviceURLs.IsZero() && want.DeviceURLs != existing.DeviceURLs,
		want.Routing != nil && !reflect.DeepEqual(want.Routing, existing.Routing):
		return false
	}
	if len(want.Tags) > 0 {
		a, b := slices.Clone(want.Tags), slices.Clone(existing.Tags)
		slices.Sort(a)
		slices.Sort(b)
		if !slices.Equal(a, b) {
			return false
		}
	}
	return true
}
