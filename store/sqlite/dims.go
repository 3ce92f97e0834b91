package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/store/internal/aggregates"
)

// storedDims returns nodeID's stored counts of the (link, hour) pairs of
// dims, by row key: 500 pairs to a statement, each found by its primary
// key's (link_id, hour) prefix.
func storedDims(ctx context.Context, tx *sql.Tx, nodeID string, dims []linkforge.DimRow) (map[aggregates.DimKey]int64, error) {
	type linkHour struct{ link, hour int64 }
	seen := make(map[linkHour]struct{}, len(dims)/8+1)
	args := make([]any, 0, 1+2*min(len(dims), storedPerRead))
	out := make(map[aggregates.DimKey]int64, len(dims))
	type storedRow struct {
		k aggregates.DimKey
		n int64
	}
	scan := func(r scanner) (storedRow, error) {
		var s storedRow
		err := r.Scan(&s.k.Link, &s.k.Hour, &s.k.Dim, &s.k.Automated, &s.k.Value, &s.n)
		return s, err
	}
	read := func() error {
		rows, err := query(ctx, tx, scan, `SELECT link_id, hour, dimension, automated, value, count FROM click_dims
			WHERE node_id = ? AND (link_id, hour) IN (VALUES `+valuesList((len(args)-1)/2, 2)+`)`, args...)
		if err != nil {
			return fmt.Errorf("sqlite: stored click dimensions: %w", err)
		}
		for _, r := range rows {
			out[r.k] = r.n
		}
		args = append(args[:0], nodeID)
		return nil
	}
	args = append(args, nodeID)
	for _, d := range dims {
		lh := linkHour{d.LinkID, d.Hour.Unix()}
		if _, ok := seen[lh]; ok {
			continue
		}
		seen[lh] = struct{}{}
		args = append(args, lh.link, lh.hour)
		if len(args) == 1+2*storedPerRead {
			if err := read(); err != nil {
				return nil, err
			}
		}
	}
	if len(args) > 1 {
		if err := read(); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// storedPerRead bounds storedDims' (link, hour) pairs per statement.
const storedPerRead = 500

// linkTenants returns the tenant of each link of links that exists.
func linkTenants(ctx context.Context, tx *sql.Tx, links []int64) (map[int64]int64, error) {
	out := map[int64]int64{}
	ids := make([]any, 0, min(len(links), storedPerRead))
	scan := func(r scanner) ([2]int64, error) {
		var p [2]int64
		err := r.Scan(&p[0], &p[1])
		return p, err
	}
	read := func() error {
		rows, err := query(ctx, tx, scan, `SELECT id, tenant_id FROM links WHERE id IN (VALUES `+valuesList(len(ids), 1)+`)`, ids...)
		if err != nil {
			return fmt.Errorf("tenants of links: %w", err)
		}
		for _, p := range rows {
			out[p[0]] = p[1]
		}
		ids = ids[:0]
		return nil
	}
	asked := map[int64]struct{}{}
	for _, id := range links {
		if _, ok := asked[id]; ok {
			continue
		}
		asked[id] = struct{}{}
		if ids = append(ids, id); len(ids) == storedPerRead {
			if err := read(); err != nil {
				return nil, err
			}
		}
	}
	if len(ids) > 0 {
		if err := read(); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// execRows runs head + a VALUES list + tail over args, rows of width
// parameters each, in statements of up to rowsPerStatement rows: one
// statement's bind, step and statement journal for many rows instead of
// one per row.
func execRows(ctx context.Context, tx *sql.Tx, head, tail string, width int, args []any) error {
	var (
		stmt *sql.Stmt
		size int
	)
	defer func() {
		if stmt != nil {
			stmt.Close()
		}
	}()
	for len(args) > 0 {
		n := min(len(args)/width, rowsPerStatement)
		if n != size {
			if stmt != nil {
				stmt.Close()
			}
			var err error
			if stmt, err = tx.PrepareContext(ctx, head+valuesList(n, width)+tail); err != nil {
				return err
			}
			size = n
		}
		if _, err := stmt.ExecContext(ctx, args[:n*width]...); err != nil {
			return err
		}
		args = args[n*width:]
	}
	return nil
}

// rowsPerStatement bounds one statement's rows (7 parameters each at most,
// under SQLite's 32,766).
const rowsPerStatement = 200

// NodeDims returns nodeID's click_dims rows whose hour is at or after from
// (the hour index keeps it to those hours).
func (db *DB) NodeDims(ctx context.Context, nodeID string, from time.Time) ([]linkforge.DimRow, error) {
	named, err := query(ctx, db.reader, scanDimRow,
		`SELECT link_id, hour, dimension, automated, value, count FROM click_dims WHERE hour >= ? AND node_id = ?`,
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
		`SELECT link_id, bucket, count, automated FROM click_rollup WHERE link_id = ? AND bucket >= ? AND bucket < ? AND node_id = ?`,
		linkID, ceilUnix(from), ceilUnix(to), nodeID)
	if err != nil {
		return nil, nil, fmt.Errorf("sqlite: node clicks of link %d: %w", linkID, err)
	}
	named, err := query(ctx, tx, scanDimRow,
		`SELECT link_id, hour, dimension, automated, value, count FROM click_dims WHERE link_id = ? AND hour >= ? AND hour < ? AND node_id = ?`,
		linkID, ceilUnix(from), ceilUnix(to), nodeID)
	if err != nil {
		return nil, nil, fmt.Errorf("sqlite: node dimensions of link %d: %w", linkID, err)
	}
	return mins, linkforge.KnownDimRows(named), nil
}

// scanDimRow reads (link_id, hour, dimension, automated, value, count).
func scanDimRow(r scanner) (linkforge.NamedDimRow, error) {
	var (
		d    linkforge.NamedDimRow
		hour int64
	)
	err := r.Scan(&d.LinkID, &hour, &d.Name, &d.Automated, &d.Value, &d.Count)
	d.Hour = time.Unix(hour, 0)
	return d, err
}
