package clicklog

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/internal/testlog"
)

// abandon drops j as a killed process would: the segment is closed without
// a sync, the lock released, nothing else written.
func abandon(j *Journal) {
	j.wmu.Lock()
	j.closed = true
	j.closeFile() //nolint:errcheck // a fault layer's Close is its file's; the journal is abandoned
	close(j.compact)
	close(j.spareWant)
	close(j.spareStop)
	if j.bgStop != nil {
		close(j.bgStop)
	}
	j.wmu.Unlock()
	<-j.compactDone
	<-j.spareDone
	if j.bgDone != nil {
		<-j.bgDone
	}
	unlockFile(j.lock) //nolint:errcheck // the lock of a journal the test abandons; its tests check the lock
}

// dumpState renders the journal's whole state, deterministically.
func dumpState(j *Journal) string {
	j.mu.RLock()
	defer j.mu.RUnlock()
	var b strings.Builder
	fmt.Fprintf(&b, "node=%q seed=%v purged=%d\n", j.st.nodeID, j.st.seedPending, j.st.purgedBefore)
	// The entries' bookkeeping: no entry holds nothing, and held counts
	// those with hours.
	held := 0
	for l, e := range j.st.links {
		if e.hours != nil {
			held++
		} else if e.visits == nil {
			fmt.Fprintf(&b, "BAD: link %d's entry holds nothing\n", l)
		}
	}
	if held != j.st.held {
		fmt.Fprintf(&b, "BAD: held = %d, %d links hold hours\n", j.st.held, held)
	}
	links := slices.Sorted(maps.Keys(j.st.links))
	for _, l := range links {
		for h := range j.st.links[l].all() {
			for _, m := range h.mins {
				fmt.Fprintf(&b, "min %d %d n=%d f=%d\n", l, m.bucket, m.n, m.flushed)
			}
			dims := j.st.cellsOf(h)
			slices.SortFunc(dims, func(a, b dimCell) int {
				if a.dim != b.dim {
					return int(a.dim) - int(b.dim)
				}
				return strings.Compare(a.value, b.value)
			})
			for _, d := range dims {
				fmt.Fprintf(&b, "dim %d %d %d %q n=%d f=%d\n", l, h.hour, d.dim, d.value, d.n, d.flushed)
			}
			if h.seeding() {
				fmt.Fprintf(&b, "to seed %d %d\n", l, h.hour)
			}
		}
	}
	for _, hour := range slices.Sorted(maps.Keys(j.st.dropped)) {
		fmt.Fprintf(&b, "dropped %d %v\n", hour, j.st.dropped[hour])
	}
	return b.String()
}

// totals sums the journal's minute counts, and each dimension's counts.
// totals returns the clicks j holds and their sum in each public dimension
// (both traffics); a minute's automated part must be the automated
// traffic cells' sum, which byDim's traffic entry checks: it is set to -1
// when they differ.
func totals(j *Journal) (clicks int64, byDim [publicDims]int64) {
	j.mu.RLock()
	defer j.mu.RUnlock()
	for _, e := range j.st.links {
		for h := range e.all() {
			var auto, autoCells int64
			for _, m := range h.mins {
				clicks += m.n
				auto += m.auto
			}
			for _, d := range j.st.cellsOf(h) {
				byDim[d.dim.dim()] += d.n
				if d.dim == cellOf(linkforge.DimTraffic, true) {
					autoCells += d.n
				}
			}
			if auto != autoCells {
				byDim[linkforge.DimTraffic] = -1 - clicks
			}
		}
	}
	return clicks, byDim
}

// commitClicks commits clicks of links (one each, with the given country)
// at bucket and returns the number committed.
func commitClicks(t testing.TB, j *Journal, bucket int64, links []int64, country string) int64 {
	t.Helper()
	incs := make([]*Increment, 0, len(links))
	by := make(map[int64]*Increment)
	cd := linkforge.ClickDims{linkforge.DimCountry: country}
	for _, l := range links {
		in := by[l]
		if in == nil {
			in = &Increment{LinkID: l, Bucket: bucket}
			by[l] = in
			incs = append(incs, in)
		}
		in.Add++
		in.CountDims(&cd)
	}
	if _, err := j.Commit(context.Background(), incs, nil, nil, 0, nil); err != nil {
		t.Fatalf("commit: %v", err)
	}
	return int64(len(links))
}

