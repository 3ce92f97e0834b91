package clicklog

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
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
	// own: a spare's fill reaches the disk in steps of about a millisecond
	// of device time, not as one burst of tens of megabytes that every
	// group commit's fdatasync would queue behind.
	zeroChunk = 256 << 10
	// zeroPause spaces a spare's chunks, so the fill takes a fraction of
	// the device (a 64 MiB spare: about a second) while commits go on.
	zeroPause = 2 * time.Millisecond
)

// zeroes is the source of the zero-fill writes.
var zeroes = make([]byte, zeroChunk)

// errStopped ends a spare's fill when the journal closes.
var errStopped = errors.New("journal closing")

// createZeroed creates path (it must not exist) as size zero bytes, synced.
// With a stop channel the fill is paced (zeroPause between chunks) and ends
// with errStopped once stop is closed.
func createZeroed(path string, size int64, stop <-chan struct{}) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_RDWR, fileperm.Private) //nolint:gosec // G304: the path is the operator's (a flag) or built from the data dir, never from a request
	if err != nil {
		return nil, err
	}
	if err := zeroFill(f, size, stop); err != nil {
		f.Close()
		os.Remove(path)
		return nil, err
	}
	return f, nil
}

func zeroFill(f *os.File, size int64, stop <-chan struct{}) error {
	for off := int64(0); off < size; off += zeroChunk {
		if stop != nil && off > 0 {
			select {
			case <-stop:
				return errStopped
			case <-time.After(zeroPause):
			}
		}
		if _, err := f.WriteAt(zeroes[:min(zeroChunk, size-off)], off); err != nil {
			return fmt.Errorf("zero-fill %s: %w", f.Name(), err)
		}
		if err := fdatasync(f); err != nil {
			return fmt.Errorf("zero-fill %s: %w", f.Name(), err)
		}
	}
	return nil
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

// removeSpares removes the spares a stopped process left behind.
func removeSpares(dir string) {
	ms, _ := filepath.Glob(filepath.Join(dir, sparePrefix+"*.tmp"))
	for _, m := range ms {
		os.Remove(m)
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
		f, err := createZeroed(path, size, j.spareStop)
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
	f, err := createZeroed(path, size, nil)
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
