package linkforge

import "time"

// The rules of a link write that every store applies alike: what a stored
// link looks like, what an update may change, and what it does to the
// link's alarm. The stores keep only the SQL around them, so that the two
// backends cannot drift apart on a rule.

// NormalizeLink brings l to what a read returns: UTC times truncated to the
// microseconds both databases keep, its own copy of MaxClicks, and non-nil
// tags (a nil slice would be written as JSON or SQL NULL).
func NormalizeLink(l Link) Link {
	l.ExpiresAt = NormalizeTime(l.ExpiresAt)
	l.ExpiredAt = NormalizeTime(l.ExpiredAt)
	l.ValidSince = NormalizeTime(l.ValidSince)
	l.MaxClicks = copyPtr(l.MaxClicks)
	if !l.CreatedAt.IsZero() {
		l.CreatedAt = l.CreatedAt.UTC().Truncate(time.Microsecond)
	}
	if !l.UpdatedAt.IsZero() {
		l.UpdatedAt = l.UpdatedAt.UTC().Truncate(time.Microsecond)
	}
	if l.Tags == nil {
		l.Tags = []string{}
	}
	l.Routing = normalizeRouting(l.Routing)
	return l
}

// NormalizeTime is a copy of *t in UTC, truncated to microseconds; nil
// stays nil.
func NormalizeTime(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	v := t.UTC().Truncate(time.Microsecond)
	return &v
}

func copyPtr[T any](p *T) *T {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}

func sameTime(a, b *time.Time) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return a.Equal(*b)
}

// LinkUpdate is what ApplyLinkUpdate decided: the link to write back and
// what becomes of its alarm.
type LinkUpdate struct {
	Link  Link
	Alarm AlarmChange
	// Disabled and Enabled say that the update switched the link off or
	// back on (its events and audit).
	Disabled, Enabled bool
}

// AlarmChange is what a link write does to the link's alarm, in the
// transaction of the write.
type AlarmChange int

// The alarm changes of an update: the alarm follows the expiry.
const (
	// AlarmKept: the expiry did not move.
	AlarmKept AlarmChange = iota
	// AlarmDeleted: the expiry was cleared.
	AlarmDeleted
	// AlarmRescheduled: the expiry moved; the alarm is created or moved
	// to it, in the state AlarmStateFor gives.
	AlarmRescheduled
)

// ApplyLinkUpdate lets fn change a copy of old, the link as the update's
// transaction read it, and returns the link to write back at now. fn gets
// its own copies of the pointed-to values, so that it cannot change old
// through them; its error is returned unchanged. The identity (ID, tenant,
// domain, slug, creation time) is old's whatever fn did; Clicks stays the rollup
// total plus ImportedClicks, which fn may change; an ExpiredAt that
// recorded a moved expiry is cleared; and UpdatedAt only moves forward,
// even if the clock steps back, two updates share a microsecond or two
// nodes' clocks disagree: clients may compare it.
func ApplyLinkUpdate(old Link, now time.Time, fn func(*Link) error) (LinkUpdate, error) {
	l := old
	l.ExpiresAt = copyPtr(old.ExpiresAt)
	l.ExpiredAt = copyPtr(old.ExpiredAt)
	l.ValidSince = copyPtr(old.ValidSince)
	l.MaxClicks = copyPtr(old.MaxClicks)
	l.Tags = append([]string{}, old.Tags...)
	if err := fn(&l); err != nil {
		return LinkUpdate{}, err
	}
	// A block is the operator's (BlockLink): no update of the tenant's
	// changes it, nor the tenant's switch under it.
	l.BlockedReason = old.BlockedReason
	l.UnsafeReason = old.UnsafeReason // a check's, as the block is the operator's
	l.Health = old.Health
	if old.BlockedReason != "" && l.Disabled != old.Disabled {
		return LinkUpdate{}, ErrLinkBlocked()
	}
	l = NormalizeLink(l)
	l.ID, l.TenantID, l.Slug, l.CreatedAt = old.ID, old.TenantID, old.Slug, old.CreatedAt
	l.DomainID = old.DomainID
	l.Clicks = old.Clicks - old.ImportedClicks + l.ImportedClicks
	change := AlarmKept
	if !sameTime(l.ExpiresAt, old.ExpiresAt) {
		change = AlarmRescheduled
		if l.ExpiresAt == nil {
			change = AlarmDeleted
		}
		if sameTime(l.ExpiredAt, old.ExpiredAt) {
			// The expiry it recorded is no longer the link's.
			l.ExpiredAt = nil
		}
	}
	l.UpdatedAt = now
	if !l.UpdatedAt.After(old.UpdatedAt) {
		l.UpdatedAt = old.UpdatedAt.Add(time.Microsecond)
	}
	return LinkUpdate{Link: l, Alarm: change, Disabled: l.Disabled && !old.Disabled, Enabled: !l.Disabled && old.Disabled}, nil
}

// JustExpired reports whether ExpireLinks at now is what expired l (its
// ExpiredAt is now), rather than a replayed run that found an earlier
// ExpiredAt: only the first gets a link.expired event.
func JustExpired(l Link, now time.Time) bool {
	return l.ExpiredAt != nil && l.ExpiredAt.Equal(now)
}

// TrimPage makes the page of a listing that read one link more than limit
// to tell whether there is a next page: the extra link is dropped and the
// cursor of the last one kept is the next page's.
func TrimPage(links []Link, limit int, cursor func(Link) string) LinkPage {
	page := LinkPage{Links: links}
	if len(links) > limit {
		page.Links = links[:limit]
		page.NextCursor = cursor(page.Links[limit-1])
	}
	return page
}

// PageLimit bounds a listing's limit: def when it is 0 or less, at most
// most.
func PageLimit(limit, def, most int) int {
	if limit <= 0 {
		return def
	}
	return min(limit, most)
}

// normalizeRouting returns a copy of r in the one form a read returns: nil
// when it sets nothing, 302 as 0, empty slices and cards as nil. So a link
// written with 0 and read back from a column holding 302 compares equal.
func normalizeRouting(r *Routing) *Routing {
	if r.IsZero() {
		return nil
	}
	c := *r
	if c.RedirectStatus == DefaultRedirectCode {
		c.RedirectStatus = 0
	}
	if len(c.Rules) == 0 {
		c.Rules = nil
	}
	if len(c.Variants) == 0 {
		c.Variants = nil
	}
	if c.OG.IsZero() {
		c.OG = nil
	}
	return &c
}
