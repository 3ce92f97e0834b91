package storetest

import (
	"cmp"
	"slices"
	"testing"
	"time"

	"github.com/linkforge/linkforge"
)

// DimsPoisoner is implemented by a backend test's store wrapper that can
// make the database itself refuse a click_dims row: after PoisonDims(t,
// value), writing a row with that value fails inside the store's
// transaction (a trigger), after the validation. The conformance suite uses
// it to show that a failing dimension write takes the flush's minute rows
// with it. Stores without it skip that case.
type DimsPoisoner interface {
	PoisonDims(t *testing.T, value string)
}

// dimsHour returns the start of the i-th hour after t0's hour.
func dimsHour(i int) time.Time { return t0.Truncate(time.Hour).Add(time.Duration(i) * time.Hour) }

// nodeDims returns nodeID's click_dims rows of link, sorted.
func nodeDims(t *testing.T, s linkforge.Store, nodeID string, linkID int64) []linkforge.DimRow {
	t.Helper()
	all, err := s.NodeDims(t.Context(), nodeID, dimsHour(-1000))
	if err != nil {
		t.Fatalf("NodeDims(%q): %v", nodeID, err)
	}
	var out []linkforge.DimRow
	for _, d := range all {
		if d.LinkID == linkID {
			checkTime(t, "NodeDims hour", d.Hour)
			out = append(out, d)
		}
	}
	slices.SortFunc(out, func(a, b linkforge.DimRow) int {
		return cmp.Or(a.Hour.Compare(b.Hour), cmp.Compare(a.Dim, b.Dim), cmp.Compare(a.Value, b.Value))
	})
	return out
}

func sameDims(a, b []linkforge.DimRow) bool {
	return slices.EqualFunc(a, b, func(x, y linkforge.DimRow) bool {
		return x.LinkID == y.LinkID && x.Hour.Equal(y.Hour) && x.Dim == y.Dim && x.Value == y.Value && x.Count == y.Count
	})
}