// segmentPath returns the open segment's file name.
func segmentPath(j *Journal) string {
	j.wmu.Lock()
	defer j.wmu.Unlock()
	return filepath.Join(j.dir, segmentName(j.seq))
}

func fileSize(t testing.TB, path string) int64 {
	t.Helper()
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return st.Size()
}

// copyDir copies the files of a journal's data dir (the click log
// included) into a fresh directory and returns it.
func copyDir(t testing.TB, src string) string {
	t.Helper()
	dst := t.TempDir()
	err := filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o700)
		}
		if strings.HasSuffix(p, ".lock") {
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), data, 0o600)
	})
	if err != nil {
		t.Fatal(err)
	}
	return dst
}

// writeTestLog writes a journal's log in dir whose last record holds every
// kind of entry, and returns the state before that record, the state after
// it, the segment and the record's offsets in it.
func writeTestLog(t *testing.T, dir string) (before, after, seg string, start, end int64) {
	ctx := context.Background()
	j, err := Open(ctx, dir, WithSync(SyncWriteOnly), withoutCompaction())
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := j.NodeID(ctx, "edge-1"); err != nil {
		t.Fatal(err)
	}
	commitClicks(t, j, 3600, []int64{1, 2, 2, 3}, "NL")
	commitClicks(t, j, 3660, []int64{2, 4}, "DE")
	if _, err := j.Commit(ctx, nil, []Row{{LinkID: 1, Bucket: 3600, N: 1}},
		[]DimRow{{LinkID: 1, Hour: 3600, Dim: linkforge.DimCountry, Value: "NL", N: 1}}, 0, nil); err != nil {
		t.Fatal(err)
	}
	before = dumpState(j)
	seg = segmentPath(j)
	start = logicalSize(j)
	// The last record: increments with dimensions (new and known values),
	// marks of both kinds, drops (link 1 flushed: dropped; link 3 not:
	// kept) and a purge horizon.
	incs := []*Increment{{LinkID: 2, Bucket: 3660, Add: 3}, {LinkID: 5, Bucket: 3720, Add: 1}}
	for range 3 {
		incs[0].CountDims(&linkforge.ClickDims{linkforge.DimCountry: "DE"})
	}
	incs[1].CountDims(&linkforge.ClickDims{linkforge.DimCountry: "US"})
	dimMarks := []DimRow{{LinkID: 2, Hour: 3600, Dim: linkforge.DimCountry, Value: "NL", N: 2}}
	dimMarks = append(dimMarks, journalDims(t, j, 1)...) // link 1 fully flushed by this record
	if _, err := j.Commit(ctx, incs, []Row{{LinkID: 2, Bucket: 3600, N: 2}},
		dimMarks, 60, []int64{1, 3}); err != nil {
		t.Fatal(err)
	}
	after = dumpState(j)
	end = logicalSize(j)
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}
	if before == after || end <= start || !strings.Contains(after, "dropped 3600 [1]\n") {
		t.Fatalf("the last record changed nothing, or did not drop link 1:\n%s", after)
	}
	return before, after, seg, start, end
}

