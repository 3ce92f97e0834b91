// Package aggregates is the one home of the aggregate tables' upkeep
// (docs/adr/052-aggregate-upkeep.md), decided once for both dialects.
//
// The invariant: each aggregate row is the sum of its raw rows
// (click_rollup, a node's absolute count of a link's minute, and
// click_dims, of a link's hour under a dimension's value), as they were
// written: retention removes raw rows without lowering an aggregate, and a
// link's delete takes its rows out of every aggregate. store/storetest's
// AggregatesAreSums checks it on both backends.
//
// A write of raw rows, in its transaction, reads the stored counts of the
// keys it writes (Stored), keeps the rows that raise them (GrowMinutes,
// GrowDims: a node's count only grows, so a smaller one is stale), writes
// those, and hands what each grew by to Sum, which sums the growth by
// aggregate key. The store writes each aggregate row once per transaction,
// in key order (the order concurrent writers take row locks in), with its
// dialect's upsert that adds to the stored sum. Nothing else keeps the
// aggregates: no trigger fires on the raw tables (migration 00044).
package aggregates

import (
	"cmp"
	"maps"
	"slices"

	"github.com/linkforge/linkforge"
)

// MinuteKey is a click_rollup row's key within one node's rows.
type MinuteKey struct {
	Link   int64
	Bucket int64 // unix seconds
}

// DimKey is a click_dims row's key within one node's rows.
type DimKey struct {
	Link      int64
	Hour      int64 // unix seconds
	Dim       string
	Automated bool
	Value     string
}

// Minute is a stored click_rollup row's counts.
type Minute struct{ Count, Automated int64 }

// GrowMinutes returns the rows of rows that raise their stored counts
// (stored, by key; absent is 0), each at the larger of its two counts and
// of its two automated parts, and what each one's count grew by (Count;
// Automated is 0: the aggregates' automated part sums the traffic
// dimension's rows). A key twice grows from the first to the second.
// stored is updated to what is written.
func GrowMinutes(stored map[MinuteKey]Minute, rows []linkforge.RollupRow) (write, growth []linkforge.RollupRow) {
	write, growth = make([]linkforge.RollupRow, 0, len(rows)), make([]linkforge.RollupRow, 0, len(rows))
	for _, r := range rows {
		k := MinuteKey{r.LinkID, r.Bucket.Unix()}
		old := stored[k]
		if r.Count <= old.Count && r.Automated <= old.Automated {
			continue
		}
		r.Count, r.Automated = max(r.Count, old.Count), max(r.Automated, old.Automated)
		stored[k] = Minute{r.Count, r.Automated}
		write = append(write, r)
		if d := r.Count - old.Count; d > 0 {
			growth = append(growth, linkforge.RollupRow{LinkID: r.LinkID, Bucket: r.Bucket, Count: d})
		}
	}
	return write, growth
}

// GrowDims is GrowMinutes for click_dims rows.
func GrowDims(stored map[DimKey]int64, dims []linkforge.DimRow) (write, growth []linkforge.DimRow) {
	write, growth = make([]linkforge.DimRow, 0, len(dims)), make([]linkforge.DimRow, 0, len(dims))
	for _, d := range dims {
		k := DimKey{d.LinkID, d.Hour.Unix(), d.Dim.String(), d.Automated, d.Value}
		old := stored[k]
		if d.Count <= old {
			continue
		}
		stored[k] = d.Count
		write = append(write, d)
		d.Count -= old
		growth = append(growth, d)
	}
	return write, growth
}

// Hourly is a tenant_hourly row (Link 0), a link_hourly row or a
// link_daily row (At the day, Automated 0): its growth.
type Hourly struct {
	Tenant, At, Link int64
	Count, Automated int64
}

// Dim is a tenant_dims_hourly or tenant_dims_daily row (Owner the
// tenant) or a link_dims_daily row (Owner the link): its growth.
type Dim struct {
	Owner     int64
	Dim       string
	At        int64
	Automated bool
	Value     string
	Count     int64
}

// Total is a link's growth of links.rollup_clicks, the sum of its
// click_rollup rows and its click_rollup_pruned ones.
type Total struct{ Link, Count int64 }

// Rows is the growth of each aggregate table, each in key order, rows
// that would not change left out.
type Rows struct {
	TenantHourly     []Hourly // tenant, hour
	LinkHourly       []Hourly // tenant, hour, link
	LinkDaily        []Hourly // tenant, day, link
	LinkTotals       []Total
	TenantDimsHourly []Dim // tenant, dimension, hour, automated, value
	TenantDimsDaily  []Dim // tenant, dimension, day, automated, value
	LinkDimsDaily    []Dim // link, dimension, day, automated, value; by link only
}

// Empty reports whether r changes nothing.
func (r Rows) Empty() bool {
	return len(r.TenantHourly)+len(r.LinkHourly)+len(r.LinkDaily)+len(r.LinkTotals)+
		len(r.TenantDimsHourly)+len(r.TenantDimsDaily)+len(r.LinkDimsDaily) == 0
}

