package linkcounter

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	_ "modernc.org/sqlite" // the journal's driver: pure Go, no cgo

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/internal/fileperm"
)

// Synchronous is the journal's SQLite synchronous setting. It decides what a
// power loss (not a process crash) can cost: see docs/adr/006-journal.md.
type Synchronous string

// The settings worth choosing between in WAL mode.
const (
	// SyncFull fsyncs the write-ahead log at every commit: an acknowledged
	// click survives a power loss. Group commit pays the fsync once per batch
	// of clicks, not once per click. The default.
	SyncFull Synchronous = "FULL"
	// SyncNormal fsyncs only at checkpoints: a process crash loses nothing,
	// a power loss can lose the commits since the last checkpoint.
	SyncNormal Synchronous = "NORMAL"
)

// JournalOption configures Open.
type JournalOption func(*journalOptions)

type journalOptions struct {
	sync Synchronous
}

// WithSynchronous sets the synchronous setting (default SyncFull).
func WithSynchronous(s Synchronous) JournalOption {
	return func(o *journalOptions) { o.sync = s }
}

// journalVersion is the schema version kept in PRAGMA user_version, so that
// a later release can migrate a journal written by this one.
//
// Version 2 added the dims table. A version 1 journal gets it on open, with
// its clicks rows' counts under each dimension's default value, so that the
// journal's hours add up from the start (docs/adr/009-click-dimensions.md).
const journalVersion = 2

const journalSchema = `
CREATE TABLE IF NOT EXISTS meta (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
) WITHOUT ROWID;

-- One row per (link, minute) this node has counted. n is the absolute count
-- acknowledged so far; flushed is the absolute count already written to the
-- main store's rollup. n > flushed means clicks wait for a flush.
CREATE TABLE IF NOT EXISTS clicks (
    link_id INTEGER NOT NULL,
    bucket  INTEGER NOT NULL, -- unix seconds of the UTC minute start
    n       INTEGER NOT NULL CHECK (n >= 0),
    flushed INTEGER NOT NULL DEFAULT 0 CHECK (flushed >= 0 AND flushed <= n),
    PRIMARY KEY (link_id, bucket)
) WITHOUT ROWID;

-- One row per (link, hour, dimension, value) this node has counted, with n
-- and flushed as in clicks. They change in the same transactions as the
-- clicks rows, so for each (link, hour) and dimension the values' n sum to
-- the n of the hour's clicks rows, and their flushed to the rows' flushed
-- (rows already purged included). dim is linkforge.Dimension.
CREATE TABLE IF NOT EXISTS dims (
    link_id INTEGER NOT NULL,
    hour    INTEGER NOT NULL, -- unix seconds of the UTC hour start
    dim     INTEGER NOT NULL,
    value   TEXT    NOT NULL,
    n       INTEGER NOT NULL CHECK (n >= 0),
    flushed INTEGER NOT NULL DEFAULT 0 CHECK (flushed >= 0 AND flushed <= n),
    PRIMARY KEY (link_id, hour, dim, value)
) WITHOUT ROWID;
`

// MaxDimValues bounds the distinct values a node's journal keeps per link,
// dimension and hour; further new values are counted under
// linkforge.MoreValue (docs/adr/009-click-dimensions.md).
const MaxDimValues = 64

// Journal is a node's click journal: an embedded SQLite file in WAL mode
// holding, per (link, minute bucket), the absolute click count and the count
// already flushed to the main store, plus the node's identity. A click is
// acknowledged only once the journal commit that contains it has returned,
// so the journal, not memory, is the truth after a crash.
//
// One Journal belongs to one process: Open takes an exclusive lock on a
// sidecar file, because two processes counting into one journal would write
// the same node's absolute counts twice over.
type Journal struct {
	path string
	sync Synchronous
	lock *os.File

	// w is the one writer connection (SQLite has one writer; the counter's
	// committer goroutine is its only user). r serves reads, which WAL lets
	// run beside the writer.
	w, r *sql.DB

	// inc[i] adds incSizes[i] (link, bucket) rows in one statement (see
	// applyIncrements); mark marks rows flushed.
	inc     [len(incSizes)]*sql.Stmt
	mark    *sql.Stmt
	dimInc  [len(incSizes)]*sql.Stmt
	dimMark *sql.Stmt
	// heldGen invalidates every actor's held counts (see applyDims) when
	// it moves: a seed wrote values behind the committer, or a commit
	// failed after counting values it did not keep.
	heldGen atomic.Int64
}

