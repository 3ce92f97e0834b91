package linkcounter

import "github.com/linkforge/linkforge"

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
	for _, h := range j.st.links[linkID] {
		for _, m := range h.mins {
			n += m.n
		}
	}
	return n
}

// HeldBy returns, as Held does, the clicks of linkID the journal holds in
// dimension d, by value.
func (j *Journal) HeldBy(linkID int64, d linkforge.Dimension) map[string]int64 {
	j.mu.RLock()
	defer j.mu.RUnlock()
	out := map[string]int64{}
	for _, h := range j.st.links[linkID] {
		for _, c := range h.dims {
			if c.dim == d {
				out[c.value] += c.n
			}
		}
	}
	return out
}
