package clicklog

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/internal/fileperm"
	"github.com/linkforge/linkforge/linkcounter/clicklog/internal/journalopt"
)

// SyncMode decides what a power loss (not a process crash) can cost: see
// docs/adr/014-click-log.md.
type SyncMode int

// The two modes. The flag values that choose them (--journal-sync full and
// normal) are cmd's.
const (
	// SyncEveryCommit fdatasyncs the click log at every group commit: an
	// acknowledged click survives a power loss. Group commit pays the sync
	// once per batch of clicks, not once per click. The default.
	SyncEveryCommit SyncMode = iota + 1
	// SyncWriteOnly only write()s each commit: a process crash loses
	// nothing (the kernel has the bytes), a power loss can lose the commits
	// the kernel had not written back yet.
	SyncWriteOnly
)

// String names the mode as its constant does.
func (m SyncMode) String() string {
	switch m {
	case SyncEveryCommit:
		return "SyncEveryCommit"
	case SyncWriteOnly:
		return "SyncWriteOnly"
	}
	return fmt.Sprintf("SyncMode(%d)", int(m))
}

// Option configures Open. The options only tests set (a smaller segment,
// a fault layer under the files) are package clicklogtest's.
type Option func(*journalopt.Options)

// WithSync sets the durability of a commit (default SyncEveryCommit).
func WithSync(m SyncMode) Option {
	return func(o *journalopt.Options) { o.Sync = int(m) }
}

// WithLogger sets the logger of Open's recovery and of the compactor
// (default slog.Default()).
func WithLogger(l *slog.Logger) Option {
	return func(o *journalopt.Options) { o.Logger = l }
}

// MaxDimValues bounds the distinct values a node's journal keeps per link,
// dimension and hour; further new values are counted under
// linkforge.MoreValue (docs/adr/009-click-dimensions.md).
const MaxDimValues = 64

// maxKeptBuffer bounds the bytes of a record's buffers kept for reuse
// once the record is written.
const maxKeptBuffer = 1 << 20

// The journal's names in the data dir.
const (
	// logDirName is the click log's directory.
	logDirName = "clicklog"
	// LockName is the file whose exclusive lock a journal holds while it is
	// open, and with it every running server of the data dir (cmd's
	// restore takes it to refuse while one runs). It keeps the previous
	// release's name, that of its SQLite journal plus ".lock", so that an
	// old and a new binary started on one data dir exclude each other too.
	LockName = legacyName + ".lock"
	// legacyName is the previous release's SQLite journal, imported once
	// into the click log and then renamed legacyName + ".migrated".
	legacyName = "journal.db"
)

// Journal is a node's click journal: the counts in memory (per (link,
// minute) the absolute click count and the count already flushed to the
// main store, per (link, hour, dimension, value) the same, and the node's
// identity), made durable by an append-only, checksummed click log. A click
// is acknowledged only once the log record that contains it is written
// (and, at SyncEveryCommit, fdatasynced), so after a crash the log, replayed,
// gives back every acknowledged click (docs/adr/014-click-log.md).
//
// One Journal belongs to one process: Open takes an exclusive lock on a
// sidecar file, because two processes counting into one journal would write
// the same node's absolute counts twice over.
type Journal struct {
	dataDir string
	dir     string // the click log
	sync    SyncMode
	log     *slog.Logger
	lock    *os.File
	wrap    func(*os.File) File

	segmentSize int64
	noCompact   bool

	// wmu serializes the writers (Commit, Seed, SeedHours, NodeID, DropFlushed, Probe) and
	// guards the open segment. Writers read st without mu: only they
	// change it.
	wmu    sync.Mutex
	file   File
	seq    uint64 // the open segment
	size   int64  // its length: every byte up to it is a whole record
	limit  int64  // its preallocated size: past it the segment is closed
	enc    encoder
	rec    logRecord
	broken error // a failed sync: nothing more is written until restart
	closed bool

	// mu guards st for the readers (flush, reconciliation), which take it
	// for reading; a writer takes it to apply a written record.
	mu sync.RWMutex
	st *logState

	compact     chan struct{} // capacity 1: "a segment was closed"
	compactDone chan struct{}
	compactMu   sync.Mutex // one compaction at a time
	// compactHook, in tests, gets the links of each state the compactor
	// has rebuilt, before it writes them.
	compactHook func(links int)
	// compactPartLinks bounds the links of the state the compactor rebuilds
	// at once; 0: defaultCompactPartLinks. Tests set it smaller.
	compactPartLinks int

	// The next segment, zero-filled ahead of its rotation (prealloc.go).
	spareWant  chan int64    // capacity 1: the size wanted
	spareStop  chan struct{} // closed by Close: a fill under way stops, a snapshot stops pacing
	spareDone  chan struct{}
	spareAsked bool // under wmu: asked since the last rotation
	// spareHurry: the open segment is three quarters full, so a fill under
	// way stops pausing between its chunks.
	spareHurry atomic.Bool
	spareMu    sync.Mutex
	spare      spare

	// WithBackgroundSync: unsynced is set by a write the commit did not
	// sync, and cleared by the syncer as it takes it.
	unsynced atomic.Bool
	bgSyncs  atomic.Int64
	// fileMu orders closing a segment (closeFile) with the background
	// sync of it: an fdatasync must not race the close of its file, whose
	// descriptor number the kernel may already have given to another.
	// fileGen counts the closes, under wmu and fileMu both.
	fileMu  sync.Mutex
	fileGen uint64
	bgStop  chan struct{} // nil without a background syncer
	bgDone  chan struct{}
}