// Fault injection on the last record of the log: cut at every byte offset
// of it, and separately one byte flipped at every offset. Each reopen
// recovers every earlier record exactly, invents nothing, and logs the cut
// with its segment, offset and size.
func TestClickLogTornTail(t *testing.T) {
	dir := t.TempDir()
	before, after, seg, start, end := writeTestLog(t, dir)
	rel, _ := filepath.Rel(dir, seg)

	reopen := reopenTail
	checkWarning := func(t *testing.T, recs []map[string]any, d string, bytes int64) {
		t.Helper()
		if len(recs) != 1 {
			t.Fatalf("%d truncation warnings, want 1", len(recs))
		}
		r := recs[0]
		if r["level"] != "WARN" || r["msg"] != "click log tail truncated" || r["segment"] != filepath.Join(d, rel) ||
			r["offset"] != float64(start) || r["bytes"] != float64(bytes) {
			t.Fatalf("warning %v, want segment %s offset %d bytes %d", r, filepath.Join(d, rel), start, bytes)
		}
	}

	// The whole log reopens whole.
	if recs := reopen(t, copyDir(t, dir), after); len(recs) != 0 {
		t.Fatalf("intact log: warnings %v", recs)
	}
	data, err := os.ReadFile(seg)
	if err != nil {
		t.Fatal(err)
	}
	for off := start; off < end; off++ {
		d := copyDir(t, dir)
		if err := os.Truncate(filepath.Join(d, rel), off); err != nil {
			t.Fatal(err)
		}
		recs := reopen(t, d, before)
		if off == start {
			if len(recs) != 0 {
				t.Fatalf("cut at the record's start: warnings %v, want none", recs)
			}
			continue
		}
		checkWarning(t, recs, d, off-start)
		if got := fileSize(t, filepath.Join(d, rel)); got != start {
			t.Fatalf("cut at %d: segment is %d bytes after reopen, want %d", off, got, start)
		}
	}
	for off := start; off < end; off++ {
		d := copyDir(t, dir)
		bad := slices.Clone(data)
		bad[off] ^= 0x5a
		if err := os.WriteFile(filepath.Join(d, rel), bad, 0o600); err != nil {
			t.Fatal(err)
		}
		checkWarning(t, reopen(t, d, before), d, end-start)
	}
}

// A bad record in a segment that is not the newest, or in the snapshot, is
// not a torn write: Open refuses to start and says what to do.
func TestClickLogCorruptionRefusesStart(t *testing.T) {
	dir := t.TempDir()
	j, err := Open(context.Background(), dir, withSegmentSize(256), withoutCompaction(), WithSync(SyncWriteOnly))
	if err != nil {
		t.Fatal(err)
	}
	first := segmentPath(j)
	for i := range int64(20) {
		commitClicks(t, j, 60*i, []int64{i, i + 1}, "NL")
	}
	if segmentPath(j) == first {
		t.Fatal("no segment was closed")
	}
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(first)
	if err != nil {
		t.Fatal(err)
	}
	data[len(data)/2] ^= 0xff
	if err := os.WriteFile(first, data, 0o600); err != nil {
		t.Fatal(err)
	}
	_, err = Open(context.Background(), dir)
	if !errors.Is(err, errCorrupt) || !strings.Contains(err.Error(), first) || !strings.Contains(err.Error(), "restore the data dir from a backup") {
		t.Fatalf("open with a corrupt older segment: err = %v, want errCorrupt naming %s and the remedy", err, first)
	}
}

// Compaction folds closed segments into a snapshot: under a steady load
// whose clicks are flushed and purged, the log's files stay few and small,
// and a reopen rebuilds exactly the same state.
func TestClickLogCompaction(t *testing.T) {
	dir := t.TempDir()
	j, err := Open(context.Background(), dir, withSegmentSize(4096), WithSync(SyncWriteOnly))
	if err != nil {
		t.Fatal(err)
	}
	j.compactPartLinks = 7 // the state of 50 links rebuilt in parts, purges and all
	ctx := context.Background()
	var written int64
	for minute := int64(0); minute < 300; minute++ {
		bucket := 1_000_000*60 + minute*60
		for range 10 {
			commitClicks(t, j, bucket, []int64{1, 2, 3, minute % 50}, "NL")
		}
		// Flush everything unflushed, then purge behind a 10-minute horizon.
		rows, dims, err := j.Unflushed(ctx, []int64{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24,
			25, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35, 36, 37, 38, 39, 40, 41, 42, 43, 44, 45, 46, 47, 48, 49})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := j.Commit(ctx, nil, rows, dims, bucket-600, nil); err != nil {
			t.Fatal(err)
		}
		written = max(written, fileSize(t, segmentPath(j)))
	}
	if err := j.compactOnce(); err != nil {
		t.Fatal(err)
	}
	want := dumpState(j)
	segs, snaps, err := logFiles(j.dir)
	if err != nil {
		t.Fatal(err)
	}
	var bytes int64
	ents, _ := os.ReadDir(j.dir)
	for _, e := range ents {
		bytes += fileSize(t, filepath.Join(j.dir, e.Name()))
	}
	t.Logf("after 12,000 commits: %d segments, %d snapshots, %d bytes on disk", len(segs), len(snaps), bytes)
	// 24 KiB: each retained (link, hour) holds 20 dimensions' cells since
	// traffic and its shadows, 6 before: 17 KiB measured, 11 KiB before.
	if len(segs) != 1 || len(snaps) != 1 || bytes > 24<<10 {
		t.Errorf("after compaction: segments %v, snapshots %v, %d bytes; want one of each, under 24 KiB", segs, snaps, bytes)
	}
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}
	j2 := mustJournal(t, dir)
	if got := dumpState(j2); got != want {
		t.Errorf("state after reopen from the snapshot:\n%s\nwant:\n%s", got, want)
	}
}

