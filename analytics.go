package linkforge

import (
	"cmp"
	"context"
	"slices"
	"strings"
	"time"
)

// Analytics query limits (the limit parameter of operations linkBreakdown,
// tenantBreakdown and topLinks in web/openapi.json).
const (
	DefaultAnalyticsLimit = 10  // values or links listed when limit is absent
	MaxAnalyticsLimit     = 100 // the largest limit a query may ask for
)

// BreakdownQuery asks how one link's clicks (LinkID != 0) or all of a
// tenant's clicks (LinkID == 0) divide among the values of a Dimension, over
// the hours in [From, To). From and To are starts of UTC hours; a store
// answers EInvalid otherwise, because the per-hour counts cannot be cut
// inside an hour.
type BreakdownQuery struct {
	TenantID  int64
	LinkID    int64
	Dimension Dimension
	From, To  time.Time
	// Limit is how many values are listed, 1..MaxAnalyticsLimit.
	Limit int
	// Traffic keeps the clicks of one traffic only: "" (both),
	// TrafficHuman or TrafficAutomated.
	Traffic string
}

// View is the stored dimension name and traffic filter (TrafficFilter)
// that answer q; EInvalid for a traffic the API does not know or a
// dimension it does not list.
func (q BreakdownQuery) View() (name string, automated *bool, err error) {
	automated, ok := TrafficFilter(q.Traffic)
	if !ok || !q.Dimension.Public() {
		return "", nil, InvalidField("traffic", "must be human or automated")
	}
	return q.Dimension.String(), automated, nil
}

// ValueCount is the click count of one value of a dimension.
type ValueCount struct {
	Value string
	Count int64
}

// Breakdown is the answer to a BreakdownQuery. Values are ordered by count,
// descending, then by value in byte order; Rest counts the clicks of the
// values not listed, so that the listed counts plus Rest equal Total.
type Breakdown struct {
	Total  int64
	Values []ValueCount // never nil
	Rest   int64
}

// BreakdownRow is a row of a store's breakdown query: one listed value and
// the total of every value, on every row.
type BreakdownRow struct {
	ValueCount
	Total int64
}

// NewBreakdown is the Breakdown of the listed values of a dimension: Rest
// is what they leave of the total (0 clicks when there is no row).
func NewBreakdown(rows []BreakdownRow) Breakdown {
	b := Breakdown{Values: make([]ValueCount, 0, len(rows))}
	for _, r := range rows {
		b.Total = r.Total
		b.Values = append(b.Values, r.ValueCount)
		b.Rest -= r.Count
	}
	b.Rest += b.Total
	return b
}

// TopLinksQuery asks for a tenant's most clicked links over the hours in
// [From, To) (starts of UTC hours, as in BreakdownQuery).
type TopLinksQuery struct {
	TenantID int64
	From, To time.Time
	Limit    int // 1..MaxAnalyticsLimit
	// Traffic ranks by the clicks of one traffic only ("" both): see
	// BreakdownQuery.
	Traffic string
}

// LinkCount is the click count of one link over a TopLinksQuery's range.
type LinkCount struct {
	LinkID int64
	Slug   string
	// DomainID is the link's domain (PublicDomainID: the public host):
	// one slug can rank twice, once per domain.
	DomainID int64
	Count    int64
}

// TopLinks is the answer to a TopLinksQuery: links by count, descending,
// then by slug in byte order and domain id, links without clicks in the range left out;
// Total counts all the tenant's clicks in the range.
type TopLinks struct {
	Links []LinkCount // never nil
	Total int64
}

// AnalyticsStore answers the breakdown and top-links questions of the
// analytics API from per-hour counts (click_dims, and the per-tenant
// aggregates kept in step with the rollup: docs/adr/010-analytics-queries.md).
// Rows of deleted links count nowhere, as in Stats.
type AnalyticsStore interface {
	// Breakdown sums the per-hour dimension counts of q; another tenant's
	// link answers ENotFound.
	Breakdown(ctx context.Context, q BreakdownQuery) (Breakdown, error)
	// TopLinks ranks the tenant's links by their clicks in q's range.
	TopLinks(ctx context.Context, q TopLinksQuery) (TopLinks, error)
}