// Open opens (creating if needed) the journal of the data dir dataDir:
// its click log is the directory "clicklog" in it, its lock the file
// LockName. A SQLite journal left in dataDir by an earlier release
// ("journal.db") is imported on first open, then renamed
// "journal.db.migrated".
func Open(ctx context.Context, dataDir string, opts ...Option) (*Journal, error) {
	o := journalopt.Options{Sync: int(SyncEveryCommit), SegmentSize: defaultSegmentSize}
	for _, opt := range opts {
		opt(&o)
	}
	mode := SyncMode(o.Sync)
	if mode != SyncEveryCommit && mode != SyncWriteOnly {
		return nil, fmt.Errorf("open journal %s: unknown sync mode %v", dataDir, mode)
	}
	if dataDir == "" {
		return nil, errors.New("open journal: empty data dir")
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	dataDir, err := filepath.Abs(dataDir)
	if err != nil {
		return nil, fmt.Errorf("open journal: %w", err)
	}
	lock, err := lockFile(filepath.Join(dataDir, LockName))
	if err != nil {
		return nil, fmt.Errorf("open journal %s: %w", dataDir, err)
	}
	j := &Journal{
		dataDir: dataDir, dir: filepath.Join(dataDir, logDirName), sync: mode, log: o.Logger,
		lock: lock, wrap: o.Wrap, segmentSize: o.SegmentSize, noCompact: o.NoCompact,
		compact: make(chan struct{}, 1), compactDone: make(chan struct{}),
		spareWant: make(chan int64, 1), spareStop: make(chan struct{}), spareDone: make(chan struct{}),
	}
	if err := j.open(ctx); err != nil {
		if j.file != nil {
			j.file.Close()
		}
		unlockFile(lock) //nolint:errcheck // on the way out of a failed Open, whose error is returned
		return nil, fmt.Errorf("open journal %s: %w", dataDir, err)
	}
	go j.runCompactor()
	go j.runSpares()
	if o.BackgroundSync > 0 && mode == SyncWriteOnly {
		j.bgStop, j.bgDone = make(chan struct{}), make(chan struct{})
		go j.runBackgroundSync(o.BackgroundSync)
	}
	return j, nil
}

func (j *Journal) open(ctx context.Context) error {
	if err := os.MkdirAll(j.dir, fileperm.Dir); err != nil {
		return err
	}
	if err := os.Chmod(j.dir, fileperm.Dir); err != nil {
		return err
	}
	if err := j.importLegacy(ctx); err != nil {
		return err
	}
	removeSpares(j.dir)
	segs, snaps, err := logFiles(j.dir)
	if err != nil {
		return err
	}
	st := newLogState()
	var dec decoder
	var rec logRecord
	base := uint64(1)
	if len(snaps) > 0 {
		base = snaps[len(snaps)-1]
		// A snapshot is renamed into place only once synced: damage here
		// is not a torn write.
		if _, err := replayFile(filepath.Join(j.dir, snapshotName(base)), st, &dec, &rec, false, j.log); err != nil {
			return err
		}
	}
	// Files a compaction replaced but had not removed when the process
	// stopped.
	for _, s := range snaps[:max(0, len(snaps)-1)] {
		os.Remove(filepath.Join(j.dir, snapshotName(s)))
	}
	next, closed := base, 0
	for i, s := range segs {
		if s < base {
			os.Remove(filepath.Join(j.dir, segmentName(s)))
			continue
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if _, err := replayFile(filepath.Join(j.dir, segmentName(s)), st, &dec, &rec, i == len(segs)-1, j.log); err != nil {
			return err
		}
		next = s + 1
		closed++
	}
	j.st = st
	// Always a fresh segment: the one a crash may have torn stays as it
	// was replayed (cut at its last whole record), and is compacted away.
	if err := j.openSegment(next); err != nil {
		return err
	}
	if closed > 0 {
		j.compact <- struct{}{}
	}
	return nil
}

// openSegment creates segment seq, preallocated (prealloc.go), and makes it
// the one appended to.
func (j *Journal) openSegment(seq uint64) error {
	f, size, err := j.newSegmentFile(seq)
	if err != nil {
		return err
	}
	// The new file's name must be durable before a record in it is
	// acknowledged.
	if err := syncDir(j.dir); err != nil {
		f.Close()
		return err
	}
	if j.wrap != nil {
		j.file = j.wrap(f)
	} else {
		j.file = osFile{f}
	}
	j.seq, j.size, j.limit = seq, 0, size
	return nil
}

// append writes r as one record, synced at SyncEveryCommit, and applies it to the
// state. On a write error the segment is cut back to its last whole record
// and nothing is applied; after a failed sync the journal refuses every
// later write (the kernel may have dropped the unsynced pages, so what the
// file holds is no longer known) until the process restarts and replays.
// wmu must be held.
func (j *Journal) append(r *logRecord) (int64, error) {
	if j.closed {
		return 0, errClosed
	}
	if j.broken != nil {
		return 0, j.broken
	}
	frame := j.enc.frame(r)
	if _, err := j.file.WriteAt(frame, j.size); err != nil {
		if terr := j.file.Truncate(j.size); terr != nil {
			j.broken = fmt.Errorf("click log %s: write failed and the partial record could not be removed (%w): restart the node: %w", j.dir, terr, err)
		}
		return 0, fmt.Errorf("click log %s: write: %w", j.dir, err)
	}
	if j.sync == SyncEveryCommit {
		if err := j.file.Sync(); err != nil {
			j.broken = fmt.Errorf("click log %s: fdatasync failed, no further click is acknowledged until the node restarts: %w", j.dir, err)
			return 0, j.broken
		}
	} else {
		j.unsynced.Store(true)
	}
	j.size += int64(len(frame))
	if cap(j.enc.buf) > maxKeptBuffer {
		// A burst's record (a million links dropped at once) must not pin
		// its buffer for the life of the process.
		j.enc.buf = nil
	}
	if cap(j.enc.idx) > maxKeptBuffer/8 {
		j.enc.idx = nil // as the buffer
	}
	j.mu.Lock()
	purged := j.st.apply(r)
	j.mu.Unlock()
	r.dropLarge()
	switch {
	case j.size >= j.limit:
		j.rotate()
	case j.size >= j.limit/4*3:
		j.askSpare()
		j.hurrySpare()
	case j.size >= j.limit/2:
		j.askSpare()
	}
	return purged, nil
}

// rotate closes the full segment and opens the next; the compactor folds
// the closed one into a snapshot. wmu must be held.
func (j *Journal) rotate() {
	// At SyncWriteOnly too: only the newest segment may then end in a torn
	// record, which is what Open tolerates. Cut to its last record first
	// (the rest is preallocated zeros), synced with it, so that a closed
	// segment is whole records only.
	err := j.file.Truncate(j.size)
	if err == nil {
		err = j.file.Sync()
	}
	if err == nil {
		err = j.closeFile()
	}
	if err == nil {
		err = j.openSegment(j.seq + 1)
	}
	if err != nil {
		j.broken = fmt.Errorf("click log %s: start a new segment: %w", j.dir, err)
		return
	}
	select {
	case j.compact <- struct{}{}:
	default:
	}
}

// runCompactor folds closed segments into a snapshot, off the commit path:
// it reads the files, not the live state, so commits never wait for it.
func (j *Journal) runCompactor() {
	defer close(j.compactDone)
	for range j.compact {
		if j.noCompact {
			continue
		}
		if !j.worthCompacting() {
			continue
		}
		if err := j.compactOnce(); err != nil {
			j.log.Error("click log compaction failed; closed segments stay on disk until the next attempt",
				slog.String("event", "clicklog_compaction_failed"), slog.String("dir", j.dir), slog.String("error", err.Error()))
		}
	}
}

// worthCompacting reports whether the closed segments hold at least as
// many bytes as the last snapshot (and at least minCompact): a snapshot
// rewrites the whole state, so compacting at every rotation of the small
// first segments (prealloc.go) would write a large state many times over
// in a busy node's first minutes. This way the bytes written by compaction
// stay within those of the log itself.
func (j *Journal) worthCompacting() bool {
	j.wmu.Lock()
	cur := j.seq
	j.wmu.Unlock()
	segs, snaps, err := logFiles(j.dir)
	if err != nil {
		return true // compactOnce reports it
	}
	var base uint64
	var snapSize int64
	if len(snaps) > 0 {
		base = snaps[len(snaps)-1]
		if st, err := os.Stat(filepath.Join(j.dir, snapshotName(base))); err == nil {
			snapSize = st.Size()
		}
	}
	var closed int64
	for _, s := range segs {
		if s < base || s >= cur {
			continue
		}
		st, err := os.Stat(filepath.Join(j.dir, segmentName(s)))
		if err != nil {
			return true
		}
		closed += st.Size()
	}
	return closed >= max(snapSize, min(minCompact, j.segmentSize))
}

// minCompact: closed segments under this many bytes wait for more.
const minCompact = 1 << 20

// compactOnce writes the snapshot of the open segment's sequence from the
// last snapshot and every closed segment, then removes them.
//
// The state it rebuilds is as large as the live one, and a burst of one-off
// links makes both large at once: so it rebuilds the links a part at a time
// (link id modulo the parts), each part's state written and let go before
// the next part is read, at the cost of reading the files once per part
// (docs/performance.md). A link's records are its own: its part's
// state holds exactly what the whole state holds of it.
func (j *Journal) compactOnce() error {
	j.compactMu.Lock()
	defer j.compactMu.Unlock()
	j.wmu.Lock()
	cur := j.seq
	j.wmu.Unlock()
	segs, snaps, err := logFiles(j.dir)
	if err != nil {
		return err
	}
	var base uint64
	var files []string
	if len(snaps) > 0 {
		base = snaps[len(snaps)-1]
		if base >= cur {
			return nil
		}
		files = append(files, filepath.Join(j.dir, snapshotName(base)))
	}
	var done []uint64
	for _, s := range segs {
		if s < base || s >= cur {
			continue
		}
		files = append(files, filepath.Join(j.dir, segmentName(s)))
		done = append(done, s)
	}
	if len(done) == 0 {
		return nil
	}
	parts := j.compactParts()
	// Paced as a spare's fill is, until Close (spareStop) wants it done.
	err = writeSnapshotParts(j.dir, cur, parts, j.spareStop, func(p int) (*logState, error) {
		st := newLogState()
		var dec decoder
		var rec logRecord
		for _, f := range files {
			if _, err := replayPart(f, st, &dec, &rec, parts, p); err != nil {
				return nil, err
			}
		}
		if j.compactHook != nil {
			j.compactHook(st.held)
		}
		return st, nil
	})
	if err != nil {
		return err
	}
	for _, s := range done {
		os.Remove(filepath.Join(j.dir, segmentName(s)))
	}
	for _, s := range snaps {
		os.Remove(filepath.Join(j.dir, snapshotName(s)))
	}
	return syncDir(j.dir)
}

// defaultCompactPartLinks is the most links the compactor rebuilds at once
// (some 20 MB of state for one-off links); maxCompactParts bounds the reads
// of the files a compaction makes.
const (
	defaultCompactPartLinks = 50_000
	maxCompactParts         = 16
)

// compactParts is how many parts the compactor rebuilds the state in: from
// the links the live state holds, which the rebuilt one holds too.
func (j *Journal) compactParts() int {
	j.mu.RLock()
	links := len(j.st.links)
	j.mu.RUnlock()
	per := j.compactPartLinks
	if per <= 0 {
		per = defaultCompactPartLinks
	}
	return min(max(1, (links+per-1)/per), maxCompactParts)
}

// Probe checks that the journal takes a write: an empty record, synced like
// a commit. linkcounter's Counter.Ready calls it for /readyz.
func (j *Journal) Probe(ctx context.Context) error {
	j.wmu.Lock()
	defer j.wmu.Unlock()
	j.rec.reuse()
	if _, err := j.append(&j.rec); err != nil {
		return fmt.Errorf("journal %s: write probe: %w", j.dir, err)
	}
	return nil
}

// Path returns the click log's directory.
func (j *Journal) Path() string { return j.dir }

// Close closes the journal. Stop the Counter using it first.
func (j *Journal) Close() error {
	j.wmu.Lock()
	if j.closed {
		j.wmu.Unlock()
		return nil
	}
	j.closed = true
	var errs []error
	if j.file != nil {
		if j.broken == nil {
			// Cut to its records: the next Open finds the file exact.
			errs = append(errs, j.file.Truncate(j.size), j.file.Sync())
		}
		errs = append(errs, j.closeFile())
	}
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
	if j.lock != nil {
		errs = append(errs, unlockFile(j.lock))
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("close journal %s: %w", j.dataDir, err)
	}
	return nil
}

// NodeID returns the node's id. override (the --node-id flag) wins and is
// stored; otherwise the stored id is used, or one is generated and stored.
//
// The journal's counts are absolute counts of one node id. Changing the id
// therefore discards the (fully flushed) rows, so the new id starts from zero
// instead of claiming the old id's clicks a second time; it is refused while
// clicks of the old id are still unflushed.
//
// A journal that starts counting for an id it did not count for before (a
// fresh journal with --node-id, or a changed id) does not know what that id
// already has in the rollup: it is marked to be seeded from the rollup
// before its first flush (Seed, and docs/adr/014-click-log.md). A generated id
// is new everywhere and needs no seed. needsSeed reports the mark, which
// stays until the seed is committed.
func (j *Journal) NodeID(ctx context.Context, override string) (id string, needsSeed bool, err error) {
	j.wmu.Lock()
	defer j.wmu.Unlock()
	stored := j.st.nodeID
	r := &j.rec
	r.reuse()
	switch {
	case override != "" && override != stored:
		if stored != "" {
			var unflushed int64
			for _, e := range j.st.links {
				for h := range e.all() {
					for _, m := range h.mins {
						unflushed += m.n - m.flushed
					}
				}
			}
			if unflushed > 0 {
				return "", false, fmt.Errorf("node id: journal %s holds %d unflushed clicks of node %q: start once with that id (or none) so they are flushed before changing it to %q",
					j.dir, unflushed, stored, override)
			}
			r.reset = true
		}
		r.meta, r.nodeID, r.seedPending = true, override, true
	case stored == "":
		var b [8]byte
		rand.Read(b[:])
		r.meta, r.nodeID, r.seedPending = true, "node-"+hex.EncodeToString(b[:]), j.st.seedPending
	default:
		return stored, j.st.seedPending, nil
	}
	if _, err := j.append(r); err != nil {
		return "", false, fmt.Errorf("node id: store: %w", err)
	}
	return r.nodeID, r.seedPending, nil
}

// PurgedBefore returns the latest purge horizon (unix seconds; 0: none):
// no row of an earlier bucket is left in the journal, whether or not it
// was ever there.
func (j *Journal) PurgedBefore(context.Context) (int64, error) {
	j.mu.RLock()
	defer j.mu.RUnlock()
	return j.st.purgedBefore, nil
}

// MinBucket returns the oldest bucket in the journal (unix seconds), and
// false when the journal holds no row.
func (j *Journal) MinBucket(context.Context) (int64, bool, error) {
	j.mu.RLock()
	defer j.mu.RUnlock()
	var oldest int64
	found := false
	for _, e := range j.st.links {
		for h := range e.all() {
			if len(h.mins) > 0 && (!found || h.mins[0].bucket < oldest) {
				oldest, found = h.mins[0].bucket, true
			}
		}
	}
	return oldest, found, nil
}

// Seed adds the rollup's counts of this journal's node id to the journal,
// in one record that also clears the seed mark: each row's n and flushed
// both grow by the rollup's count, creating the row if needed. It is right
// only while nothing of the fresh count has been flushed (every journal
// row's clicks are new, every rollup count old): the counter seeds before
// its first flush. Seeded values count towards MaxDimValues like any other.
func (j *Journal) Seed(ctx context.Context, rows []linkforge.RollupRow, dims []linkforge.DimRow) error {
	j.wmu.Lock()
	defer j.wmu.Unlock()
	r := &j.rec
	r.reuse()
	r.meta, r.nodeID, r.seedPending = true, j.st.nodeID, false
	// Marks are absolute: the current flushed count plus the seed, over
	// coalesced keys so that a key listed twice is added twice.
	mins := make(map[incKey][2]int64, len(rows))
	for _, row := range rows {
		k := incKey{row.LinkID, row.Bucket.Unix()}
		m := mins[k]
		mins[k] = [2]int64{m[0] + row.Count, m[1] + row.Automated}
	}
	for k, m := range mins {
		n := m[0]
		var flushed int64
		if h := j.st.hourOf(k.linkID, hourStart(k.bucket), false); h != nil {
			if c := h.min(k.bucket, false); c != nil {
				flushed = c.flushed
			}
		}
		r.incs = append(r.incs, recRow{link: k.linkID, at: k.bucket, v: n, a: m[1]})
		r.marks = append(r.marks, recRow{link: k.linkID, at: k.bucket, v: flushed + n})
	}
	ds := make(map[dimKey]int64, len(dims))
	for _, d := range dims {
		if d.Dim < publicDims {
			ds[dimKey{d.LinkID, d.Hour.Unix(), cellOf(d.Dim, d.Automated), d.Value}] += d.Count
		}
	}
	for k, n := range ds {
		var flushed int64
		if c, ok := j.st.dimOf(j.st.hourOf(k.linkID, k.hour, false), k.dim, k.value); ok {
			flushed = c.flushed
		}
		r.dims = append(r.dims, recDim{link: k.linkID, hour: k.hour, dim: k.dim, value: k.value, v: n})
		r.dimMarks = append(r.dimMarks, recDim{link: k.linkID, hour: k.hour, dim: k.dim, value: k.value, v: flushed + n})
	}
	if _, err := j.append(r); err != nil {
		return fmt.Errorf("journal seed: %w", err)
	}
	return nil
}

// Pending returns every link with unflushed clicks, by link id: start-up
// reconciliation.
func (j *Journal) Pending(context.Context) ([]PendingLink, error) {
	j.mu.RLock()
	defer j.mu.RUnlock()
	var out []PendingLink
	for link, e := range j.st.links {
		p := PendingLink{LinkID: link}
		var oldest int64
		for h := range e.all() {
			for _, m := range h.mins {
				if m.n > m.flushed {
					if p.Unflushed == 0 || m.bucket < oldest {
						oldest = m.bucket
					}
					p.Unflushed += m.n - m.flushed
				}
			}
		}
		if p.Unflushed > 0 {
			p.Oldest = time.Unix(oldest, 0).UTC()
			out = append(out, p)
		}
	}
	slices.SortFunc(out, func(a, b PendingLink) int { return cmp.Compare(a.LinkID, b.LinkID) })
	return out, nil
}

// Unflushed returns the committed unflushed rows of the given links, ordered
// by link and bucket, and their unflushed dimension rows, as of one state:
// the dimension rows hold exactly the clicks of the minute rows. A flush
// sends these rows (or those of the hours it writes).
func (j *Journal) Unflushed(_ context.Context, linkIDs []int64) ([]Row, []DimRow, error) {
	ids := slices.Clone(linkIDs)
	slices.Sort(ids)
	j.mu.RLock()
	defer j.mu.RUnlock()
	var out []Row
	var dout []DimRow
	for i, link := range ids {
		if i > 0 && ids[i-1] == link {
			continue
		}
		for h := range j.st.hoursOf(link) {
			for _, m := range h.mins {
				if m.n > m.flushed {
					out = append(out, Row{LinkID: link, Bucket: m.bucket, N: m.n, Flushed: m.flushed, Automated: m.auto})
				}
			}
			for i := range h.ncells() {
				if d := j.st.cell(h, i); d.n > d.flushed {
					dout = append(dout, DimRow{LinkID: link, Hour: h.hour, Dim: d.dim.dim(), Automated: d.dim.automated(), Value: d.value, N: d.n, Flushed: d.flushed})
				}
			}
		}
	}
	if len(out) == 0 {
		return nil, nil, nil
	}
	return out, dout, nil
}

// Visits returns the unmarked visits of the given links that have any,
// copied, by link id.
func (j *Journal) Visits(linkIDs []int64) []LinkVisits {
	ids := slices.Clone(linkIDs)
	slices.Sort(ids)
	j.mu.RLock()
	defer j.mu.RUnlock()
	var out []LinkVisits
	for i, link := range ids {
		if i > 0 && ids[i-1] == link {
			continue
		}
		if e := j.st.links[link]; e != nil && e.visits != nil && len(e.visits.list) > 0 {
			v := e.visits
			out = append(out, LinkVisits{LinkID: link, Seq: v.flushed + int64(len(v.list)), Visits: slices.Clone(v.list)})
		}
	}
	return out
}

// Commit writes one group commit as one record: click increments (each
// inc's N is set to the row's new absolute count) and their hours'
// dimension increments, flush marks of both kinds (a mark's N is the count
// the rollup now holds), the housekeeping purge of flushed rows of buckets
// before purgeBefore (unix seconds; 0: none), and of flushed dimension rows
// of hours ended by then, and the drops of links whose actors were evicted:
// their rows leave memory if every one is flushed once the record's other
// parts are applied (docs/adr/014-click-log.md, "Memory"). It returns the
// number of purged rows. A commit is durable when Commit returns (at
// SyncCommit, fdatasynced).
func (j *Journal) Commit(ctx context.Context, incs []*Increment, marks []Row, dimMarks []DimRow, purgeBefore int64, drops []int64) (int64, error) {
	return j.CommitVisits(ctx, incs, marks, dimMarks, nil, purgeBefore, drops)
}

// CommitVisits is Commit with visit marks: the first Seq visits of each
// mark's link are in stored sketches and leave the journal. The
// increments' visits are journaled with their clicks, by Commit as well.
func (j *Journal) CommitVisits(_ context.Context, incs []*Increment, marks []Row, dimMarks []DimRow, visitMarks []VisitMark, purgeBefore int64, drops []int64) (int64, error) {
	j.wmu.Lock()
	defer j.wmu.Unlock()
	r := &j.rec
	r.reuse()
	for _, in := range incs {
		r.incs = append(r.incs, recRow{link: in.LinkID, at: in.Bucket, v: in.Add, a: in.automated()})
		for _, h := range in.Visits {
			r.visits = append(r.visits, recVisit{link: in.LinkID, day: dayStart(in.Bucket), hash: h})
		}
	}
	for _, m := range visitMarks {
		r.visitMarks = append(r.visitMarks, recRow{link: m.LinkID, v: m.Seq})
	}
	j.boundDims(r, incs)
	for _, m := range marks {
		r.marks = append(r.marks, recRow{link: m.LinkID, at: m.Bucket, v: m.N})
	}
	for _, m := range dimMarks {
		r.dimMarks = append(r.dimMarks, recDim{link: m.LinkID, hour: m.Hour, dim: cellOf(m.Dim, m.Automated), value: m.Value, v: m.N})
	}
	r.purge = purgeBefore
	if len(drops) > 0 {
		r.drops = append(r.drops, drops...)
		slices.Sort(r.drops) // smaller deltas
	}
	purged, err := j.append(r)
	if err != nil {
		return 0, fmt.Errorf("journal commit: %w", err)
	}
	if len(incs) > 0 {
		j.mu.RLock()
		for _, in := range incs {
			// A row just incremented holds unflushed clicks: the record's
			// purge cannot have dropped it.
			if h := j.st.hourOf(in.LinkID, hourStart(in.Bucket), false); h != nil {
				if m := h.min(in.Bucket, false); m != nil {
					in.N, in.Human = m.n, max(0, m.n-m.auto)
				}
			}
		}
		j.mu.RUnlock()
	}
	return purged, nil
}

// boundDims adds a commit's dimension increments to r, bounded by
// MaxDimValues: a value the journal does not hold yet for its (link, hour,
// dim) is kept only while fewer than MaxDimValues values it bounds are
// held (every value but MoreValue); past that its clicks go to MoreValue.
// Each (dimension, traffic) is bounded on its own. New values of one commit are taken in value order, so the
// outcome depends on the journal and the clicks, not on map order. The
// record carries the decided values: replay never decides again. wmu must
// be held.
func (j *Journal) boundDims(r *logRecord, incs []*Increment) {
	var fresh []recDim
	for _, in := range incs {
		hour := hourStart(in.Bucket)
		h := j.st.hourOf(in.LinkID, hour, false)
		for k, c := range in.Dims {
			d := recDim{link: in.LinkID, hour: hour, dim: cellOf(c.Dim, c.Automated), value: c.Value, v: c.N}
			if c.Value != linkforge.MoreValue && !j.st.hasDimAt(h, k, d.dim, c.Value) {
				fresh = append(fresh, d)
				continue
			}
			r.dims = append(r.dims, d)
		}
	}
	if len(fresh) == 0 {
		return
	}
	slices.SortFunc(fresh, func(a, b recDim) int {
		return cmp.Or(cmp.Compare(a.link, b.link), cmp.Compare(a.hour, b.hour),
			cmp.Compare(a.dim, b.dim), strings.Compare(a.value, b.value))
	})
	held := 0
	decided := ""
	for i, d := range fresh {
		sameGroup := i > 0 && d.link == fresh[i-1].link && d.hour == fresh[i-1].hour && d.dim == fresh[i-1].dim
		switch {
		case !sameGroup:
			held = 0
			if h := j.st.hourOf(d.link, d.hour, false); h != nil {
				held = j.st.valuesOf(h, d.dim)
			}
		case d.value == fresh[i-1].value:
			// The same new value from another minute of the hour: as
			// decided for it.
			d.value = decided
			r.dims = append(r.dims, d)
			continue
		}
		if held < MaxDimValues {
			held++
			decided = d.value
		} else {
			decided = linkforge.MoreValue // a second row of MoreValue adds up in apply
		}
		d.value = decided
		r.dims = append(r.dims, d)
	}
}

// DropFlushed drops from memory every link whose rows are all flushed:
// at start-up, the links replayed from the log that no actor holds.
func (j *Journal) DropFlushed(context.Context) error {
	j.wmu.Lock()
	defer j.wmu.Unlock()
	found := false
	for _, e := range j.st.links {
		if e.hours != nil && e.allFlushed() {
			found = true
			break
		}
	}
	if !found {
		return nil
	}
	r := &j.rec
	r.reuse()
	r.dropFlushed = true
	if _, err := j.append(r); err != nil {
		return fmt.Errorf("journal: drop flushed links: %w", err)
	}
	return nil
}

// ToSeed returns the hours of the given links whose rows restarted after a
// drop and wait for their seed, by link and hour.
func (j *Journal) ToSeed(linkIDs []int64) []LinkHour {
	j.mu.RLock()
	defer j.mu.RUnlock()
	var out []LinkHour
	for _, link := range linkIDs {
		for h := range j.st.hoursOf(link) {
			if h.seeding() {
				out = append(out, LinkHour{link, h.hour})
			}
		}
	}
	slices.SortFunc(out, func(a, b LinkHour) int { return cmp.Or(cmp.Compare(a.LinkID, b.LinkID), cmp.Compare(a.Hour, b.Hour)) })
	return slices.Compact(out)
}

// SeedHours adds this node's rollup rows of the given (link, hour)s (rows:
// their minutes; dims: their click_dims rows) to those hours' restarted
// rows, in one record that also clears their seed marks: each row's n and
// flushed grow by the rollup's count, as the node seed does (Seed). Right
// while nothing of the restarted hour was flushed, which the seed mark
// guarantees (linkcounter's Counter.seedHours runs before the flush reads
// the rows).
//
// The bound counts the seeded values: the rollup's values of a dimension
// are kept (the store holds them), then the hour's new values in value
// order while fewer than MaxDimValues are held; the clicks of the others,
// counted while the hour waited for its seed, move to MoreValue (their
// rows are unflushed, so nothing the store holds changes). Each
// (dimension, traffic) is bounded on its own.
func (j *Journal) SeedHours(_ context.Context, keys []LinkHour, rows []linkforge.RollupRow, dims []linkforge.DimRow) error {
	j.wmu.Lock()
	defer j.wmu.Unlock()
	r := &j.rec
	r.reuse()
	want := make(map[LinkHour]*hourRows, len(keys))
	for _, k := range keys {
		if h := j.st.hourOf(k.LinkID, k.Hour, false); h != nil && h.seeding() {
			want[k] = h
		}
	}
	if len(want) == 0 {
		return nil
	}
	mins := make(map[incKey][2]int64, len(rows))
	for _, row := range rows {
		k := incKey{row.LinkID, row.Bucket.Unix()}
		if want[LinkHour{k.linkID, hourStart(k.bucket)}] != nil {
			m := mins[k]
			mins[k] = [2]int64{m[0] + row.Count, m[1] + row.Automated}
		}
	}
	for _, k := range slices.SortedFunc(maps.Keys(mins), func(a, b incKey) int {
		return cmp.Or(cmp.Compare(a.linkID, b.linkID), cmp.Compare(a.bucket, b.bucket))
	}) {
		n := mins[k][0]
		var flushed int64
		if c := want[LinkHour{k.linkID, hourStart(k.bucket)}].min(k.bucket, false); c != nil {
			flushed = c.flushed
		}
		r.incs = append(r.incs, recRow{link: k.linkID, at: k.bucket, v: n, a: mins[k][1]})
		r.marks = append(r.marks, recRow{link: k.linkID, at: k.bucket, v: flushed + n})
	}
	ds := make(map[dimKey]int64, len(dims))
	for _, d := range dims {
		if d.Dim >= publicDims {
			continue
		}
		k := dimKey{d.LinkID, d.Hour.Unix(), cellOf(d.Dim, d.Automated), d.Value}
		if want[LinkHour{k.linkID, k.hour}] != nil {
			ds[k] += d.Count
		}
	}
	// The rollup's values per (link, hour, dim) that the bound counts
	// (all but MoreValue).
	type group struct {
		linkID, hour int64
		dim          cellDim
	}
	held := make(map[group]map[string]bool)
	for _, k := range slices.SortedFunc(maps.Keys(ds), func(a, b dimKey) int {
		return cmp.Or(cmp.Compare(a.linkID, b.linkID), cmp.Compare(a.hour, b.hour),
			cmp.Compare(a.dim, b.dim), strings.Compare(a.value, b.value))
	}) {
		n := ds[k]
		h := want[LinkHour{k.linkID, k.hour}]
		var flushed int64
		if c, ok := j.st.dimOf(h, k.dim, k.value); ok {
			flushed = c.flushed
		}
		r.dims = append(r.dims, recDim{link: k.linkID, hour: k.hour, dim: k.dim, value: k.value, v: n})
		r.dimMarks = append(r.dimMarks, recDim{link: k.linkID, hour: k.hour, dim: k.dim, value: k.value, v: flushed + n})
		if k.value != linkforge.MoreValue {
			g := group{k.linkID, k.hour, k.dim}
			if held[g] == nil {
				held[g] = make(map[string]bool)
			}
			held[g][k.value] = true
		}
	}
	for _, k := range slices.SortedFunc(maps.Keys(want), func(a, b LinkHour) int {
		return cmp.Or(cmp.Compare(a.LinkID, b.LinkID), cmp.Compare(a.Hour, b.Hour))
	}) {
		h := want[k]
		for i := range numCellDims {
			d := cellAt(i)
			seeded := held[group{k.LinkID, k.Hour, d}]
			var fresh []dimCell
			for i := range h.ncells() {
				c := j.st.cell(h, i)
				if c.dim == d && c.value != linkforge.MoreValue && !seeded[c.value] && c.flushed == 0 {
					fresh = append(fresh, c)
				}
			}
			slices.SortFunc(fresh, func(a, b dimCell) int { return strings.Compare(a.value, b.value) })
			for i, c := range fresh {
				if len(seeded)+i < MaxDimValues {
					continue
				}
				r.dims = append(r.dims,
					recDim{link: k.LinkID, hour: k.Hour, dim: d, value: c.value, v: -c.n},
					recDim{link: k.LinkID, hour: k.Hour, dim: d, value: linkforge.MoreValue, v: c.n})
			}
		}
		r.hourMarks = append(r.hourMarks, recRow{link: k.LinkID, at: k.Hour, v: hourSeeded})
	}
	if _, err := j.append(r); err != nil {
		return fmt.Errorf("journal seed of %d link hours: %w", len(want), err)
	}
	return nil
}
