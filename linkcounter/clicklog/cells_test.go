package clicklog

import (
	"context"
	"runtime"
	"slices"
	"testing"

	"github.com/linkforge/linkforge"
)

// A link clicked once keeps its hour's cells in the shared form: its
// linkforge.NumDimensions (dimension, value)s as interned ids, and their one
// count and flushed count once for all (cells.go). Measured on the
// journal's state alone: the rows of 50,000 one-off links (a browser's
// dimensions), committed, flushed, then replayed from the log, each time
// within oneOffHourBytes per link of heap in use, and the same rows
// (DimRows) throughout. The old form, a 40-byte cell of each value in a
// slice grown by append, measured 1,650 to 1,700 bytes per link.
func TestOneOffHourRowsArePacked(t *testing.T) {
	links := 50_000
	if testing.Short() || raceEnabled {
		links = 5_000
	}
	dir := t.TempDir()
	// Without compaction, whose state (rebuilt from the closed segments
	// while it writes a snapshot) would be measured too.
	j := mustJournal(t, dir, WithSync(SyncWriteOnly), withoutCompaction())
	const bucket = 1_700_000_040
	dims := linkforge.ClickDims{linkforge.DimCountry: "GB", linkforge.DimReferrer: "mail.example.com",
		linkforge.DimDevice: "mobile", linkforge.DimBrowser: "Safari", linkforge.DimOS: "iOS"}
	start := heapInUse()
	for from := 0; from < links; from += 1000 {
		incs := make([]*Increment, 0, 1000)
		for l := from; l < min(from+1000, links); l++ {
			in := &Increment{LinkID: int64(l + 1), Bucket: bucket, Add: 1}
			in.CountDims(&dims)
			incs = append(incs, in)
		}
		if _, err := j.Commit(context.Background(), incs, nil, nil, 0, nil); err != nil {
			t.Fatalf("commit: %v", err)
		}
	}
	want := j.DimRows(int64(links / 2))
	if len(want) != int(publicDims) || want[0].N != 1 || want[0].Flushed != 0 {
		t.Fatalf("rows of a one-off link: %+v, want %d of count 1, none flushed", want, publicDims)
	}
	committed := perLink(start, links)

	// Flushed as the counter flushes: a thousand links at a time.
	for from := 0; from < links; from += 1000 {
		ids := make([]int64, 0, 1000)
		for l := from; l < min(from+1000, links); l++ {
			ids = append(ids, int64(l+1))
		}
		rows, drows, err := j.Unflushed(context.Background(), ids)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := j.Commit(context.Background(), nil, rows, drows, 0, nil); err != nil {
			t.Fatalf("commit the flush marks: %v", err)
		}
	}
	for i := range want {
		want[i].Flushed = 1
	}
	if got := j.DimRows(int64(links / 2)); !slices.Equal(got, want) {
		t.Fatalf("rows after the flush: %+v, want %+v", got, want)
	}
	flushed := perLink(start, links)
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}
	j = nil
	start = heapInUse()
	j2 := mustJournal(t, dir, WithSync(SyncWriteOnly), withoutCompaction())
	if got := j2.DimRows(int64(links / 2)); !slices.Equal(got, want) {
		t.Fatalf("rows after replay: %+v, want %+v", got, want)
	}
	replayed := perLink(start, links)
	t.Logf("%d one-off links: journal heap in use per link %.0f bytes committed, %.0f flushed, %.0f replayed",
		links, committed, flushed, replayed)
	limit := float64(oneOffHourBytes)
	if raceEnabled {
		limit *= 4
	}
	for _, v := range []float64{committed, flushed, replayed} {
		if v > limit {
			t.Errorf("journal heap per one-off link %.0f bytes (committed %.0f, flushed %.0f, replayed %.0f), want at most %.0f",
				v, committed, flushed, replayed, limit)
		}
	}
}

// oneOffHourBytes bounds a one-off link's rows in the journal: its minute,
// its hour's cells and their entries in the indexes (measured 300 to 360
// before the key lists were interned, 175 to 192 since).
const oneOffHourBytes = 250