// Power-loss simulation, on the log alone: commits go through a file layer
// that, at the cut, drops what was not synced (keeping some of it, torn).
// At SyncEveryCommit every committed click survives; at SyncWriteOnly what
// survives is the commits up to some point, never fewer than those in
// segments synced before the cut (closed segments are synced), and the
// dimensions still add up to the clicks.
func TestClickLogPowerLoss(t *testing.T) {
	for _, sync := range []SyncMode{SyncEveryCommit, SyncWriteOnly} {
		for _, keep := range []int64{0, 7, 1 << 20} {
			t.Run(fmt.Sprintf("%s/keep=%d", sync, keep), func(t *testing.T) {
				dir := t.TempDir()
				var files faultFiles
				j, err := Open(context.Background(), dir, WithSync(sync),
					files.option(), withSegmentSize(2048), withoutCompaction())
				if err != nil {
					t.Fatal(err)
				}
				//nolint:gosec // G115: a seed: any bits will do
				rng := rand.New(rand.NewPCG(1, uint64(keep)))
				cum := []int64{0} // clicks committed after i commits
				durable := 0      // commits known synced
				for i := range 400 {
					seq := j.seq
					links := make([]int64, 1+rng.IntN(4))
					for k := range links {
						links[k] = 1 + rng.Int64N(20)
					}
					n := commitClicks(t, j, 60*int64(i/20), links, []string{"NL", "DE", "FR"}[rng.IntN(3)])
					cum = append(cum, cum[len(cum)-1]+n)
					if sync == SyncEveryCommit || j.seq != seq {
						durable = i + 1
					}
				}
				abandon(j)
				if err := files.PowerCut(keep); err != nil {
					t.Fatal(err)
				}
				j2 := mustJournal(t, dir)
				got, byDim := totals(j2)
				k := slices.Index(cum, got)
				if k < 0 {
					t.Fatalf("%d clicks recovered: not the clicks of a prefix of the commits", got)
				}
				if sync == SyncEveryCommit && k != len(cum)-1 {
					t.Fatalf("SyncEveryCommit: %d of %d committed clicks survive the power cut", got, cum[len(cum)-1])
				}
				if k < durable {
					t.Fatalf("%d commits survive, want at least the %d synced", k, durable)
				}
				for d, n := range byDim {
					if n != got {
						t.Errorf("dimension %v sums to %d, want %d", linkforge.Dimension(d), n, got)
					}
				}
				t.Logf("%d of %d commits survive (%d synced)", k, len(cum)-1, durable)
			})
		}
	}
}

// The bound within one commit: the same new value arriving in two minutes
// of one hour is one value, decided once; values past MaxDimValues, in value
// order, go to MoreValue, and the sums stay whole.
func TestBoundDecidedOncePerValue(t *testing.T) {
	j := mustJournal(t, t.TempDir(), WithSync(SyncWriteOnly))
	incs := []*Increment{{LinkID: 1, Bucket: 3600}, {LinkID: 1, Bucket: 3660}}
	for _, in := range incs {
		for v := range 70 {
			in.Add++
			in.CountDims(&linkforge.ClickDims{linkforge.DimCountry: fmt.Sprintf("V%02d", v)})
		}
	}
	if _, err := j.Commit(context.Background(), incs, nil, nil, 0, nil); err != nil {
		t.Fatal(err)
	}
	got := map[string]int64{}
	for _, d := range journalDims(t, j, 1) {
		if d.Dim == linkforge.DimCountry {
			got[d.Value] += d.N
		}
	}
	if len(got) != MaxDimValues+1 || got["V00"] != 2 || got["V63"] != 2 || got[linkforge.MoreValue] != 12 {
		t.Fatalf("country values %v: want V00..V63 with 2 each and %s with 12", got, linkforge.MoreValue)
	}
}