func testClickDims(t *testing.T, s linkforge.Store) {
	ctx := t.Context()
	acme := mustTenant(t, s, "dims-acme")
	dim := func(l linkforge.Link, h int, d linkforge.Dimension, v string, n int64) linkforge.DimRow {
		return linkforge.DimRow{LinkID: l.ID, Hour: dimsHour(h), Dim: d, Value: v, Count: n}
	}
	upsert := func(t *testing.T, node string, rows []linkforge.RollupRow, dims ...linkforge.DimRow) {
		t.Helper()
		if err := s.UpsertClicks(ctx, node, rows, dims); err != nil {
			t.Fatalf("UpsertClicks(%q): %v", node, err)
		}
	}

	t.Run("monotonic upsert", func(t *testing.T) {
		l := mustCreateLink(t, s, newLink(acme.ID, "dims-mono"))
		upsert(t, "node-a", nil, dim(l, 0, linkforge.DimCountry, "NL", 5), dim(l, 0, linkforge.DimCountry, "US", 2))
		upsert(t, "node-a", nil, dim(l, 0, linkforge.DimCountry, "NL", 3)) // stale: kept at 5
		upsert(t, "node-a", nil, dim(l, 0, linkforge.DimCountry, "US", 9)) // grows
		want := []linkforge.DimRow{dim(l, 0, linkforge.DimCountry, "NL", 5), dim(l, 0, linkforge.DimCountry, "US", 9)}
		if got := nodeDims(t, s, "node-a", l.ID); !sameDims(got, want) {
			t.Errorf("after 5, 3 and 2, 9: %+v, want %+v", got, want)
		}
		// Another node's row is its own.
		upsert(t, "node-b", nil, dim(l, 0, linkforge.DimCountry, "NL", 1))
		if got := nodeDims(t, s, "node-a", l.ID); !sameDims(got, want) {
			t.Errorf("node-a after node-b wrote: %+v, want %+v", got, want)
		}
		// One key twice in a batch: the larger wins.
		upsert(t, "node-a", nil, dim(l, 1, linkforge.DimOS, "iOS", 8), dim(l, 1, linkforge.DimOS, "iOS", 4))
		if got := nodeDims(t, s, "node-a", l.ID); len(got) != 3 || got[2].Count != 8 {
			t.Errorf("a key twice in one batch: %+v, want iOS 8", got)
		}
	})

	t.Run("replay is idempotent", func(t *testing.T) {
		l := mustCreateLink(t, s, newLink(acme.ID, "dims-replay"))
		rows := []linkforge.RollupRow{{LinkID: l.ID, Bucket: minute(0), Count: 3}, {LinkID: l.ID, Bucket: minute(1), Count: 4}}
		dims := []linkforge.DimRow{
			dim(l, 0, linkforge.DimReferrer, "example.org", 2), dim(l, 0, linkforge.DimReferrer, "direct", 1),
			dim(l, 1, linkforge.DimReferrer, "direct", 4),
		}
		for range 5 {
			upsert(t, "node-a", rows, dims...)
		}
		if got := mustTenantLink(t, s, acme.ID, l.Slug).Clicks; got != 7 {
			t.Errorf("clicks after 5 replays = %d, want 7", got)
		}
		want := slices.Clone(dims)
		slices.SortFunc(want, func(a, b linkforge.DimRow) int {
			return cmp.Or(a.Hour.Compare(b.Hour), cmp.Compare(a.Value, b.Value))
		})
		if got := nodeDims(t, s, "node-a", l.ID); !sameDims(got, want) {
			t.Errorf("after 5 replays: %+v, want %+v", got, want)
		}
	})

	t.Run("node dims", func(t *testing.T) {
		l := mustCreateLink(t, s, newLink(acme.ID, "dims-node"))
		node := "node-seed-" + l.Slug
		upsert(t, node, nil, dim(l, 0, linkforge.DimDevice, "mobile", 1), dim(l, 2, linkforge.DimDevice, "desktop", 2))
		got, err := s.NodeDims(ctx, node, dimsHour(1).Add(-time.Millisecond))
		if err != nil {
			t.Fatalf("NodeDims: %v", err)
		}
		if want := []linkforge.DimRow{dim(l, 2, linkforge.DimDevice, "desktop", 2)}; !sameDims(got, want) {
			t.Errorf("NodeDims from before hour 1 = %+v, want %+v", got, want)
		}
		if got, err := s.NodeDims(ctx, "node-unknown", dimsHour(-1000)); err != nil || len(got) != 0 {
			t.Errorf("NodeDims of an unknown node = %+v, %v; want none", got, err)
		}
	})

	t.Run("node link clicks", func(t *testing.T) {
		l := mustCreateLink(t, s, newLink(acme.ID, "dims-node-link"))
		other := mustCreateLink(t, s, newLink(acme.ID, "dims-node-link-other"))
		node := "node-seed-" + l.Slug
		at := func(h, m int) time.Time { return dimsHour(h).Add(time.Duration(m) * time.Minute) }
		rows := []linkforge.RollupRow{
			{LinkID: l.ID, Bucket: at(0, 59), Count: 1}, // before from
			{LinkID: l.ID, Bucket: at(1, 0), Count: 2},
			{LinkID: l.ID, Bucket: at(2, 59), Count: 3},
			{LinkID: l.ID, Bucket: at(3, 0), Count: 4}, // at to: excluded
			{LinkID: other.ID, Bucket: at(1, 0), Count: 50},
		}
		upsert(t, node, rows,
			dim(l, 0, linkforge.DimDevice, "mobile", 1),
			dim(l, 1, linkforge.DimDevice, "mobile", 2), dim(l, 1, linkforge.DimCountry, "FR", 2),
			dim(l, 2, linkforge.DimDevice, "desktop", 3),
			dim(l, 3, linkforge.DimDevice, "mobile", 4),
			dim(other, 1, linkforge.DimDevice, "mobile", 50))
		upsert(t, node+"-other", []linkforge.RollupRow{{LinkID: l.ID, Bucket: at(1, 0), Count: 70}},
			dim(l, 1, linkforge.DimDevice, "mobile", 70))
		mins, dims, err := s.NodeLinkClicks(ctx, node, l.ID, dimsHour(1), dimsHour(3))
		if err != nil {
			t.Fatalf("NodeLinkClicks: %v", err)
		}
		slices.SortFunc(mins, func(a, b linkforge.RollupRow) int { return a.Bucket.Compare(b.Bucket) })
		want := []linkforge.RollupRow{rows[1], rows[2]}
		if !slices.EqualFunc(mins, want, func(a, b linkforge.RollupRow) bool {
			return a.LinkID == b.LinkID && a.Bucket.Equal(b.Bucket) && a.Count == b.Count
		}) {
			t.Errorf("NodeLinkClicks minutes = %+v, want %+v", mins, want)
		}
		for _, r := range mins {
			checkTime(t, "NodeLinkClicks bucket", r.Bucket)
		}
		slices.SortFunc(dims, func(a, b linkforge.DimRow) int {
			return cmp.Or(a.Hour.Compare(b.Hour), cmp.Compare(a.Dim, b.Dim), cmp.Compare(a.Value, b.Value))
		})
		wantDims := []linkforge.DimRow{dim(l, 1, linkforge.DimCountry, "FR", 2), dim(l, 1, linkforge.DimDevice, "mobile", 2), dim(l, 2, linkforge.DimDevice, "desktop", 3)}
		slices.SortFunc(wantDims, func(a, b linkforge.DimRow) int {
			return cmp.Or(a.Hour.Compare(b.Hour), cmp.Compare(a.Dim, b.Dim), cmp.Compare(a.Value, b.Value))
		})
		if !sameDims(dims, wantDims) {
			t.Errorf("NodeLinkClicks dimensions = %+v, want %+v", dims, wantDims)
		}
		for _, d := range dims {
			checkTime(t, "NodeLinkClicks hour", d.Hour)
		}
		if m, d, err := s.NodeLinkClicks(ctx, "node-unknown", l.ID, dimsHour(-1000), dimsHour(1000)); err != nil || len(m) != 0 || len(d) != 0 {
			t.Errorf("NodeLinkClicks of an unknown node = %+v, %+v, %v; want none", m, d, err)
		}
	})

	t.Run("bad rows write nothing", func(t *testing.T) {
		l := mustCreateLink(t, s, newLink(acme.ID, "dims-bad"))
		good := []linkforge.RollupRow{{LinkID: l.ID, Bucket: minute(0), Count: 50}}
		for _, c := range []struct {
			name string
			bad  linkforge.DimRow
		}{
			{"hour not an hour start", linkforge.DimRow{LinkID: l.ID, Hour: dimsHour(0).Add(time.Minute), Dim: linkforge.DimOS, Value: "iOS", Count: 1}},
			{"unknown dimension", linkforge.DimRow{LinkID: l.ID, Hour: dimsHour(0), Dim: linkforge.NumDimensions, Value: "x", Count: 1}},
			{"empty value", linkforge.DimRow{LinkID: l.ID, Hour: dimsHour(0), Dim: linkforge.DimOS, Count: 1}},
			{"negative count", linkforge.DimRow{LinkID: l.ID, Hour: dimsHour(0), Dim: linkforge.DimOS, Value: "iOS", Count: -1}},
		} {
			t.Run(c.name, func(t *testing.T) {
				err := s.UpsertClicks(ctx, "node-a", good, []linkforge.DimRow{dim(l, 0, linkforge.DimOS, "Android", 50), c.bad})
				wantCode(t, err, linkforge.EInvalid, "UpsertClicks")
				if got := mustTenantLink(t, s, acme.ID, l.Slug).Clicks; got != 0 {
					t.Errorf("clicks after the refused batch = %d, want 0", got)
				}
				if got := nodeDims(t, s, "node-a", l.ID); len(got) != 0 {
					t.Errorf("dimension rows after the refused batch: %+v", got)
				}
			})
		}
	})

	t.Run("a failing dimension write rolls back the minutes", func(t *testing.T) {
		p, ok := s.(DimsPoisoner)
		if !ok {
			t.Skipf("%T cannot make the database refuse a row", s)
		}
		l := mustCreateLink(t, s, newLink(acme.ID, "dims-rollback"))
		upsert(t, "node-a", []linkforge.RollupRow{{LinkID: l.ID, Bucket: minute(0), Count: 1}},
			dim(l, 0, linkforge.DimBrowser, "Firefox", 1))
		p.PoisonDims(t, "poison")
		// Firefox sorts before poison: its row is written before the
		// failing one, inside the same transaction.
		err := s.UpsertClicks(ctx, "node-a",
			[]linkforge.RollupRow{{LinkID: l.ID, Bucket: minute(0), Count: 5}, {LinkID: l.ID, Bucket: minute(1), Count: 2}},
			[]linkforge.DimRow{dim(l, 0, linkforge.DimBrowser, "Firefox", 6), dim(l, 0, linkforge.DimBrowser, "poison", 1)})
		if err == nil {
			t.Fatalf("UpsertClicks with a refused dimension row succeeded")
		}
		if got := mustTenantLink(t, s, acme.ID, l.Slug).Clicks; got != 1 {
			t.Errorf("clicks after the failed write = %d, want 1 (the minute rows rolled back)", got)
		}
		if want := []linkforge.DimRow{dim(l, 0, linkforge.DimBrowser, "Firefox", 1)}; !sameDims(nodeDims(t, s, "node-a", l.ID), want) {
			t.Errorf("dimension rows after the failed write = %+v, want %+v", nodeDims(t, s, "node-a", l.ID), want)
		}
	})

	t.Run("delete link deletes its dimensions", func(t *testing.T) {
		l := mustCreateLink(t, s, newLink(acme.ID, "dims-del"))
		keep := mustCreateLink(t, s, newLink(acme.ID, "dims-keep"))
		upsert(t, "node-a", []linkforge.RollupRow{{LinkID: l.ID, Bucket: minute(0), Count: 2}},
			dim(l, 0, linkforge.DimUTMSource, "news", 2), dim(keep, 0, linkforge.DimUTMSource, "news", 3))
		if _, err := s.DeleteLink(ctx, acme.ID, linkforge.PublicDomainID, l.Slug); err != nil {
			t.Fatalf("DeleteLink: %v", err)
		}
		if got := nodeDims(t, s, "node-a", l.ID); len(got) != 0 {
			t.Errorf("dimension rows of the deleted link: %+v", got)
		}
		if got := nodeDims(t, s, "node-a", keep.ID); len(got) != 1 || got[0].Count != 3 {
			t.Errorf("dimension rows of another link: %+v, want news 3", got)
		}
	})
}