// incSizes are the row counts of the prepared increment statements, largest
// first. A commit's rows are cut greedily into chunks of these sizes, so a
// commit of k rows runs about k/64 + 3 statements, each with plain integer
// arguments: no statement is built or parsed per commit, and no JSON is
// encoded or decoded.
var incSizes = [...]int{64, 16, 4, 1}

// Open opens (creating if needed) the journal at path.
func Open(ctx context.Context, path string, opts ...JournalOption) (*Journal, error) {
	o := journalOptions{sync: SyncFull}
	for _, opt := range opts {
		opt(&o)
	}
	if o.sync != SyncFull && o.sync != SyncNormal {
		return nil, fmt.Errorf("open journal %s: unknown synchronous setting %q", path, o.sync)
	}
	if path == "" {
		return nil, errors.New("open journal: empty path")
	}
	path, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("open journal: %w", err)
	}
	lock, err := lockFile(path + ".lock")
	if err != nil {
		return nil, fmt.Errorf("open journal %s: %w", path, err)
	}
	// The journal and its -wal and -shm files are the user's only.
	if err := fileperm.PrepareSQLite(path); err != nil {
		unlockFile(lock)
		return nil, fmt.Errorf("open journal: %w", err)
	}
	j := &Journal{path: path, sync: o.sync, lock: lock}
	if err := j.open(ctx); err != nil {
		j.Close()
		return nil, fmt.Errorf("open journal %s: %w", path, err)
	}
	return j, nil
}

func (j *Journal) open(ctx context.Context) error {
	w, err := sql.Open("sqlite", j.dsn(true))
	if err != nil {
		return err
	}
	w.SetMaxOpenConns(1)
	w.SetMaxIdleConns(1)
	w.SetConnMaxIdleTime(0)
	w.SetConnMaxLifetime(0)
	j.w = w

	var version int
	if err := w.QueryRowContext(ctx, "PRAGMA user_version").Scan(&version); err != nil {
		return fmt.Errorf("read schema version: %w", err)
	}
	if version > journalVersion {
		return fmt.Errorf("journal schema version %d is newer than this binary's %d", version, journalVersion)
	}
	if _, err := w.ExecContext(ctx, journalSchema); err != nil {
		return fmt.Errorf("create schema: %w", err)
	}
	if version == 1 {
		// Clicks counted before dimensions existed are the defaults' in
		// every dimension.
		for d := range linkforge.NumDimensions {
			if _, err := w.ExecContext(ctx, `INSERT INTO dims (link_id, hour, dim, value, n, flushed)
				SELECT link_id, bucket / 3600 * 3600, ?, ?, SUM(n), SUM(flushed) FROM clicks
				GROUP BY link_id, bucket / 3600 ON CONFLICT DO NOTHING`, int(d), d.Default()); err != nil {
				return fmt.Errorf("upgrade schema: %w", err)
			}
		}
	}
	if _, err := w.ExecContext(ctx, fmt.Sprintf("PRAGMA user_version = %d", journalVersion)); err != nil {
		return fmt.Errorf("set schema version: %w", err)
	}

	r, err := sql.Open("sqlite", j.dsn(false))
	if err != nil {
		return err
	}
	r.SetMaxOpenConns(4)
	r.SetMaxIdleConns(4)
	j.r = r

	// Multi-row VALUES lists of a few fixed sizes, with RETURNING to hand
	// the new absolute counts to the live deltas without a second read. This
	// replaced one statement taking the rows as a JSON array: SQLite's JSON
	// functions decoding it were a quarter of the committer's CPU
	// (docs/benchmarks.md).
	for i, size := range incSizes {
		if j.inc[i], err = w.PrepareContext(ctx, incrementSQL(size)); err != nil {
			return fmt.Errorf("prepare increment of %d rows: %w", size, err)
		}
	}
	// flushed only grows: replaying an older mark cannot undo a newer one.
	if j.mark, err = w.PrepareContext(ctx, `
		UPDATE clicks SET flushed = m.value ->> 2
		FROM json_each(?) AS m
		WHERE clicks.link_id = m.value ->> 0 AND clicks.bucket = m.value ->> 1
		  AND clicks.flushed < m.value ->> 2`); err != nil {
		return fmt.Errorf("prepare mark: %w", err)
	}
	for i, size := range incSizes {
		if j.dimInc[i], err = w.PrepareContext(ctx, dimIncrementSQL(size)); err != nil {
			return fmt.Errorf("prepare dimension increment of %d rows: %w", size, err)
		}
	}
	if j.dimMark, err = w.PrepareContext(ctx, `
		UPDATE dims SET flushed = m.value ->> 4
		FROM json_each(?) AS m
		WHERE dims.link_id = m.value ->> 0 AND dims.hour = m.value ->> 1
		  AND dims.dim = m.value ->> 2 AND dims.value = m.value ->> 3
		  AND dims.flushed < m.value ->> 4`); err != nil {
		return fmt.Errorf("prepare dimension mark: %w", err)
	}
	return nil
}

