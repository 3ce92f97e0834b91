package clicklog

import (
	"errors"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

// TestZeroFillPacing: a spare's fill waits zeroPause between its chunks,
// and not at all once hurried; the file is the size asked, all zeros.
func TestZeroFillPacing(t *testing.T) {
	const chunks = 8
	for _, hurried := range []bool{false, true} {
		synctest.Test(t, func(t *testing.T) {
			var hurry atomic.Bool
			hurry.Store(hurried)
			path := filepath.Join(t.TempDir(), "spare.tmp")
			start := time.Now()
			f, err := createZeroed(path, chunks*zeroChunk, make(chan struct{}), &hurry)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			want := time.Duration(chunks-1) * zeroPause
			if hurried {
				want = 0
			}
			if got := time.Since(start); got != want {
				t.Errorf("hurried %v: the fill took %v of the clock, want %v", hurried, got, want)
			}
			data, err := os.ReadFile(path)
			if err != nil || len(data) != chunks*zeroChunk || !allZero(data) {
				t.Errorf("hurried %v: %d bytes (want %d), all zero %v, %v", hurried, len(data), chunks*zeroChunk, allZero(data), err)
			}
		})
	}
}

// TestZeroFillStops: a closed stop channel ends a paced fill between two
// chunks, with errStopped and no file left.
func TestZeroFillStops(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		stop := make(chan struct{})
		path := filepath.Join(t.TempDir(), "spare.tmp")
		time.AfterFunc(3*zeroPause/2, func() { close(stop) })
		_, err := createZeroed(path, 64*zeroChunk, stop, nil)
		if !errors.Is(err, errStopped) {
			t.Fatalf("fill with stop closed: %v, want errStopped", err)
		}
		if _, err := os.Stat(path); !os.IsNotExist(err) {
			t.Fatalf("a stopped fill left its file: %v", err)
		}
	})
}

// TestSpareHurriedAtThreeQuarters: the spare is asked for at half the open
// segment and hurried at three quarters; the rotation clears the hurry.
func TestSpareHurriedAtThreeQuarters(t *testing.T) {
	j := mustJournal(t, t.TempDir(), withSegmentSize(64<<10), withoutCompaction(), WithSync(SyncWriteOnly))
	state := func() (size, limit int64, seq uint64, asked, hurried bool) {
		j.wmu.Lock()
		defer j.wmu.Unlock()
		return j.size, j.limit, j.seq, j.spareAsked, j.spareHurry.Load()
	}
	_, _, firstSeq, _, _ := state()
	var sawAsked, sawHurried bool
	for i := int64(0); ; i++ {
		commitClicks(t, j, 60, []int64{i, i + 1, i + 2}, "NL")
		size, limit, seq, asked, hurried := state()
		if seq != firstSeq {
			if hurried {
				t.Fatal("the hurry outlived the rotation")
			}
			break
		}
		if asked != (size >= limit/2) {
			t.Fatalf("at %d of %d bytes: spare asked %v", size, limit, asked)
		}
		if hurried != (size >= limit/4*3) {
			t.Fatalf("at %d of %d bytes: spare hurried %v", size, limit, hurried)
		}
		sawAsked, sawHurried = sawAsked || asked, sawHurried || hurried
	}
	if !sawAsked || !sawHurried {
		t.Fatalf("spare asked %v, hurried %v before the rotation: the records were too large to see both", sawAsked, sawHurried)
	}
}

// TestSnapshotWriterPacing: a paced snapshot writes every byte given, in
// order, waiting zeroPause before each whole chunk; once its pace channel
// is closed it waits no more; unpaced it never waits.
func TestSnapshotWriterPacing(t *testing.T) {
	const frames = 40
	frame := make([]byte, zeroChunk/4+7) // chunks do not end on frames
	for _, mode := range []string{"paced", "closed", "unpaced"} {
		synctest.Test(t, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "snap.tmp")
			f, err := os.Create(path)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			pace := make(chan struct{})
			var w *snapshotWriter
			switch mode {
			case "paced":
				w = newSnapshotWriter(f, pace)
			case "closed":
				close(pace)
				w = newSnapshotWriter(f, pace)
			default:
				w = newSnapshotWriter(f, nil)
			}
			var want []byte
			start := time.Now()
			for i := range frames {
				for k := range frame {
					frame[k] = byte(i + k)
				}
				want = append(want, frame...)
				if err := w.write(frame); err != nil {
					t.Fatal(err)
				}
			}
			if err := w.finish(); err != nil {
				t.Fatal(err)
			}
			wantTook := time.Duration(0)
			if mode == "paced" {
				wantTook = time.Duration(len(want)/zeroChunk) * zeroPause
			}
			if got := time.Since(start); got != wantTook {
				t.Errorf("%s: took %v of the clock, want %v", mode, got, wantTook)
			}
			got, err := os.ReadFile(path)
			if err != nil || string(got) != string(want) {
				t.Errorf("%s: the file holds %d bytes (want %d), equal %v, %v", mode, len(got), len(want), string(got) == string(want), err)
			}
		})
	}
}

// TestOpenRemovesUnfinishedFiles: a spare and a snapshot that a killed
// process left half written are removed at Open, and not read.
func TestOpenRemovesUnfinishedFiles(t *testing.T) {
	dataDir := t.TempDir()
	j := mustJournal(t, dataDir)
	commitClicks(t, j, 60, []int64{1, 2, 3}, "NL")
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}
	left := []string{filepath.Join(j.dir, sparePrefix+"7.tmp"), filepath.Join(j.dir, snapshotName(9)+".tmp")}
	for _, p := range left {
		if err := os.WriteFile(p, []byte("half written"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	j2 := mustJournal(t, dataDir)
	for _, p := range left {
		if _, err := os.Stat(p); !os.IsNotExist(err) {
			t.Errorf("%s left after Open: %v", filepath.Base(p), err)
		}
	}
	if got, _ := totals(j2); got != 3 {
		t.Errorf("%d clicks after reopen, want 3", got)
	}
}
