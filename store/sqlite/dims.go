package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/linkforge/linkforge"
)

// upsertDims writes dims of nodeID in tx, with click_rollup's monotonic
// rule: a count replaces a smaller one, never a larger one. Rows go in
// statements of dimsPerStatement rows each: one statement's bind, step and
// statement journal for many rows instead of one per row (a one-off
// link's flush writes 23 dimension rows).
func upsertDims(ctx context.Context, tx *sql.Tx, nodeID string, dims []linkforge.DimRow) error {
	if len(dims) == 0 {
		return nil
	}
	var (
		stmt *sql.Stmt
		size int
		args = make([]any, 0, 6*min(len(dims), dimsPerStatement))
	)
	defer func() {
		if stmt != nil {
			stmt.Close()
		}
	}()
	for len(dims) > 0 {
		n := min(len(dims), dimsPerStatement)
		if n != size {
			if stmt != nil {
				stmt.Close()
			}
			var err error
			if stmt, err = tx.PrepareContext(ctx, dimsUpsertSQL(n)); err != nil {
				return fmt.Errorf("sqlite: upsert click dimensions: %w", err)
			}
			size = n
		}
		args = args[:0]
		for _, d := range dims[:n] {
			args = append(args, d.LinkID, d.Hour.Unix(), d.Dim.String(), d.Value, nodeID, d.Count)
		}
		if _, err := stmt.ExecContext(ctx, args...); err != nil {
			return fmt.Errorf("sqlite: upsert click dimensions: %d rows from link %d hour %d: %w",
				n, dims[0].LinkID, dims[0].Hour.Unix(), err)
		}
		dims = dims[n:]
	}
	return nil
}

// dimsPerStatement bounds one statement's rows (6 parameters each, under
// SQLite's 32,766).
const dimsPerStatement = 200

// dimsUpsertSQL is the upsert of n dimension rows.
func dimsUpsertSQL(n int) string {
	return `INSERT INTO click_dims (link_id, hour, dimension, value, node_id, count) VALUES ` + valuesList(n, 6) +
		` ON CONFLICT (link_id, hour, dimension, value, node_id) DO UPDATE SET count = max(count, excluded.count)
		 WHERE excluded.count > count`
}

// NodeDims returns nodeID's click_dims rows whose hour is at or after from
// (the hour index keeps it to those hours).
func (db *DB) NodeDims(ctx context.Context, nodeID string, from time.Time) ([]linkforge.DimRow, error) {
	named, err := query(ctx, db.reader, scanDimRow,
		`SELECT link_id, hour, dimension, value, count FROM click_dims WHERE hour >= ? AND node_id = ?`,
		ceilUnix(from), nodeID)
	if err != nil {
		return nil, fmt.Errorf("sqlite: node dimensions of %q: %w", nodeID, err)
	}
	return linkforge.KnownDimRows(named), nil
}

// NodeLinkClicks returns nodeID's rollup rows of linkID with a bucket in
// [from, to) and its click_dims rows with an hour in [from, to). Both are
// read through their primary key's link_id prefix, in one read transaction
// so that the minutes and the dimensions are of one committed state.
func (db *DB) NodeLinkClicks(ctx context.Context, nodeID string, linkID int64, from, to time.Time) ([]linkforge.RollupRow, []linkforge.DimRow, error) {
	tx, err := db.reader.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, nil, fmt.Errorf("sqlite: node clicks of link %d: %w", linkID, err)
	}
	defer tx.Rollback()
	mins, err := query(ctx, tx, scanRollupRow,
		`SELECT link_id, bucket, count FROM click_rollup WHERE link_id = ? AND bucket >= ? AND bucket < ? AND node_id = ?`,
		linkID, ceilUnix(from), ceilUnix(to), nodeID)
	if err != nil {
		return nil, nil, fmt.Errorf("sqlite: node clicks of link %d: %w", linkID, err)
	}
	named, err := query(ctx, tx, scanDimRow,
		`SELECT link_id, hour, dimension, value, count FROM click_dims WHERE link_id = ? AND hour >= ? AND hour < ? AND node_id = ?`,
		linkID, ceilUnix(from), ceilUnix(to), nodeID)
	if err != nil {
		return nil, nil, fmt.Errorf("sqlite: node dimensions of link %d: %w", linkID, err)
	}
	return mins, linkforge.KnownDimRows(named), nil
}

// scanDimRow reads (link_id, hour, dimension, value, count).
func scanDimRow(r scanner) (linkforge.NamedDimRow, error) {
	var (
		d    linkforge.NamedDimRow
		hour int64
	)
	err := r.Scan(&d.LinkID, &hour, &d.Name, &d.Value, &d.Count)
	d.Hour = time.Unix(hour, 0)
	return d, err
}