// dsn returns the driver's connection string: a file: URI, so that a path
// holding '?' or '#' is escaped rather than cut short.
//
//   - WAL: readers (flush reads) never wait for the committer, and a commit
//     appends to the log instead of rewriting pages.
//   - synchronous: see Synchronous and the ADR.
//   - _txlock=immediate (writer): a transaction takes the write lock at
//     BEGIN, so it cannot fail half-way with SQLITE_BUSY.
//   - busy_timeout: a WAL checkpoint may briefly hold a lock.
func (j *Journal) dsn(writer bool) string {
	q := url.Values{}
	q.Add("_pragma", "busy_timeout(10000)")
	q.Add("_pragma", "journal_mode(WAL)")
	q.Add("_pragma", "synchronous("+string(j.sync)+")")
	if writer {
		q.Set("_txlock", "immediate")
	} else {
		q.Add("_pragma", "query_only(1)")
	}
	u := url.URL{Scheme: "file", Path: filepath.ToSlash(j.path), RawQuery: q.Encode()}
	return u.String()
}

// probe checks that the journal takes a write: one small autocommit on the
// writer connection (it waits for a group commit under way, then runs
// alone). Counter.Ready calls it for /readyz.
func (j *Journal) probe(ctx context.Context) error {
	if _, err := j.w.ExecContext(ctx, `INSERT INTO meta (key, value) VALUES ('ready_probe', ?)
		ON CONFLICT (key) DO UPDATE SET value = excluded.value`, strconv.FormatInt(time.Now().UnixNano(), 10)); err != nil {
		return fmt.Errorf("journal %s: write probe: %w", j.path, err)
	}
	return nil
}

// Path returns the journal's file name.
func (j *Journal) Path() string { return j.path }

// Close closes the journal. Stop the Counter using it first.
func (j *Journal) Close() error {
	var errs []error
	for _, s := range append(append(j.inc[:], j.mark, j.dimMark), j.dimInc[:]...) {
		if s != nil {
			errs = append(errs, s.Close())
		}
	}
	for _, db := range []*sql.DB{j.r, j.w} {
		if db != nil {
			errs = append(errs, db.Close())
		}
	}
	if j.lock != nil {
		errs = append(errs, unlockFile(j.lock))
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("close journal %s: %w", j.path, err)
	}
	return nil
}

