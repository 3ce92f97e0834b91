package clicklog

import (
	"cmp"
	"slices"
	"strings"

	"github.com/linkforge/linkforge"
)

// Held returns the clicks of linkID that the journal holds: acknowledged
// clicks, durable in the click log, over the minutes it still keeps. Rows
// already flushed may be dropped (purged, or let go with an evicted actor),
// so this is the node's unflushed clicks plus whatever flushed ones remain:
// for tests and diagnostics that must see what a redirect made durable, not
// a total to report.
func (j *Journal) Held(linkID int64) int64 {
	j.mu.RLock()
	defer j.mu.RUnlock()
	var n int64
	for h := range j.st.hoursOf(linkID) {
		for _, m := range h.mins {
			n += m.n
		}
	}
	return n
}

// HeldBy returns, as Held does, the clicks of linkID the journal holds in
// dimension d (both traffics), by value.
func (j *Journal) HeldBy(linkID int64, d linkforge.Dimension) map[string]int64 {
	j.mu.RLock()
	defer j.mu.RUnlock()
	out := map[string]int64{}
	for h := range j.st.hoursOf(linkID) {
		for i := range h.ncells() {
			if c := j.st.cell(h, i); c.dim.dim() == d {
				out[c.value] += c.n
			}
		}
	}
	return out
}

// Rows returns the minute rows of linkID the journal holds, by bucket: for
// tests and diagnostics, as Held.
func (j *Journal) Rows(linkID int64) []Row {
	j.mu.RLock()
	defer j.mu.RUnlock()
	var out []Row
	for h := range j.st.hoursOf(linkID) {
		for _, m := range h.mins {
			out = append(out, Row{LinkID: linkID, Bucket: m.bucket, N: m.n, Flushed: m.flushed, Automated: m.auto})
		}
	}
	return out
}

// DimRows returns the dimension rows of linkID the journal holds, by hour,
// dimension and value: for tests and diagnostics, as Held.
func (j *Journal) DimRows(linkID int64) []DimRow {
	j.mu.RLock()
	defer j.mu.RUnlock()
	var out []DimRow
	for h := range j.st.hoursOf(linkID) {
		for i := range h.ncells() {
			d := j.st.cell(h, i)
			out = append(out, DimRow{LinkID: linkID, Hour: h.hour, Dim: d.dim.dim(), Automated: d.dim.automated(), Value: d.value, N: d.n, Flushed: d.flushed})
		}
	}
	slices.SortFunc(out, func(a, b DimRow) int {
		return cmp.Or(cmp.Compare(a.Hour, b.Hour), cmp.Compare(a.Dim, b.Dim), cmpBool(a.Automated, b.Automated), strings.Compare(a.Value, b.Value))
	})
	return out
}

// Dropped reports whether linkID's rows of hour were dropped from memory
// with its evicted actor (a later click in the hour restarts rows to be
// seeded, see ToSeed): for tests and diagnostics.
func (j *Journal) Dropped(linkID, hour int64) bool {
	j.mu.RLock()
	defer j.mu.RUnlock()
	_, found := slices.BinarySearch(j.st.dropped[hour], linkID)
	return found
}

// LinksHeld returns the number of links whose rows the journal holds in
// memory: for tests and diagnostics of its footprint.
func (j *Journal) LinksHeld() int {
	j.mu.RLock()
	defer j.mu.RUnlock()
	return j.st.held
}