// reopenTail opens the journal in d, checks its state is want, and returns
// the tail truncation warnings Open logged.
func reopenTail(t *testing.T, d, want string) []map[string]any {
	t.Helper()
	var logs testlog.Buffer
	j, err := Open(context.Background(), d, WithLogger(logs.Logger()), withoutCompaction())
	if err != nil {
		t.Fatalf("reopen: %v", err)
	}
	defer j.Close()
	if got := dumpState(j); got != want {
		t.Fatalf("state after reopen:\n%s\nwant:\n%s", got, want)
	}
	return logs.Records(t, "clicklog_tail_truncated")
}

func logicalSize(j *Journal) int64 {
	j.wmu.Lock()
	defer j.wmu.Unlock()
	return j.size
}

// Segments are preallocated (prealloc.go): a killed process leaves the
// open segment with zeros after its last record. Reopened, that is the
// clean end of the log: the state is whole, nothing is logged, the file is
// cut to its records. A record torn inside the zeros (a prefix of it
// written, at every length) is the torn tail it would be at the file's
// end: cut, with the warning, and the earlier records whole.
func TestClickLogPreallocatedTail(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	j, err := Open(ctx, dir, withoutCompaction())
	if err != nil {
		t.Fatal(err)
	}
	commitClicks(t, j, 3600, []int64{1, 2, 2, 3}, "NL")
	commitClicks(t, j, 3660, []int64{2, 4}, "DE")
	before := dumpState(j)
	start := logicalSize(j)
	commitClicks(t, j, 3720, []int64{5, 6, 7}, "FR")
	after := dumpState(j)
	end := logicalSize(j)
	seg := segmentPath(j)
	if got := fileSize(t, seg); got <= end {
		t.Fatalf("segment is %d bytes with %d of records: not preallocated", got, end)
	}
	abandon(j)
	rel, _ := filepath.Rel(dir, seg)
	data, err := os.ReadFile(seg)
	if err != nil {
		t.Fatal(err)
	}

	reopen := reopenTail

	d := copyDir(t, dir)
	if recs := reopen(t, d, after); len(recs) != 0 {
		t.Fatalf("zeros after the last record: warnings %v, want none", recs)
	}
	if got := fileSize(t, filepath.Join(d, rel)); got != end {
		t.Fatalf("segment is %d bytes after reopen, want its %d bytes of records", got, end)
	}
	for k := start + 1; k < end; k++ {
		if allZero(data[k:end]) {
			continue // the record ends in zero bytes: it is whole
		}
		d := copyDir(t, dir)
		torn := slices.Clone(data)
		clear(torn[k:end]) // only the record's first k-start bytes reached the disk
		if err := os.WriteFile(filepath.Join(d, rel), torn, 0o600); err != nil {
			t.Fatal(err)
		}
		recs := reopen(t, d, before)
		if len(recs) != 1 || recs[0]["offset"] != float64(start) || recs[0]["bytes"] != float64(len(data))-float64(start) {
			t.Fatalf("torn at %d: warnings %v, want one at offset %d", k, recs, start)
		}
		if got := fileSize(t, filepath.Join(d, rel)); got != start {
			t.Fatalf("torn at %d: segment is %d bytes after reopen, want %d", k, got, start)
		}
	}
}