// nodeID returns the node's id. override (the --node-id flag) wins and is
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
// before its first flush (seed, and docs/adr/006-journal.md). A generated id
// is new everywhere and needs no seed. needsSeed reports the mark, which
// stays until the seed is committed.
func (j *Journal) nodeID(ctx context.Context, override string) (id string, needsSeed bool, err error) {
	tx, err := j.w.BeginTx(ctx, nil)
	if err != nil {
		return "", false, fmt.Errorf("node id: %w", err)
	}
	defer tx.Rollback()

	var stored string
	err = tx.QueryRowContext(ctx, "SELECT value FROM meta WHERE key = 'node_id'").Scan(&stored)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return "", false, fmt.Errorf("node id: read: %w", err)
	}
	var pending int
	if err := tx.QueryRowContext(ctx, "SELECT COUNT(*) FROM meta WHERE key = 'seed_pending'").Scan(&pending); err != nil {
		return "", false, fmt.Errorf("node id: read: %w", err)
	}
	id, needsSeed = stored, pending > 0
	switch {
	case override != "" && override != stored:
		if stored != "" {
			var unflushed int64
			if err := tx.QueryRowContext(ctx,
				"SELECT COALESCE(SUM(n - flushed), 0) FROM clicks").Scan(&unflushed); err != nil {
				return "", false, fmt.Errorf("node id: %w", err)
			}
			if unflushed > 0 {
				return "", false, fmt.Errorf("node id: journal %s holds %d unflushed clicks of node %q: start once with that id (or none) so they are flushed before changing it to %q",
					j.path, unflushed, stored, override)
			}
			if _, err := tx.ExecContext(ctx, "DELETE FROM clicks"); err != nil {
				return "", false, fmt.Errorf("node id: reset journal: %w", err)
			}
			if _, err := tx.ExecContext(ctx, "DELETE FROM dims"); err != nil {
				return "", false, fmt.Errorf("node id: reset journal: %w", err)
			}
		}
		id, needsSeed = override, true
		if _, err := tx.ExecContext(ctx,
			"INSERT INTO meta (key, value) VALUES ('seed_pending', '1') ON CONFLICT (key) DO NOTHING"); err != nil {
			return "", false, fmt.Errorf("node id: store: %w", err)
		}
	case stored == "":
		var b [8]byte
		rand.Read(b[:])
		id = "node-" + hex.EncodeToString(b[:])
	default:
		return stored, needsSeed, nil
	}
	if _, err := tx.ExecContext(ctx,
		"INSERT INTO meta (key, value) VALUES ('node_id', ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
		id); err != nil {
		return "", false, fmt.Errorf("node id: store: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return "", false, fmt.Errorf("node id: commit: %w", err)
	}
	return id, needsSeed, nil
}

// purgedBefore returns the latest purge horizon (unix seconds; 0: none):
// no row of an earlier bucket is left in the journal, whether or not it
// was ever there.
func (j *Journal) purgedBefore(ctx context.Context) (int64, error) {
	var v int64
	err := j.r.QueryRowContext(ctx, "SELECT CAST(value AS INTEGER) FROM meta WHERE key = 'purged_before'").Scan(&v)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return 0, fmt.Errorf("journal purge horizon: %w", err)
	}
	return v, nil
}

// minBucket returns the oldest bucket in the journal (unix seconds), and
// false when the journal holds no row.
func (j *Journal) minBucket(ctx context.Context) (int64, bool, error) {
	var v sql.NullInt64
	if err := j.r.QueryRowContext(ctx, "SELECT MIN(bucket) FROM clicks").Scan(&v); err != nil {
		return 0, false, fmt.Errorf("journal oldest bucket: %w", err)
	}
	return v.Int64, v.Valid, nil
}

