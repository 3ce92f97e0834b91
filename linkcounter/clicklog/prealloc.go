package clicklog

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync/atomic"
	"time"

	"github.com/linkforge/linkforge/internal/fileperm"
)

// Segments are preallocated: written full of zeros and synced before the
// first record goes in, so that a group commit's fdatasync writes the
// record's pages and flushes the device, and never also the file's size
// or its block map. Appending to a growing file cost every sync an inode
// write (ext4 without a journal) or a journal commit (ext4, XFS); measured
// on this project's machines, write+fdatasync of a 300-byte record took
// 127 µs and 75 µs of CPU appending, 86 µs and 47 µs into a zero-filled
// file (docs/adr/014-click-log.md, "Preallocation"). fallocate would be
// instant but leaves unwritten extents, whose conversion at the first
// write is the same metadata update on journaling file systems.
//
// A segment ends, logically, at its last whole record; the zeros after it
// are not a record (a frame's length is never 0), so replay stops there
// without a warning. A closed segment is cut to its logical end before the
// next one is opened, as it was before preallocation.
//
// Sizes ramp up: the first segment after Open is firstSegmentSize, each
// spare twice the segment it follows, up to the configured segment size.
// A journal that counts little (a test, a quiet node) writes little; a busy
// one reaches full-size segments after a few rotations.

const (
	// firstSegmentSize is the first segment after Open, zero-filled on the
	// spot: about a millisecond.
	firstSegmentSize = 64 << 10
	// sparePrefix names the next segment while it is being zero-filled or
	// waits for its rotation ("spare-N.tmp"); Open removes leftover ones.
	sparePrefix = "spare-"
	// zeroChunk is the size of the zero-fill writes, each synced on its
	// own: a spare's fill reaches the disk in small steps, not as one burst
	// of tens of megabytes that every group commit's fdatasync would queue
	// behind.
	//
	// With zeroPause, it sets the fill's share of the device, and that
	// share sets the clicks' tail: a group commit's fdatasync flushes the
	// whole device cache, the fill's pages with it. Measured on the
	// benchmarks' VM, a bare group commit at 10,680 clicks/s beside a fill
	// (docs/performance.md, "The counted redirect"): click wait p99 0.6-1.1 ms alone;
	// 6.6-9.6 ms beside 256 KiB chunks 2 ms apart (about 100 MB/s, this
	// constant until round 9); 0.8-1.1 ms beside 32 KiB chunks 2 ms apart;
	// 1.3-4.4 ms beside 16 KiB chunks 0.5 ms apart. So the fill keeps to
	// about 14 MB/s: a 64 MiB spare in some 5 s, where the log it races
	// grows at 3-4 MB/s at this machine's full counted load (the spare is
	// asked for half a segment, 32 MiB, before it is needed).
	zeroChunk = 32 << 10
	// zeroPause spaces a spare's chunks, so the fill takes a small share of
	// the device while commits go on; a fill that falls behind the log
	// drops it (Journal.spareHurry).
	zeroPause = 2 * time.Millisecond
)

// zeroes is the source of the zero-fill writes (256 KiB: the largest
// chunk BenchmarkCommitBesideFill compares).
var zeroes = make([]byte, 256<<10)

// errStopped ends a spare's fill when the journal closes.
var errStopped = errors.New("journal closing")

// createZeroed creates path (it must not exist) as size zero bytes, synced.
// With a stop channel the fill is paced (zeroPause between chunks, none
// while hurry is set) and ends with errStopped once stop is closed.
func createZeroed(path string, size int64, stop <-chan struct{}, hurry *atomic.Bool) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_RDWR, fileperm.Private) //nolint:gosec // G304: the path is the operator's (a flag) or built from the data dir, never from a request
	if err != nil {
		return nil, err
	}
	if err := zeroFill(f, size, stop, hurry); err != nil {
		f.Close()
		os.Remove(path)
		return nil, err
	}
	return f, nil
}

func zeroFill(f *os.File, size int64, stop <-chan struct{}, hurry *atomic.Bool) error {
	return zeroFillPaced(f, size, zeroChunk, zeroPause, stop, hurry)
}

// zeroFillPaced is zeroFill with its pace as arguments, for
// BenchmarkCommitBesideFill to compare paces (chunk at most len(zeroes)).
func zeroFillPaced(f *os.File, size, chunk int64, every time.Duration, stop <-chan struct{}, hurry *atomic.Bool) error {
	var p pacer
	for off := int64(0); off < size; off += chunk {
		if stop != nil && off > 0 {
			d := every
			if hurry != nil && hurry.Load() {
				d = 0
			}
			if p.wait(d, stop) {
				return errStopped
			}
		}
		if _, err := f.WriteAt(zeroes[:min(chunk, size-off)], off); err != nil {
			return fmt.Errorf("zero-fill %s: %w", f.Name(), err)
		}
		if err := fdatasync(f); err != nil {
			return fmt.Errorf("zero-fill %s: %w", f.Name(), err)
		}
	}
	return nil
}