// Sum sums growth (raw rows whose Count is what they grew by, negative
// when they went) by aggregate key. tenants is the tenant of each link
// that exists: a deleted link's rows left the aggregates with it, and a
// late write of its rows must not bring them back.
func Sum(tenants map[int64]int64, minutes []linkforge.RollupRow, dims []linkforge.DimRow) Rows {
	type hourKey struct{ tenant, at, link int64 }
	type dimKey struct {
		owner     int64
		dim       linkforge.Dimension
		at        int64
		automated bool
		value     string
	}
	var (
		tenantHourly = map[hourKey]Hourly{}
		linkHourly   = map[hourKey]Hourly{}
		linkDaily    = map[hourKey]Hourly{}
		totals       = map[int64]int64{}
		tdh          = map[dimKey]int64{}
		tdd          = map[dimKey]int64{}
		// link_dims_daily's rows, one or so per growing row (a link's
		// hours of one day share one), in the order they came: link by
		// link, as a flush writes them.
		ldd   = make(map[dimKey]int, len(dims))
		lddAt = make([]Dim, 0, len(dims))
	)
	add := func(m map[hourKey]Hourly, k hourKey, count, automated int64) {
		h := m[k]
		h.Tenant, h.At, h.Link = k.tenant, k.at, k.link
		h.Count += count
		h.Automated += automated
		m[k] = h
	}
	for _, r := range minutes {
		tn, ok := tenants[r.LinkID]
		if !ok || r.Count == 0 {
			continue
		}
		at := r.Bucket.Unix()
		hour, day := floor(at, 3600), floor(at, 86400)
		add(tenantHourly, hourKey{tn, hour, 0}, r.Count, 0)
		add(linkHourly, hourKey{tn, hour, r.LinkID}, r.Count, 0)
		add(linkDaily, hourKey{tn, day, r.LinkID}, r.Count, 0)
		totals[r.LinkID] += r.Count
	}
	for _, d := range dims {
		tn, ok := tenants[d.LinkID]
		if !ok || d.Count == 0 {
			continue
		}
		hour := d.Hour.Unix()
		day := floor(hour, 86400)
		tdh[dimKey{tn, d.Dim, hour, d.Automated, d.Value}] += d.Count
		tdd[dimKey{tn, d.Dim, day, d.Automated, d.Value}] += d.Count
		k := dimKey{d.LinkID, d.Dim, day, d.Automated, d.Value}
		if i, ok := ldd[k]; ok {
			lddAt[i].Count += d.Count
		} else {
			ldd[k] = len(lddAt)
			lddAt = append(lddAt, Dim{d.LinkID, d.Dim.String(), day, d.Automated, d.Value, d.Count})
		}
		if d.Dim == linkforge.DimTraffic && d.Value == linkforge.TrafficAutomated {
			add(tenantHourly, hourKey{tn, hour, 0}, 0, d.Count)
			add(linkHourly, hourKey{tn, hour, d.LinkID}, 0, d.Count)
		}
	}
	byHour := func(a, b Hourly) int {
		return cmp.Or(cmp.Compare(a.Tenant, b.Tenant), cmp.Compare(a.At, b.At), cmp.Compare(a.Link, b.Link))
	}
	hourly := func(m map[hourKey]Hourly) []Hourly {
		out := make([]Hourly, 0, len(m))
		for _, h := range m {
			if h.Count != 0 || h.Automated != 0 {
				out = append(out, h)
			}
		}
		slices.SortFunc(out, byHour)
		return out
	}
	dimRows := func(m map[dimKey]int64) []Dim {
		out := make([]Dim, 0, len(m))
		for k, n := range m {
			if n != 0 {
				out = append(out, Dim{k.owner, k.dim.String(), k.at, k.automated, k.value, n})
			}
		}
		slices.SortFunc(out, byDim)
		return out
	}
	// The link's rows need not be in full key order: the order matters
	// for the B-tree's pages (and for the order of row locks, but the
	// writers of one database hold its aggregate lock), and rows of one
	// link are neighbours. A flush's rows come sorted by link already.
	links := lddAt[:0]
	for _, d := range lddAt {
		if d.Count != 0 {
			links = append(links, d)
		}
	}
	byLink := func(a, b Dim) int { return cmp.Compare(a.Owner, b.Owner) }
	if !slices.IsSortedFunc(links, byLink) {
		slices.SortStableFunc(links, byLink)
	}
	r := Rows{
		TenantHourly:     hourly(tenantHourly),
		LinkHourly:       hourly(linkHourly),
		LinkDaily:        hourly(linkDaily),
		TenantDimsHourly: dimRows(tdh),
		TenantDimsDaily:  dimRows(tdd),
		LinkDimsDaily:    links,
	}
	for _, id := range slices.Sorted(maps.Keys(totals)) {
		if n := totals[id]; n != 0 {
			r.LinkTotals = append(r.LinkTotals, Total{id, n})
		}
	}
	return r
}

// byDim orders Dim rows by key.
func byDim(a, b Dim) int {
	return cmp.Or(cmp.Compare(a.Owner, b.Owner), cmp.Compare(a.Dim, b.Dim), cmp.Compare(a.At, b.At),
		compareBool(a.Automated, b.Automated), cmp.Compare(a.Value, b.Value))
}

// floor is t's start of its width-second interval (UTC; buckets are after
// 1970, so integer division floors).
func floor(t, width int64) int64 { return t / width * width }

// compareBool orders false before true, as both dialects do.
func compareBool(a, b bool) int {
	switch {
	case a == b:
		return 0
	case a:
		return 1
	}
	return -1
}