// seed adds the rollup's counts of this journal's node id to the journal,
// in one transaction that also clears the seed mark: each row's n and
// flushed both grow by the rollup's count, creating the row if needed. It
// is right only while nothing of the fresh count has been flushed (every
// journal row's clicks are new, every rollup count old): the counter seeds
// before its first flush. It takes the writer connection between two of
// the committer's transactions (the pool has one connection).
func (j *Journal) seed(ctx context.Context, rows []linkforge.RollupRow, dims []linkforge.DimRow) error {
	tx, err := j.w.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("journal seed: %w", err)
	}
	defer tx.Rollback()
	stmt, err := tx.PrepareContext(ctx, `INSERT INTO clicks (link_id, bucket, n, flushed) VALUES (?1, ?2, ?3, ?3)
		ON CONFLICT (link_id, bucket) DO UPDATE SET n = n + excluded.n, flushed = flushed + excluded.flushed`)
	if err != nil {
		return fmt.Errorf("journal seed: %w", err)
	}
	defer stmt.Close()
	for _, r := range rows {
		if _, err := stmt.ExecContext(ctx, r.LinkID, r.Bucket.Unix(), r.Count); err != nil {
			return fmt.Errorf("journal seed: link %d bucket %d: %w", r.LinkID, r.Bucket.Unix(), err)
		}
	}
	// The hours' counts by dimension, by the same rule: the seeded values
	// count towards MaxDimValues like any other.
	dstmt, err := tx.PrepareContext(ctx, `INSERT INTO dims (link_id, hour, dim, value, n, flushed) VALUES (?1, ?2, ?3, ?4, ?5, ?5)
		ON CONFLICT (link_id, hour, dim, value) DO UPDATE SET n = n + excluded.n, flushed = flushed + excluded.flushed`)
	if err != nil {
		return fmt.Errorf("journal seed: %w", err)
	}
	defer dstmt.Close()
	for _, d := range dims {
		if _, err := dstmt.ExecContext(ctx, d.LinkID, d.Hour.Unix(), int(d.Dim), d.Value, d.Count); err != nil {
			return fmt.Errorf("journal seed: link %d hour %d %s: %w", d.LinkID, d.Hour.Unix(), d.Dim, err)
		}
	}
	if _, err := tx.ExecContext(ctx, "DELETE FROM meta WHERE key = 'seed_pending'"); err != nil {
		return fmt.Errorf("journal seed: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("journal seed: %w", err)
	}
	j.heldGen.Add(1) // the seed added values behind the committer's back
	return nil
}

// journalRow is one (link, bucket) row of the journal.
type journalRow struct {
	linkID  int64
	bucket  int64 // unix seconds
	n       int64
	flushed int64
}

// pendingLink sums a link's unflushed journal rows.
type pendingLink struct {
	linkID    int64
	unflushed int64
	oldest    time.Time // start of its oldest unflushed bucket
}

// pending returns every link with unflushed clicks: start-up reconciliation.
func (j *Journal) pending(ctx context.Context) ([]pendingLink, error) {
	rows, err := j.r.QueryContext(ctx, `
		SELECT link_id, SUM(n - flushed), MIN(bucket) FROM clicks
		WHERE n > flushed GROUP BY link_id ORDER BY link_id`)
	if err != nil {
		return nil, fmt.Errorf("journal pending: %w", err)
	}
	defer rows.Close()
	var out []pendingLink
	for rows.Next() {
		var p pendingLink
		var oldest int64
		if err := rows.Scan(&p.linkID, &p.unflushed, &oldest); err != nil {
			return nil, fmt.Errorf("journal pending: %w", err)
		}
		p.oldest = time.Unix(oldest, 0).UTC()
		out = append(out, p)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("journal pending: %w", err)
	}
	return out, nil
}

// dimRow is one (link, hour, dimension, value) row of the journal.
type dimRow struct {
	linkID  int64
	hour    int64 // unix seconds
	dim     linkforge.Dimension
	value   string
	n       int64
	flushed int64
}

// unflushed returns the committed unflushed rows of the given links, ordered
// by link and bucket, and their unflushed dimension rows, read in one
// snapshot: the dimension rows hold exactly the clicks of the minute rows.
// A flush sends these rows (or those of the hours it writes).
func (j *Journal) unflushed(ctx context.Context, linkIDs []int64) ([]journalRow, []dimRow, error) {
	ids, err := json.Marshal(linkIDs)
	if err != nil {
		return nil, nil, fmt.Errorf("journal unflushed: %w", err)
	}
	tx, err := j.r.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, nil, fmt.Errorf("journal unflushed: %w", err)
	}
	defer tx.Rollback()
	rows, err := tx.QueryContext(ctx, `
		SELECT link_id, bucket, n, flushed FROM clicks
		WHERE link_id IN (SELECT value FROM json_each(?)) AND n > flushed
		ORDER BY link_id, bucket`, string(ids))
	if err != nil {
		return nil, nil, fmt.Errorf("journal unflushed: %w", err)
	}
	defer rows.Close()
	var out []journalRow
	for rows.Next() {
		var r journalRow
		if err := rows.Scan(&r.linkID, &r.bucket, &r.n, &r.flushed); err != nil {
			return nil, nil, fmt.Errorf("journal unflushed: %w", err)
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, nil, fmt.Errorf("journal unflushed: %w", err)
	}
	rows.Close()
	if len(out) == 0 {
		return nil, nil, nil
	}
	drows, err := tx.QueryContext(ctx, `
		SELECT link_id, hour, dim, value, n, flushed FROM dims
		WHERE link_id IN (SELECT value FROM json_each(?)) AND n > flushed`, string(ids))
	if err != nil {
		return nil, nil, fmt.Errorf("journal unflushed dimensions: %w", err)
	}
	defer drows.Close()
	var dout []dimRow
	for drows.Next() {
		var d dimRow
		if err := drows.Scan(&d.linkID, &d.hour, &d.dim, &d.value, &d.n, &d.flushed); err != nil {
			return nil, nil, fmt.Errorf("journal unflushed dimensions: %w", err)
		}
		dout = append(dout, d)
	}
	if err := drows.Err(); err != nil {
		return nil, nil, fmt.Errorf("journal unflushed dimensions: %w", err)
	}
	return out, dout, nil
}

