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
	if e, ok := snap.links[7]; !ok {
		t.Fatal("snapshot holds no entry of link 7")
	} else if v := e.visits; v == nil || v.flushed != 2 || len(v.list) != 2 || v.list[1].Hash != 14 {
		t.Fatalf("snapshot visits = %+v", v)
	}

	if _, err := j.CommitVisits(ctx, nil, nil, nil, []VisitMark{{LinkID: 7, Seq: 4}}, 0, nil); err != nil {
		t.Fatal(err)
	}
	want = nil
	check("marked", j.Visits([]int64{7}))
}

// A link's entry holds its hours or its visits or both, and leaves the
// state when it holds neither: hours dropped while visits wait for their
// sketch keep the entry for the visits, and a replay rebuilds the same.
func TestLinkEntriesFollowHoursAndVisits(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	j := mustJournal(t, dir, WithSync(SyncWriteOnly))
	const bucket = 86400*3 + 120
	if _, err := j.Commit(ctx, []*Increment{
		{LinkID: 7, Bucket: bucket, Add: 1, Visits: []uint64{11}},
		{LinkID: 8, Bucket: bucket, Add: 1},
	}, nil, nil, 0, nil); err != nil {
		t.Fatal(err)
	}
	checkEntries(t, j, "clicked", 2, 2)

	// Link 7's minute flushed and its rows dropped, its visit not in a
	// sketch yet: the entry stays for the visit.
	if _, err := j.Commit(ctx, nil, []Row{{LinkID: 7, Bucket: bucket, N: 1}}, nil, 0, []int64{7}); err != nil {
		t.Fatal(err)
	}
	checkEntries(t, j, "hours of 7 dropped", 2, 1)
	if got := j.Visits([]int64{7}); len(got) != 1 || got[0].Seq != 1 || got[0].Visits[0].Hash != 11 {
		t.Fatalf("visits of 7 after its rows' drop = %+v, want its one visit", got)
	}
	want := dumpState(j) + dumpVisits(j)
	j.Close()
	j = mustJournal(t, dir, WithSync(SyncWriteOnly))
	checkEntries(t, j, "replayed", 2, 1)
	if got := dumpState(j) + dumpVisits(j); got != want {
		t.Fatalf("replayed state:\n%s\nwant:\n%s", got, want)
	}

	if _, err := j.CommitVisits(ctx, nil, nil, nil, []VisitMark{{LinkID: 7, Seq: 1}}, 0, nil); err != nil {
		t.Fatal(err)
	}
	checkEntries(t, j, "visit of 7 marked", 1, 1)
	if _, err := j.Commit(ctx, nil, []Row{{LinkID: 8, Bucket: bucket, N: 1}}, nil, 0, []int64{8}); err != nil {
		t.Fatal(err)
	}
	checkEntries(t, j, "8 dropped", 0, 0)
}

// checkEntries fails unless the state holds entries link entries, held of
// them with hours, and none that holds nothing.
func checkEntries(t *testing.T, j *Journal, what string, entries, held int) {
	t.Helper()
	j.mu.RLock()
	defer j.mu.RUnlock()
	withHours := 0
	for l, e := range j.st.links {
		if e.hours != nil {
			withHours++
		} else if e.visits == nil {
			t.Errorf("%s: link %d's entry holds nothing", what, l)
		}
	}
	if len(j.st.links) != entries || withHours != held || j.st.held != held {
		t.Errorf("%s: %d entries, %d with hours, held = %d; want %d, %d, %d",
			what, len(j.st.links), withHours, j.st.held, entries, held, held)
	}
}