// Hours in the shared form with the same values hold one interned key
// list; an hour whose cells come to differ takes a list of its own, and
// one back in the shared form is interned again. Once every hour is gone,
// so is every list and value: the tables follow the hours held.
func TestSharedHoursInternTheirKeys(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	j := mustJournal(t, dir, WithSync(SyncWriteOnly), withoutCompaction())
	const bucket = 1_700_000_040
	gb := linkforge.ClickDims{linkforge.DimCountry: "GB", linkforge.DimBrowser: "Safari"}
	fr := linkforge.ClickDims{linkforge.DimCountry: "FR", linkforge.DimBrowser: "Safari"}
	click := func(link int64, dims *linkforge.ClickDims) {
		t.Helper()
		in := &Increment{LinkID: link, Bucket: bucket, Add: 1}
		in.CountDims(dims)
		if _, err := j.Commit(ctx, []*Increment{in}, nil, nil, 0, nil); err != nil {
			t.Fatal(err)
		}
	}
	keysOf := func(link int64) *hourRows { return j.st.hourOf(link, hourStart(bucket), false) }
	sets := func() int { return j.st.values.sets.len() }
	for link := int64(1); link <= 3; link++ {
		click(link, &gb)
	}
	h1, h3 := keysOf(1), keysOf(3)
	if h1.wide != nil || &h1.keys()[0] != &h3.keys()[0] || sets() != 1 {
		t.Fatalf("three links clicked with the same values: shared %v, one list %v, %d lists interned; want one list shared",
			h1.wide == nil, &h1.keys()[0] == &h3.keys()[0], sets())
	}

	click(3, &fr) // link 3's cells now differ: GB 1, FR 1, Safari 2
	if h3 = keysOf(3); h3.wide == nil || &h1.keys()[0] == &h3.keys()[0] || sets() != 1 {
		t.Fatalf("after a second click with another country: wide %v, own list %v, %d lists; want wide, its own, 1",
			h3.wide != nil, &h1.keys()[0] != &h3.keys()[0], sets())
	}
	before := slices.Clone(h1.keys())
	click(3, &gb) // still differing: the shared list of links 1 and 2 is untouched
	if h1 := keysOf(1); !slices.Equal(h1.keys(), before) || &h1.keys()[0] != &keysOf(2).keys()[0] || sets() != 1 {
		t.Fatalf("link 1's keys %v (want %v, shared with link 2), %d lists interned (want 1)", h1.keys(), before, sets())
	}

	// Replayed, the shared hours share one list again.
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}
	j = mustJournal(t, dir, WithSync(SyncWriteOnly), withoutCompaction())
	if h1, h2 := keysOf(1), keysOf(2); h1.wide != nil || &h1.keys()[0] != &h2.keys()[0] || len(h1.keys()) != len(before) || sets() != 1 {
		t.Fatalf("replayed: shared %v, one list %v, %d lists interned; want one list shared", h1.wide == nil, &h1.keys()[0] == &h2.keys()[0], sets())
	}

	// Each link flushed and dropped leaves nothing behind.
	for _, link := range []int64{1, 2, 3} {
		rows, drows, err := j.Unflushed(ctx, []int64{link})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := j.Commit(ctx, nil, rows, drows, 0, []int64{link}); err != nil {
			t.Fatal(err)
		}
	}
	if sets() != 0 || len(j.st.values.ids) != 0 || j.LinksHeld() != 0 {
		t.Fatalf("after every link's drop: %d key lists, %d values, %d links held; want none",
			sets(), len(j.st.values.ids), j.LinksHeld())
	}
}

func heapInUse() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapInuse
}

func perLink(start uint64, links int) float64 {
	return float64(int64(heapInUse())-int64(start)) / float64(links) //nolint:gosec // G115: heap sizes are far below 2^63
}

// An hour's shared counts are int32s; a count past that takes the wide
// form and stays exact, through a flush mark and a replay.
func TestCellCountsPastInt32(t *testing.T) {
	dir := t.TempDir()
	j := mustJournal(t, dir, WithSync(SyncWriteOnly))
	const bucket, n = 1_700_000_040, int64(3_000_000_000)
	in := &Increment{LinkID: 1, Bucket: bucket, Add: n,
		Dims: []DimCount{{Dim: linkforge.DimCountry, Value: "GB", N: n}, {Dim: linkforge.DimDevice, Value: "mobile", N: n}}}
	if _, err := j.Commit(context.Background(), []*Increment{in}, nil, nil, 0, nil); err != nil {
		t.Fatal(err)
	}
	hour := hourStart(bucket)
	mark := []DimRow{{LinkID: 1, Hour: hour, Dim: linkforge.DimCountry, Value: "GB", N: n},
		{LinkID: 1, Hour: hour, Dim: linkforge.DimDevice, Value: "mobile", N: n}}
	if _, err := j.Commit(context.Background(), nil, []Row{{LinkID: 1, Bucket: bucket, N: n}}, mark, 0, nil); err != nil {
		t.Fatal(err)
	}
	in = &Increment{LinkID: 1, Bucket: bucket, Add: 1,
		Dims: []DimCount{{Dim: linkforge.DimCountry, Value: "GB", N: 1}, {Dim: linkforge.DimDevice, Value: "mobile", N: 1}}}
	if _, err := j.Commit(context.Background(), []*Increment{in}, nil, nil, 0, nil); err != nil {
		t.Fatal(err)
	}
	want := []DimRow{{LinkID: 1, Hour: hour, Dim: linkforge.DimCountry, Value: "GB", N: n + 1, Flushed: n},
		{LinkID: 1, Hour: hour, Dim: linkforge.DimDevice, Value: "mobile", N: n + 1, Flushed: n}}
	if got := j.DimRows(1); !slices.Equal(got, want) {
		t.Fatalf("rows = %+v, want %+v", got, want)
	}
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}
	if got := mustJournal(t, dir, WithSync(SyncWriteOnly)).DimRows(1); !slices.Equal(got, want) {
		t.Fatalf("rows after replay = %+v, want %+v", got, want)
	}
}

