package clicklog

import (
	"context"
	"crypto/sha256"
	"fmt"
	"maps"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/linkforge/linkforge"
)

// compactionLinks is how many one-off links TestCompactionHoldsAPartOfTheState
// compacts: enough that the journal's state is well above the compactor's
// fixed buffers (fewer under -race, which checks the parts, not the heap).
var compactionLinks int64 = 40_000

// The compactor rebuilds the state from the files to write a snapshot. A
// burst of one-off links makes that state as large as the live one, and
// holding both at once doubled the journal's share of the process's peak
// heap (docs/performance.md). Rebuilt a part of the links at a
// time, it holds at most a part of it beside the live state, and the
// snapshot still replays to exactly the live state.
func TestCompactionHoldsAPartOfTheState(t *testing.T) {
	if raceEnabled {
		compactionLinks = 8_000
	}
	dir := t.TempDir()
	j := mustJournal(t, dir, withSegmentSize(256<<10), WithSync(SyncWriteOnly), withoutCompaction())
	ctx := context.Background()
	runtime.GC()
	empty := heapLive()
	const bucket = 1_000_000 * 60
	cd := linkforge.ClickDims{linkforge.DimCountry: "NL", linkforge.DimBrowser: "Chrome", linkforge.DimOS: "Windows"}
	for first := int64(1); first <= compactionLinks; first += 500 {
		incs := make([]*Increment, 0, 500)
		for l := first; l < first+500; l++ {
			in := &Increment{LinkID: l, Bucket: bucket, Add: 1, Visits: []uint64{uint64(l)}}
			in.CountDims(&cd)
			incs = append(incs, in)
		}
		if _, err := j.Commit(ctx, incs, nil, nil, 0, nil); err != nil {
			t.Fatal(err)
		}
	}
	// A part of them flushed and a part of those dropped: the snapshot
	// holds flushed marks, dropped hours and visit marks too.
	ids := make([]int64, 0, int(compactionLinks/4))
	for l := int64(1); l <= compactionLinks/4; l++ {
		ids = append(ids, l)
	}
	rows, dims, err := j.Unflushed(ctx, ids)
	if err != nil {
		t.Fatal(err)
	}
	marks := make([]VisitMark, 0, len(ids))
	for _, l := range ids {
		marks = append(marks, VisitMark{LinkID: l, Seq: 1})
	}
	if _, err := j.CommitVisits(ctx, nil, rows, dims, marks, 0, ids[:len(ids)/2]); err != nil {
		t.Fatal(err)
	}
	want := sha256.Sum256([]byte(dumpState(j) + dumpVisits(j))) // a hash: the dump is larger than the state
	rows, dims, marks, ids = nil, nil, nil, nil                 //nolint:ineffassign,wastedassign // out of the heap measured below

	runtime.GC()
	base := heapLive()
	state := base - empty // the journal's state, and its record buffers
	var held, parts int
	var maxExtra uint64
	j.compactHook = func(links int) {
		parts++
		held = max(held, links)
		runtime.GC()
		extra := heapLive() - base
		maxExtra = max(maxExtra, extra)
		if !raceEnabled && extra > state/3 {
			t.Errorf("compaction holds %d bytes beside the journal's state of %d bytes (%d links of %d at once); want at most a third of it",
				extra, state, links, compactionLinks)
		}
	}
	j.compactPartLinks = int(compactionLinks / 8)
	if err := j.compactOnce(); err != nil {
		t.Fatal(err)
	}
	t.Logf("%d links in %d parts, at most %d at once: %d bytes held beside the journal's state of %d",
		compactionLinks, parts, held, maxExtra, state)
	if int64(held) > compactionLinks/4 {
		t.Errorf("the compactor held %d links at once, of %d; want at most %d", held, compactionLinks, compactionLinks/4)
	}
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}
	j2 := mustJournal(t, dir)
	if got := sha256.Sum256([]byte(dumpState(j2) + dumpVisits(j2))); got != want {
		t.Errorf("state after reopen from the snapshot differs from the state compacted")
	}
}

// heapLive is the heap's live bytes as of the last collection.
func heapLive() uint64 {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// dumpVisits lists the journal's unmarked visits by link.
func dumpVisits(j *Journal) string {
	j.mu.RLock()
	defer j.mu.RUnlock()
	var b strings.Builder
	for _, l := range slices.Sorted(maps.Keys(j.st.links)) {
		v := j.st.links[l].visits
		if v == nil {
			continue
		}
		fmt.Fprintf(&b, "visits %d from %d %v\n", l, v.flushed, v.list)
	}
	return b.String()
}