// CheckHourRange answers EInvalid unless from and to are starts of UTC
// hours with from before to, and limit is in 1..MaxAnalyticsLimit: the
// stores' shared check of analytics queries.
func CheckHourRange(from, to time.Time, limit int) error {
	switch {
	case !from.Equal(from.Truncate(time.Hour)):
		return InvalidField("from", "must be the start of an hour")
	case !to.Equal(to.Truncate(time.Hour)):
		return InvalidField("to", "must be the start of an hour")
	case !from.Before(to):
		return InvalidField("to", "must be after from")
	case limit < 1 || limit > MaxAnalyticsLimit:
		return InvalidField("limit", "must be an integer from 1 to 100")
	}
	return nil
}

// HourDaySplit cuts the hours [from, to) (starts of UTC hours, from before
// to) into whole UTC days [DayFrom, DayTo) and the hours left at either
// end, [from, HeadTo) and [TailFrom, to), so that a query reads one row per
// day where it can. Without a whole day inside, DayFrom == DayTo and the
// head holds every hour.
type HourDaySplit struct {
	HeadTo, DayFrom, DayTo, TailFrom time.Time
}

// SplitDays returns the split of [from, to).
func SplitDays(from, to time.Time) HourDaySplit {
	const day = 24 * time.Hour
	from, to = from.UTC(), to.UTC()
	dayFrom := from.Truncate(day)
	if dayFrom.Before(from) {
		dayFrom = dayFrom.Add(day)
	}
	dayTo := to.Truncate(day)
	if !dayFrom.Before(dayTo) {
		return HourDaySplit{HeadTo: to, DayFrom: to, DayTo: to, TailFrom: to}
	}
	return HourDaySplit{HeadTo: dayFrom, DayFrom: dayFrom, DayTo: dayTo, TailFrom: dayTo}
}

// TopLinkCandidate is a link read by the first step of a TopLinks query:
// its clicks in the range (Count) and an upper bound of them (Bound: its
// clicks of all time). Candidates come in order of Bound, descending.
type TopLinkCandidate struct {
	LinkID       int64
	Slug         string
	DomainID     int64
	Bound, Count int64
}

// TopLinksCandidates is how many links, by their clicks of all time, a
// TopLinks query of limit reads before it falls back to summing every
// link's clicks in the range: enough that a ranking that drifts a little
// over time is still settled by the first step.
func TopLinksCandidates(limit int) int { return 4*limit + 32 }

// RankCandidates returns the limit links with the most clicks among cands
// (ties by slug in byte order, then by domain id; links without clicks left out), and whether
// that is the exact answer for every link of the tenant. cands are the
// first n links in descending order of Bound, or all of them if fewer than
// n. No link after them has more clicks in the range than the last
// candidate's Bound, so if the limit-th link has more (or, with fewer than
// limit links listed, that bound is 0), no other link can enter the list
// or tie with its last entry.
func RankCandidates(cands []TopLinkCandidate, limit, n int) ([]LinkCount, bool) {
	ranked := make([]LinkCount, 0, len(cands))
	for _, c := range cands {
		if c.Count > 0 {
			ranked = append(ranked, LinkCount{LinkID: c.LinkID, Slug: c.Slug, DomainID: c.DomainID, Count: c.Count})
		}
	}
	slices.SortFunc(ranked, func(a, b LinkCount) int {
		if a.Count != b.Count {
			return cmp.Compare(b.Count, a.Count)
		}
		return cmp.Or(strings.Compare(a.Slug, b.Slug), cmp.Compare(a.DomainID, b.DomainID))
	})
	if len(ranked) > limit {
		ranked = ranked[:limit]
	}
	if len(cands) < n {
		return ranked, true // every link of the tenant was a candidate
	}
	need := int64(1) // with fewer than limit listed, any click would enter
	if len(ranked) == limit {
		need = ranked[limit-1].Count
	}
	return ranked, cands[len(cands)-1].Bound < need
}