// findCellAt's guess only saves a lookup: for every guess, right, wrong or
// past the end, and after cells went (a removal shifts the ones after it),
// it answers what findCell answers.
func TestFindCellAtAgreesWithFindCell(t *testing.T) {
	s := newLogState()
	h := s.hourOf(1, 0, true)
	vals := []dimValue{{cellOf(linkforge.DimCountry, false), "GB"}, {cellOf(linkforge.DimDevice, false), "mobile"}, {cellOf(linkforge.DimCountry, false), "DE"},
		{cellOf(linkforge.DimReferrer, true), "t.co"}, {cellOf(linkforge.DimReferrer, true), "GB"}}
	group := make([]recDim, len(vals))
	for i, v := range vals {
		group[i] = recDim{link: 1, dim: v.dim, value: v.value, v: int64(i + 1)} // counts differ: the wide form
	}
	s.addDims(h, group)
	check := func(when string) {
		t.Helper()
		probes := append(slices.Clone(vals), dimValue{cellOf(linkforge.DimOS, false), "iOS"}, dimValue{cellOf(linkforge.DimDevice, false), "GB"})
		for _, p := range probes {
			want := s.findCell(h, p.dim, p.value)
			for k := range h.ncells() + 2 {
				if got := s.findCellAt(h, k, p.dim, p.value); got != want {
					t.Fatalf("%s: findCellAt(%d, %v) = %d, findCell = %d", when, k, p, got, want)
				}
			}
		}
	}
	check("five cells")
	if got := s.findCellAt(h, 3, cellOf(linkforge.DimReferrer, true), "t.co"); got != 3 {
		t.Fatalf("the guessed cell: %d, want 3", got)
	}
	// Take DE's count back to nothing: its cell goes, the later ones move up.
	s.addDims(h, []recDim{{link: 1, dim: cellOf(linkforge.DimCountry, false), value: "DE", v: -3}})
	if h.ncells() != 4 {
		t.Fatalf("cells after the removal: %d, want 4", h.ncells())
	}
	check("after a removal")
	if got := s.findCellAt(h, 3, cellOf(linkforge.DimReferrer, true), "t.co"); got != 2 {
		t.Fatalf("t.co after the removal: %d, want 2", got)
	}
}

// Lists of one hash are chained; unlinking one keeps the others, head or
// not, and the last one takes the hash out of the map.
func TestKeySetsUnlinkKeepsTheChain(t *testing.T) {
	e1, e2, e3 := &keySet{keys: []uint32{1}}, &keySet{keys: []uint32{2}}, &keySet{keys: []uint32{3}}
	e1.next, e2.next = e2, e3
	ks := keySets{m: map[uint64]*keySet{7: e1}}
	chain := func() (out []uint32) {
		for e := ks.m[7]; e != nil; e = e.next {
			out = append(out, e.keys[0])
		}
		return out
	}
	for _, step := range []struct {
		e    *keySet
		want []uint32
	}{{e2, []uint32{1, 3}}, {e1, []uint32{3}}, {e3, nil}} {
		ks.unlink(7, step.e)
		if got := chain(); !slices.Equal(got, step.want) {
			t.Fatalf("after unlinking %d: chain %v, want %v", step.e.keys[0], got, step.want)
		}
	}
	if _, ok := ks.m[7]; ok || ks.len() != 0 {
		t.Fatalf("the emptied chain's hash is still in the map (%d lists)", ks.len())
	}
}
