package postgres

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/linkforge/linkforge"
)

// dimColumns are click_dims rows as the arrays writeDimsSQL unnests.
type dimColumns struct {
	ids    []int64
	hours  []time.Time
	dims   []string
	autos  []bool
	values []string
	counts []int64
}

// dedupeDims keeps the largest count of each key of dims, checked by
// linkforge.CheckFlush (one statement may not update a row twice), and
// returns them sorted by key.
func dedupeDims(dims []linkforge.DimRow) []linkforge.DimRow {
	type key struct {
		link, hour int64
		dim        linkforge.Dimension
		automated  bool
		value      string
	}
	latest := make(map[key]int, len(dims))
	for i, d := range dims {
		k := key{d.LinkID, d.Hour.Unix(), d.Dim, d.Automated, d.Value}
		if j, ok := latest[k]; !ok || dims[j].Count <= d.Count {
			latest[k] = i
		}
	}
	batch := make([]linkforge.DimRow, 0, len(latest))
	for _, i := range latest {
		batch = append(batch, dims[i])
	}
	slices.SortFunc(batch, func(a, b linkforge.DimRow) int {
		return cmp.Or(cmp.Compare(a.LinkID, b.LinkID), a.Hour.Compare(b.Hour),
			cmp.Compare(a.Dim.String(), b.Dim.String()), compareBool(a.Automated, b.Automated), cmp.Compare(a.Value, b.Value))
	})
	return batch
}

// dimColumnsOf is dims as the arrays writeDimsSQL unnests.
func dimColumnsOf(dims []linkforge.DimRow) dimColumns {
	c := dimColumns{
		ids:    make([]int64, len(dims)),
		hours:  make([]time.Time, len(dims)),
		dims:   make([]string, len(dims)),
		autos:  make([]bool, len(dims)),
		values: make([]string, len(dims)),
		counts: make([]int64, len(dims)),
	}
	for i, d := range dims {
		c.ids[i], c.hours[i], c.dims[i], c.autos[i], c.values[i], c.counts[i] = d.LinkID, d.Hour, d.Dim.String(), d.Automated, d.Value, d.Count
	}
	return c
}

// NodeDims returns nodeID's click_dims rows whose hour is at or after from
// (the hour index keeps it to those hours).
func (db *DB) NodeDims(ctx context.Context, nodeID string, from time.Time) ([]linkforge.DimRow, error) {
	named, err := query(ctx, db.pool, scanDimRow,
		`SELECT link_id, hour, dimension, automated, value, count FROM click_dims WHERE hour >= $1 AND node_id = $2`,
		ceilMicro(from), nodeID)
	if err != nil {
		return nil, fmt.Errorf("postgres: node dimensions of %q: %w", nodeID, err)
	}
	return linkforge.KnownDimRows(named), nil
}

// NodeLinkClicks returns nodeID's rollup rows of linkID with a bucket in
// [from, to) and its click_dims rows with an hour in [from, to), through
// their primary key's link_id prefix, in one repeatable-read transaction
// so that the minutes and the dimensions are of one committed state.
func (db *DB) NodeLinkClicks(ctx context.Context, nodeID string, linkID int64, from, to time.Time) ([]linkforge.RollupRow, []linkforge.DimRow, error) {
	tx, err := db.pool.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
	if err != nil {
		return nil, nil, fmt.Errorf("postgres: node clicks of link %d: %w", linkID, err)
	}
	defer tx.Rollback(ctx)
	mins, err := query(ctx, tx, scanRollupRow,
		`SELECT link_id, bucket, count, automated FROM click_rollup WHERE link_id = $1 AND bucket >= $2 AND bucket < $3 AND node_id = $4`,
		linkID, ceilMicro(from), ceilMicro(to), nodeID)
	if err != nil {
		return nil, nil, fmt.Errorf("postgres: node clicks of link %d: %w", linkID, err)
	}
	named, err := query(ctx, tx, scanDimRow,
		`SELECT link_id, hour, dimension, automated, value, count FROM click_dims WHERE link_id = $1 AND hour >= $2 AND hour < $3 AND node_id = $4`,
		linkID, ceilMicro(from), ceilMicro(to), nodeID)
	if err != nil {
		return nil, nil, fmt.Errorf("postgres: node dimensions of link %d: %w", linkID, err)
	}
	return mins, linkforge.KnownDimRows(named), nil
}

// scanDimRow reads (link_id, hour, dimension, automated, value, count).
func scanDimRow(r pgx.Row) (linkforge.NamedDimRow, error) {
	var d linkforge.NamedDimRow
	err := r.Scan(&d.LinkID, &d.Hour, &d.Name, &d.Automated, &d.Value, &d.Count)
	return d, err
}

// compareBool orders false before true, as PostgreSQL does.
func compareBool(a, b bool) int {
	switch {
	case a == b:
		return 0
	case a:
		return 1
	}
	return -1
}
