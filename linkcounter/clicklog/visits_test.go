package clicklog

import (
	"context"
	"slices"
	"testing"
)

// The visitor hashes of unflushed clicks survive a crash (the reopened
// journal replays them) and a snapshot, and leave once marked stored.
func TestVisitsReplayAndMarks(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	j, err := Open(ctx, dir, WithSync(SyncWriteOnly))
	if err != nil {
		t.Fatal(err)
	}
	const bucket = 86400*3 + 120
	if _, err := j.Commit(ctx, []*Increment{{LinkID: 7, Bucket: bucket, Add: 3, Visits: []uint64{11, 12, 13}}}, nil, nil, 0, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := j.CommitVisits(ctx, []*Increment{{LinkID: 7, Bucket: bucket, Add: 1, Visits: []uint64{14}}}, nil, nil,
		[]VisitMark{{LinkID: 7, Seq: 2}}, 0, nil); err != nil {
		t.Fatal(err)
	}
	want := []LinkVisits{{LinkID: 7, Seq: 4, Visits: []Visit{{Day: 86400 * 3, Hash: 13}, {Day: 86400 * 3, Hash: 14}}}}
	check := func(what string, got []LinkVisits) {
		t.Helper()
		if !slices.EqualFunc(got, want, func(a, b LinkVisits) bool {
			return a.LinkID == b.LinkID && a.Seq == b.Seq && slices.Equal(a.Visits, b.Visits)
		}) {
			t.Fatalf("%s: visits = %+v, want %+v", what, got, want)
		}
	}
	check("committed", j.Visits([]int64{7, 8}))
	j.Close() // no flush marks: as a kill -9 leaves it

	j = mustJournal(t, dir, WithSync(SyncWriteOnly))
	check("replayed", j.Visits([]int64{7}))

	// A snapshot of the state rebuilds the same visits.
	snap := newLogState()
	var enc encoder
	var dec decoder
	if err := j.st.records(1, func(r *logRecord) error {
		var back logRecord
		if err := dec.decode(enc.frame(r)[frameHeader:], &back); err != nil {
			return err
		}
		snap.apply(&back)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if v, ok := snap.visits[7]; !ok || v.flushed != 2 || len(v.list) != 2 || v.list[1].Hash != 14 {
		t.Fatalf("snapshot visits = %+v", v)
	}

	if _, err := j.CommitVisits(ctx, nil, nil, nil, []VisitMark{{LinkID: 7, Seq: 4}}, 0, nil); err != nil {
		t.Fatal(err)
	}
	want = nil
	check("marked", j.Visits([]int64{7}))
}
