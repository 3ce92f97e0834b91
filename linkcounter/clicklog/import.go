package clicklog

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"strconv"

	_ "modernc.org/sqlite" // only to import a journal written by an earlier release
)

// legacyVersion is the newest SQLite journal schema this release imports
// (PRAGMA user_version; 2 added the dims table).
const legacyVersion = 2

// importLegacy moves a SQLite journal left in the data dir by an earlier
// release (legacyName) into the click log: its rows, node id, seed mark and
// purge horizon become the log's first snapshot, then the file is renamed
// legacyName + ".migrated" so that it is never read twice. The snapshot is written only into an empty
// log: a log that already has one means an earlier open imported the file
// and stopped before the rename.
func (j *Journal) importLegacy(ctx context.Context) error {
	path := filepath.Join(j.dataDir, legacyName)
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		return nil
	} else if err != nil {
		return err
	}
	segs, snaps, err := logFiles(j.dir)
	if err != nil {
		return err
	}
	if len(segs) == 0 && len(snaps) == 0 {
		st, err := readLegacy(ctx, path)
		if err != nil {
			return fmt.Errorf("import SQLite journal %s (the previous release's; left in place): %w", path, err)
		}
		if err := writeSnapshot(j.dir, 1, st); err != nil {
			return err
		}
		var rows, unflushed int64
		for _, e := range st.links {
			for h := range e.all() {
				for _, m := range h.mins {
					rows++
					unflushed += m.n - m.flushed
				}
			}
		}
		j.log.Info("click journal imported from the previous release's SQLite file", slog.String("event", "journal_imported"),
			slog.String("from", path), slog.String("node_id", st.nodeID), slog.Int64("rows", rows), slog.Int64("unflushed", unflushed))
	}
	for _, suffix := range []string{"", "-wal", "-shm"} {
		// SQLite finds a database's side files by name: they move with it.
		if err := os.Rename(path+suffix, path+".migrated"+suffix); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("rename imported SQLite journal aside: %w", err)
		}
	}
	return syncDir(filepath.Dir(path))
}

// readLegacy reads a SQLite journal (versions 1 and 2) into a state. Opening
// it read-write lets SQLite recover a write-ahead log left by a crash.
func readLegacy(ctx context.Context, path string) (*logState, error) {
	u := url.URL{Scheme: "file", Path: filepath.ToSlash(path), RawQuery: "_pragma=busy_timeout(10000)"}
	db, err := sql.Open("sqlite", u.String())
	if err != nil {
		return nil, err
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	var version int
	if err := db.QueryRowContext(ctx, "PRAGMA user_version").Scan(&version); err != nil {
		return nil, fmt.Errorf("read schema version: %w", err)
	}
	if version > legacyVersion {
		return nil, fmt.Errorf("journal schema version %d is newer than this binary imports (%d)", version, legacyVersion)
	}
	st := newLogState()
	var tables int
	if err := db.QueryRowContext(ctx, "SELECT COUNT(*) FROM sqlite_master WHERE name IN ('meta', 'clicks')").Scan(&tables); err != nil {
		return nil, err
	}
	if tables < 2 {
		return st, nil // an empty file: nothing was ever counted
	}
	meta, err := db.QueryContext(ctx, "SELECT key, value FROM meta")
	if err != nil {
		return nil, err
	}
	for meta.Next() {
		var k, v string
		if err := meta.Scan(&k, &v); err != nil {
			meta.Close() //nolint:sqlclosecheck // closed on every path, before the next query
			return nil, err
		}
		switch k {
		case "node_id":
			st.nodeID = v
		case "seed_pending":
			st.seedPending = true
		case "purged_before":
			st.purgedBefore, _ = strconv.ParseInt(v, 10, 64)
		}
	}
	if err := errors.Join(meta.Err(), meta.Close()); err != nil {
		return nil, err
	}
	rows, err := db.QueryContext(ctx, "SELECT link_id, bucket, n, flushed FROM clicks ORDER BY link_id, bucket")
	if err != nil {
		return nil, err
	}
	r := &logRecord{}
	for rows.Next() {
		var x Row
		if err := rows.Scan(&x.LinkID, &x.Bucket, &x.N, &x.Flushed); err != nil {
			rows.Close() //nolint:sqlclosecheck // closed on every path, before the next query
			return nil, err
		}
		r.incs = append(r.incs, recRow{link: x.LinkID, at: x.Bucket, v: x.N})
		r.marks = append(r.marks, recRow{link: x.LinkID, at: x.Bucket, v: x.Flushed})
		if version < 2 {
			// Clicks counted before dimensions existed are the defaults'
			// in every dimension (docs/adr/009-click-dimensions.md).
			for d := range publicDims {
				c := cellOf(d, false)
				r.dims = append(r.dims, recDim{link: x.LinkID, hour: hourStart(x.Bucket), dim: c, value: d.Default(), v: x.N})
				r.dimMarks = append(r.dimMarks, recDim{link: x.LinkID, hour: hourStart(x.Bucket), dim: c, value: d.Default(), v: x.Flushed})
			}
		}
	}
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		return nil, err
	}
	if version >= 2 {
		drows, err := db.QueryContext(ctx, "SELECT link_id, hour, dim, value, n, flushed FROM dims")
		if err != nil {
			return nil, err
		}
		for drows.Next() {
			var x DimRow
			// The old journal's numbering (oldNumDims), converted below.
			if err := drows.Scan(&x.LinkID, &x.Hour, &x.Dim, &x.Value, &x.N, &x.Flushed); err != nil {
				drows.Close() //nolint:sqlclosecheck // closed on every path, before the next query
				return nil, err
			}
			if x.Dim >= oldNumDims {
				continue
			}
			r.dims = append(r.dims, recDim{link: x.LinkID, hour: x.Hour, dim: cellDim(x.Dim), value: x.Value, v: x.N})
			r.dimMarks = append(r.dimMarks, recDim{link: x.LinkID, hour: x.Hour, dim: cellDim(x.Dim), value: x.Value, v: x.Flushed})
		}
		if err := errors.Join(drows.Err(), drows.Close()); err != nil {
			return nil, err
		}
		r.fromV3(true)
		r.withSource()
	}
	// Marks are applied after all increments of the record: version 1's
	// summed default rows get the sum of their minutes' flushed counts.
	if version < 2 {
		sumMarks(r)
	}
	st.apply(r)
	return st, nil
}

// sumMarks turns version 1's per-minute dimension marks into per-hour sums
// (a mark is absolute, so the hour's mark is the sum of its minutes').
func sumMarks(r *logRecord) {
	sum := make(map[dimKey]int64)
	for _, m := range r.dimMarks {
		sum[dimKey{m.link, m.hour, m.dim, m.value}] += m.v
	}
	r.dimMarks = r.dimMarks[:0]
	for k, v := range sum {
		r.dimMarks = append(r.dimMarks, recDim{link: k.linkID, hour: k.hour, dim: k.dim, value: k.value, v: v})
	}
}
