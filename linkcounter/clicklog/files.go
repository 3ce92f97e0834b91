package clicklog

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/linkforge/linkforge/linkcounter/clicklog/internal/journalopt"
)

// The click log's files, in one directory (docs/adr/014-click-log.md):
//
//	LLLLLLLLLLLLLLLLLLLL.log   segments, appended to in sequence order;
//	                           only the newest is ever written
//	snap-SSSSSSSSSSSSSSSSSSSS  the state at the start of segment S: every
//	                           segment below S is in it
//
// Open replays the newest snapshot and the segments from its sequence on.

const (
	segmentSuffix  = ".log"
	snapshotPrefix = "snap-"
	// defaultSegmentSize: a segment is closed past this size, and the
	// compactor folds closed segments into a snapshot. Replaying 64 MiB of
	// records takes well under a second.
	defaultSegmentSize = 64 << 20
	snapshotChunk      = 4096 // rows per snapshot record
)

// File is what the journal needs of a segment open for appending (at its
// logical end: the file is preallocated). The power-loss tests wrap the
// real file to drop what was not synced (clicklogtest.WithFileLayer).
type File = journalopt.File

// osFile is a segment on disk.
type osFile struct{ *os.File }

func (f osFile) Sync() error { return segmentSync(f.File) }

// segmentSync is fdatasync; a variable only so that a test can see each
// commit at FULL reach it on the segment file itself, beneath the layers
// the power-loss tests put in between.
var segmentSync = fdatasync

func segmentName(seq uint64) string  { return fmt.Sprintf("%020d%s", seq, segmentSuffix) }
func snapshotName(seq uint64) string { return fmt.Sprintf("%s%020d", snapshotPrefix, seq) }

// logFiles lists the directory's segments and snapshots, ascending.
func logFiles(dir string) (segs, snaps []uint64, err error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, nil, err
	}
	for _, e := range ents {
		name := e.Name()
		switch {
		case strings.HasSuffix(name, segmentSuffix):
			if n, err := strconv.ParseUint(strings.TrimSuffix(name, segmentSuffix), 10, 64); err == nil {
				segs = append(segs, n)
			}
		case strings.HasPrefix(name, snapshotPrefix) && !strings.HasSuffix(name, ".tmp"):
			if n, err := strconv.ParseUint(strings.TrimPrefix(name, snapshotPrefix), 10, 64); err == nil {
				snaps = append(snaps, n)
			}
		}
	}
	slices.Sort(segs)
	slices.Sort(snaps)
	return segs, snaps, nil
}

// syncDir makes a directory's entries (a created, renamed or removed file)
// durable.
func syncDir(dir string) error {
	d, err := os.Open(dir) //nolint:gosec // G304: the path is the operator's (a flag) or built from the data dir, never from a request
	if err != nil {
		return err
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("sync %s: %w", dir, err)
	}
	return nil
}

// errCorrupt marks damage that Open refuses to start with.
var errCorrupt = errors.New("click log corrupt")

// replayPart replays, into s, what a closed segment or a snapshot holds of
// the links of part p of parts (link id modulo parts): the compactor's.
// It reads the file a record at a time rather than whole, since it runs
// beside the live state (a closed segment is up to 64 MiB, a snapshot as
// large as the state's records), and does not cut the file: Open replayed
// and cut it, and rotation closes a segment at its last record.
func replayPart(path string, s *logState, dec *decoder, rec *logRecord, parts, p int) (int, error) {
	f, err := os.Open(path) //nolint:gosec // G304: a file of the click log directory
	if err != nil {
		return 0, err
	}
	defer f.Close()
	r := bufio.NewReaderSize(f, 256<<10)
	var frame []byte
	for n, off := 0, int64(0); ; n++ {
		frame = slices.Grow(frame[:0], frameHeader)[:frameHeader]
		if _, err := io.ReadFull(r, frame); err == io.EOF {
			return n, nil
		} else if err != nil {
			return n, fmt.Errorf("%w: %s: record header at offset %d: %w", errCorrupt, path, off, err)
		}
		size := binary.LittleEndian.Uint32(frame[0:4])
		if size == 0 || size > maxRecord {
			if rest, err := io.ReadAll(r); err == nil && size == 0 && allZero(frame) && allZero(rest) {
				return n, nil // a preallocated end
			}
			return n, fmt.Errorf("%w: %s: bad record at offset %d", errCorrupt, path, off)
		}
		frame = slices.Grow(frame, int(size))[:frameHeader+int(size)]
		if _, err := io.ReadFull(r, frame[frameHeader:]); err != nil {
			return n, fmt.Errorf("%w: %s: record at offset %d: %w", errCorrupt, path, off, err)
		}
		payload, _, ok := nextFrame(frame)
		if !ok {
			return n, fmt.Errorf("%w: %s: bad record at offset %d (checksum mismatch)", errCorrupt, path, off)
		}
		if err := dec.decode(payload, rec); err != nil {
			return n, fmt.Errorf("%w: %s: record at offset %d: %w", errCorrupt, path, off, err)
		}
		if parts > 1 {
			rec.keepPart(parts, p)
		}
		s.apply(rec)
		off += int64(len(frame))
	}
}