// Segments ramp up from firstSegmentSize to the configured size, each made
// ready (zero-filled) before its rotation, and every closed segment is cut
// to its records; the clicks survive a reopen.
func TestClickLogSegmentsRampUp(t *testing.T) {
	dir := t.TempDir()
	j, err := Open(context.Background(), dir, withSegmentSize(1<<20), withoutCompaction(), WithSync(SyncWriteOnly))
	if err != nil {
		t.Fatal(err)
	}
	var clicks int64
	var limits []int64
	for i := int64(0); len(limits) < 6 && i < 100_000; i++ {
		links := make([]int64, 40)
		for k := range links {
			links[k] = i*40 + int64(k)
		}
		clicks += commitClicks(t, j, 60*(i/100), links, "NL")
		j.wmu.Lock()
		if int(j.seq) > len(limits) { //nolint:gosec // G115: a segment number of this test, a few dozen
			limits = append(limits, j.limit)
		}
		j.wmu.Unlock()
		if i%8 == 0 {
			// Let the spare catch up now and then, as a real load's gaps do.
			waitSpare(t, j)
		}
	}
	want := []int64{firstSegmentSize, 2 * firstSegmentSize, 4 * firstSegmentSize, 8 * firstSegmentSize, 1 << 20, 1 << 20}
	if !slices.Equal(limits, want) {
		t.Fatalf("segment sizes %v, want %v", limits, want)
	}
	segs, _, err := logFiles(j.dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range segs[:len(segs)-1] {
		data, err := os.ReadFile(filepath.Join(j.dir, segmentName(s)))
		if err != nil {
			t.Fatal(err)
		}
		off := 0
		for off < len(data) {
			_, size, ok := nextFrame(data[off:])
			if !ok {
				break
			}
			off += size
		}
		if len(data) == 0 || off != len(data) {
			t.Fatalf("closed segment %d: records end at %d of %d bytes: not cut to its records", s, off, len(data))
		}
	}
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}
	if ms, _ := filepath.Glob(filepath.Join(j.dir, sparePrefix+"*")); len(ms) != 0 {
		t.Fatalf("spares left after Close: %v", ms)
	}
	j2 := mustJournal(t, dir)
	if got, _ := totals(j2); got != clicks {
		t.Fatalf("%d clicks after reopen, want %d", got, clicks)
	}
}

// waitSpare waits until the spare asked for, if any, is ready.
func waitSpare(t *testing.T, j *Journal) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		j.wmu.Lock()
		asked := j.spareAsked
		j.wmu.Unlock()
		j.spareMu.Lock()
		ready := j.spare.f != nil
		j.spareMu.Unlock()
		if !asked || ready {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("spare segment not ready after 10s")
		}
		time.Sleep(time.Millisecond)
	}
}

// Compaction rewrites the whole state: it waits until the closed segments
// hold as many bytes as the last snapshot, so the small first segments'
// rotations do not each rewrite a large state.
func TestCompactionWaitsForTheLogToOutgrowTheSnapshot(t *testing.T) {
	dir := t.TempDir()
	j, err := Open(context.Background(), dir, withSegmentSize(4096), withoutCompaction(), WithSync(SyncWriteOnly))
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	links := func(i int64) []int64 {
		l := make([]int64, 40)
		for k := range l {
			l[k] = i*40 + int64(k)
		}
		return l
	}
	for i := range int64(50) { // 2,000 links: a snapshot of many segments' size
		commitClicks(t, j, 60, links(i), "NL")
	}
	if err := j.compactOnce(); err != nil {
		t.Fatal(err)
	}
	_, snaps, err := logFiles(j.dir)
	if err != nil || len(snaps) != 1 {
		t.Fatalf("snapshots %v, %v; want one", snaps, err)
	}
	snap := fileSize(t, filepath.Join(j.dir, snapshotName(snaps[0])))
	if snap <= 4*4096 {
		t.Fatalf("snapshot of %d bytes: not larger than a few segments", snap)
	}
	closedBytes := func() int64 {
		segs, _, err := logFiles(j.dir)
		if err != nil {
			t.Fatal(err)
		}
		var n int64
		for _, s := range segs {
			if s >= snaps[0] && s != j.seq {
				n += fileSize(t, filepath.Join(j.dir, segmentName(s)))
			}
		}
		return n
	}
	for i := int64(0); ; i++ {
		closed := closedBytes()
		if got, want := j.worthCompacting(), closed >= snap; got != want {
			t.Fatalf("closed segments %d bytes, snapshot %d: worthCompacting %v, want %v", closed, snap, got, want)
		}
		if closed >= snap {
			break
		}
		commitClicks(t, j, 120, links(i%50), "DE")
	}
}