// commit applies one group commit in one transaction: click increments
// (each inc's n is set to the row's new absolute count) and their hours'
// dimension increments, flush marks of both kinds, and the housekeeping
// purge of flushed rows of buckets before purgeBefore (unix seconds; 0:
// none), and of flushed dimension rows of hours ended by then. It returns
// the number of purged rows.
func (j *Journal) commit(ctx context.Context, incs []*increment, dims []dimInc, marks []journalRow, dimMarks []dimRow, purgeBefore int64) (_ int64, err error) {
	defer func() {
		if err != nil {
			j.heldGen.Add(1) // counts may include values the rolled back transaction inserted
		}
	}()
	tx, err := j.w.BeginTx(ctx, nil)
	if err != nil {
		return 0, fmt.Errorf("journal commit: begin: %w", err)
	}
	defer tx.Rollback()
	if len(incs) > 0 {
		if err := j.applyIncrements(ctx, tx, incs); err != nil {
			return 0, fmt.Errorf("journal commit: %w", err)
		}
	}
	if len(dims) > 0 {
		if err := j.applyDims(ctx, tx, dims); err != nil {
			return 0, fmt.Errorf("journal commit: %w", err)
		}
	}
	if len(dimMarks) > 0 {
		ms := make([][5]any, len(dimMarks))
		for i, m := range dimMarks {
			ms[i] = [5]any{m.linkID, m.hour, int(m.dim), m.value, m.n}
		}
		buf, err := json.Marshal(ms)
		if err != nil {
			return 0, fmt.Errorf("journal commit: mark %d dimension rows flushed: %w", len(dimMarks), err)
		}
		if _, err := tx.StmtContext(ctx, j.dimMark).ExecContext(ctx, string(buf)); err != nil {
			return 0, fmt.Errorf("journal commit: mark %d dimension rows flushed: %w", len(dimMarks), err)
		}
	}
	if len(marks) > 0 {
		buf := make([]byte, 0, 32*len(marks))
		for i, m := range marks {
			buf = appendTriple(buf, i, m.linkID, m.bucket, m.n)
		}
		if _, err := tx.StmtContext(ctx, j.mark).ExecContext(ctx, string(append(buf, ']'))); err != nil {
			return 0, fmt.Errorf("journal commit: mark %d rows flushed: %w", len(marks), err)
		}
	}
	var purged int64
	if purgeBefore > 0 {
		// Only rows whose every click reached the rollup; a row with n >
		// flushed is kept however old it is.
		res, err := tx.ExecContext(ctx, "DELETE FROM clicks WHERE n = flushed AND bucket < ?", purgeBefore)
		if err != nil {
			return 0, fmt.Errorf("journal commit: purge: %w", err)
		}
		purged, _ = res.RowsAffected()
		// An hour's rows stay until the hour has ended before the horizon:
		// its distinct values decide MaxDimValues while clicks can still
		// land in it, and an hour's absolute counts must not restart.
		res, err = tx.ExecContext(ctx, "DELETE FROM dims WHERE n = flushed AND hour + 3600 <= ?", purgeBefore)
		if err != nil {
			return 0, fmt.Errorf("journal commit: purge dimensions: %w", err)
		}
		dp, _ := res.RowsAffected()
		purged += dp
		// Kept with the purge, so that after a restart with a clock set
		// back no click lands in a purged bucket (Counter.Start).
		if _, err := tx.ExecContext(ctx, `INSERT INTO meta (key, value) VALUES ('purged_before', ?)
			ON CONFLICT (key) DO UPDATE SET value = max(CAST(value AS INTEGER), CAST(excluded.value AS INTEGER))`,
			purgeBefore); err != nil {
			return 0, fmt.Errorf("journal commit: purge horizon: %w", err)
		}
	}
	if err := tx.Commit(); err != nil {
		return 0, fmt.Errorf("journal commit: %w", err)
	}
	return purged, nil
}

