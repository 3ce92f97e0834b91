package clicklog

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/linkforge/linkforge"
)

// dropState reports how many rows link holds, whether its rows of hour
// were dropped from memory (and not restarted), and whether the hour waits
// for its seed.
func dropState(j *Journal, link, hour int64) (rows int, isDropped, toSeed bool) {
	j.mu.RLock()
	defer j.mu.RUnlock()
	for h := range j.st.hoursOf(link) {
		rows += len(h.mins) + h.ncells()
		if h.hour == hour && h.seeding() {
			toSeed = true
		}
	}
	for _, l := range j.st.dropped[hour] {
		if l == link {
			isDropped = true
		}
	}
	return rows, isDropped, toSeed
}

// The drops, the restarted hours' seed marks and the dropped hours survive
// a snapshot (compaction) and a replay: the reopened journal's state is the
// same, marks included, and a purge past the hour forgets the dropped hour.
func TestDropStateSurvivesSnapshot(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	j := mustJournal(t, dir, withoutCompaction())
	const hour = 7200
	inc := func(link, bucket int64) {
		t.Helper()
		if _, err := j.Commit(ctx, []*Increment{{LinkID: link, Bucket: bucket, Add: 1,
			Dims: []DimCount{{Dim: linkforge.DimCountry, Value: "NL", N: 1}}}}, nil, nil, 0, nil); err != nil {
			t.Fatal(err)
		}
	}
	for l := int64(1); l <= 3; l++ {
		inc(l, hour+60)
	}
	// Links 1 and 2 flushed, 3 not: a drop of all three drops 1 and 2.
	marks := []Row{{LinkID: 1, Bucket: hour + 60, N: 1}, {LinkID: 2, Bucket: hour + 60, N: 1}}
	dm := []DimRow{{LinkID: 1, Hour: hour, Dim: linkforge.DimCountry, Value: "NL", N: 1}, {LinkID: 2, Hour: hour, Dim: linkforge.DimCountry, Value: "NL", N: 1}}
	if _, err := j.Commit(ctx, nil, marks, dm, 0, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := j.Commit(ctx, nil, nil, nil, 0, []int64{1, 2, 3}); err != nil {
		t.Fatal(err)
	}
	inc(1, hour+120) // restarts link 1's hour: to be seeded
	for l, want := range map[int64][3]any{1: {2, true, true}, 2: {0, true, false}, 3: {2, false, false}} {
		rows, isDropped, toSeed := dropState(j, l, hour)
		if got := [3]any{rows, isDropped, toSeed}; got != want {
			t.Errorf("link %d: rows, dropped, to seed = %v, want %v", l, got, want)
		}
	}
	before := dumpState(j)
	j.mu.RLock()
	err := writeSnapshot(j.dir, 99, j.st)
	j.mu.RUnlock()
	if err != nil {
		t.Fatal(err)
	}
	abandon(j)
	j2 := mustJournal(t, dir)
	if after := dumpState(j2); after != before {
		t.Errorf("state after the snapshot:\n%s\nwant:\n%s", after, before)
	}
	if err := j2.SeedHours(ctx, []LinkHour{{1, hour}}, nil, nil); err != nil {
		t.Fatal(err)
	}
	if _, _, toSeed := dropState(j2, 1, hour); toSeed {
		t.Errorf("link 1's hour still to be seeded after its seed")
	}
	if _, err := j2.Commit(ctx, nil, nil, nil, hour+3600+600, nil); err != nil {
		t.Fatal(err)
	}
	j2.mu.RLock()
	left := len(j2.st.dropped)
	j2.mu.RUnlock()
	if left != 0 {
		t.Errorf("%d dropped hours kept after a purge past them, want 0", left)
	}
}

func TestMergeSorted(t *testing.T) {
	for _, c := range []struct {
		list []int64
		from int
		want []int64
	}{
		{[]int64{3, 1, 2}, 0, []int64{1, 2, 3}},
		{[]int64{1, 4, 9, 2, 4, 10, 0}, 3, []int64{0, 1, 2, 4, 9, 10}},
		{[]int64{1, 2, 5, 3}, 4, nil},
		{[]int64{1, 2, 7, 6}, 2, []int64{1, 2, 6, 7}},
		{[]int64{5, 5, 5}, 1, []int64{5}},
	} {
		if c.from == len(c.list) {
			c.want = slices.Clone(c.list) // nothing appended: left as it is
		}
		if got := mergeSorted(slices.Clone(c.list), c.from); !slices.Equal(got, c.want) {
			t.Errorf("mergeSorted(%v, %d) = %v, want %v", c.list, c.from, got, c.want)
		}
	}
}

// The decoder never panics on a payload, and what it decodes re-encodes to
// a record that decodes the same (drops and hour marks included).
func FuzzDecodeRecord(f *testing.F) {
	var e encoder
	for _, r := range []*logRecord{
		{meta: true, nodeID: "edge-1", seedPending: true},
		{incs: []recRow{{link: 1, at: 3600, v: 2}}, dims: []recDim{{link: 1, hour: 3600, dim: cellOf(linkforge.DimCountry, false), value: "NL", v: 2}},
			drops: []int64{1, 5}, hourMarks: []recRow{{link: 1, at: 3600, v: hourToSeed}, {link: 2, at: 7200, v: hourDropped}}},
		{dropFlushed: true, purge: 120},
	} {
		f.Add(slices.Clone(e.frame(r)[frameHeader:]))
	}
	f.Fuzz(func(t *testing.T, payload []byte) {
		var d decoder
		var r logRecord
		if err := d.decode(payload, &r); err != nil {
			return
		}
		again := slices.Clone(e.frame(&r)[frameHeader:])
		var r2 logRecord
		if err := d.decode(again, &r2); err != nil {
			t.Fatalf("re-encoded record does not decode: %v", err)
		}
		if a, b := fmt.Sprintf("%+v", r), fmt.Sprintf("%+v", r2); a != b {
			t.Fatalf("decode, encode, decode: %s, want %s", b, a)
		}
	})
}