// replayFile applies every record of one file to s. A bad frame (torn or
// checksum mismatch) is fatal unless tail: then the file is cut there, with
// a warning, since a crash can leave half a record only at the end of the
// newest segment. It returns the number of records applied.
func replayFile(path string, s *logState, dec *decoder, rec *logRecord, tail bool, log *slog.Logger) (int, error) {
	data, err := os.ReadFile(path) //nolint:gosec // G304: a segment of the click log directory
	if err != nil {
		return 0, err
	}
	n := 0
	for off := 0; off < len(data); {
		payload, size, ok := nextFrame(data[off:])
		if !ok && allZero(data[off:]) {
			// A preallocated segment's unused end (prealloc.go): the clean
			// end of the records. A closed segment is cut to its records
			// at rotation; one that was not (a crash in between) is as
			// good. Cut here too, so the file is exact from now on.
			if err := truncateSync(path, int64(off)); err != nil {
				return n, fmt.Errorf("cut the preallocated end of %s: %w", path, err)
			}
			return n, nil
		}
		if !ok {
			if !tail {
				return n, fmt.Errorf("%w: %s: bad record at offset %d of %d bytes (torn or checksum mismatch) in a file that is not the log's tail; "+
					"the counts cannot be rebuilt past it: restore the data dir from a backup, or move %s aside to start from the last snapshot (losing its unflushed clicks)",
					errCorrupt, path, off, len(data), filepath.Dir(path))
			}
			log.Warn("click log tail truncated", slog.String("event", "clicklog_tail_truncated"),
				slog.String("segment", path), slog.Int("offset", off), slog.Int("bytes", len(data)-off))
			if err := truncateSync(path, int64(off)); err != nil {
				return n, fmt.Errorf("truncate torn tail of %s: %w", path, err)
			}
			return n, nil
		}
		if err := dec.decode(payload, rec); err != nil {
			// The checksum holds: this is not a torn write.
			return n, fmt.Errorf("%w: %s: record at offset %d: %w", errCorrupt, path, off, err)
		}
		s.apply(rec)
		n++
		off += size
	}
	return n, nil
}

func truncateSync(path string, size int64) error {
	f, err := os.OpenFile(path, os.O_WRONLY, 0) //nolint:gosec // G304: a segment of the click log directory
	if err != nil {
		return err
	}
	defer f.Close()
	if err := f.Truncate(size); err != nil {
		return err
	}
	return f.Sync()
}

// writeSnapshot writes s as the snapshot of sequence seq in dir: to a
// temporary file, synced, renamed into place, the directory synced. A crash
// leaves either no snapshot seq or a whole one.
func writeSnapshot(dir string, seq uint64, s *logState) error {
	return writeSnapshotParts(dir, seq, 1, nil, func(int) (*logState, error) { return s, nil })
}

// snapshotWriter writes a snapshot's frames. Unpaced (pace nil), it writes
// them in 1 MiB writes and syncs once at the end. Paced, as the background
// compactor writes, it syncs every zeroChunk and waits zeroPause between
// chunks, as a spare's zero-fill does, until pace is closed: a snapshot
// of tens of megabytes synced at once is a burst that every group
// commit's fdatasync in the meantime waits behind, as the fill's was
// (prealloc.go, zeroChunk; BenchmarkCommitBesideFill).
type snapshotWriter struct {
	f    *os.File
	pace <-chan struct{}
	buf  []byte
	p    pacer
}

func newSnapshotWriter(f *os.File, pace <-chan struct{}) *snapshotWriter {
	return &snapshotWriter{f: f, pace: pace, buf: make([]byte, 0, 1<<20)}
}

// write adds frame, writing out what is buffered past the write size.
func (w *snapshotWriter) write(frame []byte) error {
	w.buf = append(w.buf, frame...)
	if w.pace == nil {
		if len(w.buf) < 1<<20 {
			return nil
		}
		_, err := w.f.Write(w.buf)
		w.buf = w.buf[:0]
		return err
	}
	n := 0
	for ; len(w.buf)-n >= zeroChunk; n += zeroChunk {
		w.p.wait(zeroPause, w.pace) // at once once Close wants it done
		if _, err := w.f.Write(w.buf[n : n+zeroChunk]); err != nil {
			return err
		}
		if err := fdatasync(w.f); err != nil {
			return err
		}
	}
	w.buf = w.buf[:copy(w.buf, w.buf[n:])]
	return nil
}

// finish writes what is left and syncs the file.
func (w *snapshotWriter) finish() error {
	if _, err := w.f.Write(w.buf); err != nil {
		return err
	}
	w.buf = w.buf[:0]
	return w.f.Sync()
}

// writeSnapshotParts is writeSnapshot of a state given in parts of
// disjoint links: part(p) for p from 0 to parts-1, each written before
// the next is asked for, and the first part's meta record alone (the
// node id, seed and purge horizon are the same in every part). With pace
// non-nil the writes are paced until it is closed (snapshotWriter).
func writeSnapshotParts(dir string, seq uint64, parts int, pace <-chan struct{}, part func(p int) (*logState, error)) error {
	final := filepath.Join(dir, snapshotName(seq))
	tmp := final + ".tmp"
	f, err := os.OpenFile(tmp, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o600) //nolint:gosec // G304: a snapshot in the click log directory
	if err != nil {
		return fmt.Errorf("write snapshot: %w", err)
	}
	var enc encoder
	w := newSnapshotWriter(f, pace)
	for p := 0; p < parts && err == nil; p++ {
		var s *logState
		if s, err = part(p); err != nil {
			break
		}
		first := true
		err = s.records(snapshotChunk, func(r *logRecord) error {
			if first && p > 0 {
				first = false // the meta record, written with part 0
				return nil
			}
			first = false
			return w.write(enc.frame(r))
		})
	}
	if err == nil {
		err = w.finish()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, final)
	}
	if err == nil {
		err = syncDir(dir)
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("write snapshot %s: %w", final, err)
	}
	return nil
}