// incrementSQL returns the statement adding rows (link, bucket) rows: an
// upsert of a VALUES list of rows triples (link_id, bucket, add) that
// returns each row's new absolute count.
func incrementSQL(rows int) string {
	var b strings.Builder
	b.WriteString("INSERT INTO clicks (link_id, bucket, n) VALUES ")
	for i := range rows {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString("(?,?,?)")
	}
	b.WriteString(" ON CONFLICT (link_id, bucket) DO UPDATE SET n = n + excluded.n RETURNING link_id, bucket, n")
	return b.String()
}

// applyIncrements adds incs to their rows in tx and sets each inc.n to its
// row's new absolute count. incs holds each (link, bucket) once: the
// committer coalesces a batch's clicks per key.
func (j *Journal) applyIncrements(ctx context.Context, tx *sql.Tx, incs []*increment) error {
	var byKey map[incKey]*increment
	if len(incs) > 1 {
		byKey = make(map[incKey]*increment, len(incs))
		for _, in := range incs {
			byKey[incKey{in.linkID, in.bucket}] = in
		}
	}
	args := make([]any, 0, 3*min(len(incs), incSizes[0]))
	for rest := incs; len(rest) > 0; {
		i := 0
		for incSizes[i] > len(rest) {
			i++
		}
		chunk := rest[:incSizes[i]]
		rest = rest[incSizes[i]:]
		args = args[:0]
		for _, in := range chunk {
			args = append(args, in.linkID, in.bucket, in.add)
		}
		if err := scanIncrements(ctx, tx.StmtContext(ctx, j.inc[i]), args, chunk, byKey); err != nil {
			return fmt.Errorf("add %d rows: %w", len(incs), err)
		}
	}
	return nil
}

// scanIncrements runs one increment statement for chunk and stores the
// returned counts (byKey: the commit's increments by key; nil when the commit
// has a single row, chunk[0]).
func scanIncrements(ctx context.Context, stmt *sql.Stmt, args []any, chunk []*increment, byKey map[incKey]*increment) error {
	rows, err := stmt.QueryContext(ctx, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	seen := 0
	for rows.Next() {
		var k incKey
		var n int64
		if err := rows.Scan(&k.linkID, &k.bucket, &n); err != nil {
			return err
		}
		in := chunk[0]
		if byKey != nil {
			in = byKey[k]
		}
		if in != nil && in.linkID == k.linkID && in.bucket == k.bucket {
			in.n = n
			seen++
		}
	}
	if err := rows.Err(); err != nil {
		return err
	}
	if seen != len(chunk) {
		return fmt.Errorf("%d of %d rows returned", seen, len(chunk))
	}
	return nil
}

// appendTriple appends the i-th element of a JSON array of [a, b, c]
// integer triples (the caller closes the array).
func appendTriple(buf []byte, i int, a, b, c int64) []byte {
	if i == 0 {
		buf = append(buf, '[')
	} else {
		buf = append(buf, ',')
	}
	buf = append(buf, '[')
	buf = strconv.AppendInt(buf, a, 10)
	buf = append(buf, ',')
	buf = strconv.AppendInt(buf, b, 10)
	buf = append(buf, ',')
	buf = strconv.AppendInt(buf, c, 10)
	return append(buf, ']')
}