// pacer spaces the paced writes of a spare's fill and of a snapshot.
type pacer struct{ timer *time.Timer }

// wait waits d (0: not at all), or less if stop is closed, and reports
// whether stop is closed.
func (p *pacer) wait(d time.Duration, stop <-chan struct{}) bool {
	if d <= 0 {
		select {
		case <-stop:
			return true
		default:
			return false
		}
	}
	if p.timer == nil {
		p.timer = time.NewTimer(d)
	} else {
		p.timer.Reset(d)
	}
	select {
	case <-stop:
		p.timer.Stop()
		return true
	case <-p.timer.C:
		return false
	}
}

// spare is a zero-filled segment made ready ahead of a rotation.
type spare struct {
	f    *os.File
	path string
	size int64
}

// drop closes and removes s, if any.
func (s spare) drop() {
	if s.f != nil {
		s.f.Close()
		os.Remove(s.path)
	}
}

// removeSpares removes the spares a stopped process left behind, and the
// snapshots it had not finished writing (a paced snapshot takes seconds:
// a kill in between leaves its ".tmp", which no replay reads).
func removeSpares(dir string) {
	for _, pattern := range []string{sparePrefix + "*.tmp", snapshotPrefix + "*.tmp"} {
		ms, _ := filepath.Glob(filepath.Join(dir, pattern))
		for _, m := range ms {
			os.Remove(m)
		}
	}
}

// runSpares zero-fills the next segment, off the commit path, whenever
// append asks (the open segment is half full): a rotation then only renames
// it into place.
func (j *Journal) runSpares() {
	defer close(j.spareDone)
	n := 0
	for size := range j.spareWant {
		n++
		path := filepath.Join(j.dir, fmt.Sprintf("%s%d.tmp", sparePrefix, n))
		f, err := createZeroed(path, size, j.spareStop, &j.spareHurry)
		if errors.Is(err, errStopped) {
			continue // spareWant is closed too
		}
		if err != nil {
			// The rotation falls back to a small segment made on the spot.
			j.log.Warn("click log spare segment not prepared", "event", "clicklog_spare_failed",
				"dir", j.dir, "error", err.Error())
			continue
		}
		j.spareMu.Lock()
		old := j.spare
		j.spare = spare{f: f, path: path, size: size}
		j.spareMu.Unlock()
		old.drop() // asked for before the last rotation, and not taken
	}
	j.spareMu.Lock()
	old := j.spare
	j.spare = spare{}
	j.spareMu.Unlock()
	old.drop()
}

// hurrySpare tells a fill under way that the open segment is three
// quarters full: the rest is written unpaced, since a spare not ready at
// the rotation costs a small segment made on the spot and the ramp of
// sizes again. wmu must be held.
func (j *Journal) hurrySpare() {
	if j.spareAsked && !j.spareHurry.Load() {
		j.spareHurry.Store(true)
	}
}

// askSpare asks runSpares for the segment after the open one. wmu must be
// held.
func (j *Journal) askSpare() {
	if j.spareAsked || j.closed {
		return
	}
	j.spareAsked = true
	select {
	case j.spareWant <- min(2*j.limit, j.segmentSize):
	default:
	}
}

// newSegmentFile returns segment seq's file, zero-filled, and its size:
// the spare renamed into place when one is ready, else a small one made
// now.
func (j *Journal) newSegmentFile(seq uint64) (*os.File, int64, error) {
	path := filepath.Join(j.dir, segmentName(seq))
	j.spareMu.Lock()
	s := j.spare
	j.spare = spare{}
	j.spareMu.Unlock()
	j.spareAsked = false
	j.spareHurry.Store(false)
	if s.f != nil {
		if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
			s.drop()
			return nil, 0, fmt.Errorf("create click log segment: %s exists", path)
		}
		if err := os.Rename(s.path, path); err == nil {
			return s.f, s.size, nil
		}
		s.drop()
	}
	size := min(int64(firstSegmentSize), j.segmentSize)
	f, err := createZeroed(path, size, nil, nil)
	if err != nil {
		return nil, 0, fmt.Errorf("create click log segment: %w", err)
	}
	return f, size, nil
}

// allZero reports whether b holds only zero bytes: a preallocated
// segment's unused end.
func allZero(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}
