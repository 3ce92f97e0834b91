package sqlite

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/store/internal/aggregates"
)

// writeClicks writes the absolute minute counts (rows) and hour counts by
// dimension (dims) of nodeID in tx, each only where it raises the stored
// one, and adds what they grew by to the aggregates (addGrowth): what
// every writer of raw click rows calls in its transaction
// (store/internal/aggregates). A stale replay writes nothing.
func writeClicks(ctx context.Context, tx *sql.Tx, nodeID string, rows []linkforge.RollupRow, dims []linkforge.DimRow) error {
	var minutes, grown []linkforge.RollupRow
	if len(rows) > 0 {
		stored, err := storedMinutes(ctx, tx, nodeID, rows)
		if err != nil {
			return err
		}
		minutes, grown = aggregates.GrowMinutes(stored, rows)
	}
	var cells, cellGrowth []linkforge.DimRow
	if len(dims) > 0 {
		stored, err := storedDims(ctx, tx, nodeID, dims)
		if err != nil {
			return err
		}
		cells, cellGrowth = aggregates.GrowDims(stored, dims)
	}
	if len(minutes) > 0 {
		// The max() guards stay: the rows just read are this
		// transaction's (one writer), so they never bite, but a count must
		// not fall if they did.
		args := make([]any, 0, 5*len(minutes))
		for _, r := range minutes {
			args = append(args, r.LinkID, r.Bucket.Unix(), nodeID, r.Count, r.Automated)
		}
		if err := execRows(ctx, tx, `INSERT INTO click_rollup (link_id, bucket, node_id, count, automated) VALUES `,
			` ON CONFLICT (link_id, bucket, node_id) DO UPDATE SET count = max(count, excluded.count),
			 automated = max(automated, excluded.automated)`, 5, args); err != nil {
			return fmt.Errorf("sqlite: upsert rollup: %d rows from link %d bucket %d: %w",
				len(minutes), minutes[0].LinkID, minutes[0].Bucket.Unix(), err)
		}
	}
	if len(cells) > 0 {
		args := make([]any, 0, 7*len(cells))
		for _, d := range cells {
			args = append(args, d.LinkID, d.Hour.Unix(), d.Dim.String(), d.Automated, d.Value, nodeID, d.Count)
		}
		if err := execRows(ctx, tx, `INSERT INTO click_dims (link_id, hour, dimension, automated, value, node_id, count) VALUES `,
			` ON CONFLICT (link_id, hour, dimension, automated, value, node_id) DO UPDATE SET count = max(count, excluded.count)`,
			7, args); err != nil {
			return fmt.Errorf("sqlite: upsert click dimensions: %d rows from link %d hour %d: %w",
				len(cells), cells[0].LinkID, cells[0].Hour.Unix(), err)
		}
	}
	return addGrowth(ctx, tx, grown, cellGrowth)
}

// addGrowth adds growth to the aggregates, in tx: minutes and dims are raw
// rows whose Count is what the stored row grew by (negative: by what it
// fell). Only the links that exist count.
func addGrowth(ctx context.Context, tx *sql.Tx, minutes []linkforge.RollupRow, dims []linkforge.DimRow) error {
	if len(minutes) == 0 && len(dims) == 0 {
		return nil
	}
	ids := make([]int64, 0, len(minutes)+len(dims))
	for _, r := range minutes {
		ids = append(ids, r.LinkID)
	}
	for _, d := range dims {
		ids = append(ids, d.LinkID)
	}
	tenants, err := linkTenants(ctx, tx, ids)
	if err != nil {
		return fmt.Errorf("sqlite: aggregates: %w", err)
	}
	if err := applyAggregates(ctx, tx, aggregates.Sum(tenants, minutes, dims)); err != nil {
		return fmt.Errorf("sqlite: aggregates: %w", err)
	}
	return nil
}

// applyAggregates adds r to the aggregate tables, many rows to a
// statement, each row in key order (neighbouring rows of a B-tree page go
// in together).
func applyAggregates(ctx context.Context, tx *sql.Tx, r aggregates.Rows) error {
	var args []any
	hourly := func(rows []aggregates.Hourly, link, automated bool) []any {
		args = args[:0]
		for _, h := range rows {
			args = append(args, h.Tenant, h.At)
			if link {
				args = append(args, h.Link)
			}
			args = append(args, h.Count)
			if automated {
				args = append(args, h.Automated)
			}
		}
		return args
	}
	dims := func(rows []aggregates.Dim) []any {
		args = args[:0]
		for _, d := range rows {
			args = append(args, d.Owner, d.Dim, d.At, d.Automated, d.Value, d.Count)
		}
		return args
	}
	steps := []struct {
		head, tail string
		width      int
		args       func() []any
	}{
		{`INSERT INTO tenant_hourly (tenant_id, hour, count, automated) VALUES `,
			` ON CONFLICT (tenant_id, hour) DO UPDATE SET count = count + excluded.count, automated = automated + excluded.automated`,
			4, func() []any { return hourly(r.TenantHourly, false, true) }},
		{`INSERT INTO link_hourly (tenant_id, hour, link_id, count, automated) VALUES `,
			` ON CONFLICT (tenant_id, hour, link_id) DO UPDATE SET count = count + excluded.count, automated = automated + excluded.automated`,
			5, func() []any { return hourly(r.LinkHourly, true, true) }},
		{`INSERT INTO link_daily (tenant_id, day, link_id, count) VALUES `,
			` ON CONFLICT (tenant_id, day, link_id) DO UPDATE SET count = count + excluded.count`,
			4, func() []any { return hourly(r.LinkDaily, true, false) }},
		{`UPDATE links SET rollup_clicks = rollup_clicks + v.column2 FROM (VALUES `,
			`) AS v WHERE links.id = v.column1`,
			2, func() []any {
				args = args[:0]
				for _, t := range r.LinkTotals {
					args = append(args, t.Link, t.Count)
				}
				return args
			}},
		{`INSERT INTO tenant_dims_hourly (tenant_id, dimension, hour, automated, value, count) VALUES `,
			` ON CONFLICT (tenant_id, dimension, hour, automated, value) DO UPDATE SET count = count + excluded.count`,
			6, func() []any { return dims(r.TenantDimsHourly) }},
		{`INSERT INTO tenant_dims_daily (tenant_id, dimension, day, automated, value, count) VALUES `,
			` ON CONFLICT (tenant_id, dimension, day, automated, value) DO UPDATE SET count = count + excluded.count`,
			6, func() []any { return dims(r.TenantDimsDaily) }},
		{`INSERT INTO link_dims_daily (link_id, dimension, day, automated, value, count) VALUES `,
			` ON CONFLICT (link_id, dimension, day, automated, value) DO UPDATE SET count = count + excluded.count`,
			6, func() []any { return dims(r.LinkDimsDaily) }},
	}
	for _, s := range steps {
		if err := execRows(ctx, tx, s.head, s.tail, s.width, s.args()); err != nil {
			return err
		}
	}
	return nil
}

// forgetLink takes link id of tenant out of every aggregate and deletes
// its raw rows, in the transaction that deletes the link: the tenant's
// rows lose what the link's rows added, the link's own rows go.
func forgetLink(ctx context.Context, tx *sql.Tx, tenant, id int64) error {
	for _, q := range []struct {
		sql  string
		args []any
	}{
		{`INSERT INTO tenant_hourly (tenant_id, hour, count, automated)
		SELECT tenant_id, hour, -count, -automated FROM link_hourly WHERE tenant_id = ? AND link_id = ?
		ON CONFLICT (tenant_id, hour) DO UPDATE SET count = count + excluded.count, automated = automated + excluded.automated`, []any{tenant, id}},
		{`INSERT INTO tenant_dims_hourly (tenant_id, dimension, hour, automated, value, count)
		SELECT ?, dimension, hour, automated, value, -SUM(count) FROM click_dims
		WHERE link_id = ? GROUP BY dimension, hour, automated, value
		ON CONFLICT (tenant_id, dimension, hour, automated, value) DO UPDATE SET count = count + excluded.count`, []any{tenant, id}},
		{`INSERT INTO tenant_dims_daily (tenant_id, dimension, day, automated, value, count)
		SELECT ?, dimension, day, automated, value, -count FROM link_dims_daily WHERE link_id = ? AND true
		ON CONFLICT (tenant_id, dimension, day, automated, value) DO UPDATE SET count = count + excluded.count`, []any{tenant, id}},
		{`DELETE FROM link_hourly WHERE tenant_id = ? AND link_id = ?`, []any{tenant, id}},
		{`DELETE FROM link_daily WHERE tenant_id = ? AND link_id = ?`, []any{tenant, id}},
		{`DELETE FROM link_dims_daily WHERE link_id = ?`, []any{id}},
		{`DELETE FROM click_rollup WHERE link_id = ?`, []any{id}},
		{`DELETE FROM click_dims WHERE link_id = ?`, []any{id}},
		{`DELETE FROM click_rollup_pruned WHERE link_id = ?`, []any{id}},
	} {
		if _, err := tx.ExecContext(ctx, q.sql, q.args...); err != nil {
			return fmt.Errorf("sqlite: forget link %d: %w", id, err)
		}
	}
	return nil
}

// storedMinutes returns nodeID's stored counts of the (link, bucket) keys
// of rows, 500 keys to a statement, each found by its primary key's
// prefix.
func storedMinutes(ctx context.Context, tx *sql.Tx, nodeID string, rows []linkforge.RollupRow) (map[aggregates.MinuteKey]aggregates.Minute, error) {
	out := make(map[aggregates.MinuteKey]aggregates.Minute, len(rows))
	args := make([]any, 0, 1+2*min(len(rows), storedPerRead))
	type storedRow struct {
		k aggregates.MinuteKey
		m aggregates.Minute
	}
	scan := func(r scanner) (storedRow, error) {
		var s storedRow
		err := r.Scan(&s.k.Link, &s.k.Bucket, &s.m.Count, &s.m.Automated)
		return s, err
	}
	read := func() error {
		got, err := query(ctx, tx, scan, `SELECT link_id, bucket, count, automated FROM click_rollup
			WHERE node_id = ? AND (link_id, bucket) IN (VALUES `+valuesList((len(args)-1)/2, 2)+`)`, args...)
		if err != nil {
			return fmt.Errorf("sqlite: stored rollup: %w", err)
		}
		for _, r := range got {
			out[r.k] = r.m
		}
		args = append(args[:0], nodeID)
		return nil
	}
	args = append(args, nodeID)
	for _, r := range rows {
		args = append(args, r.LinkID, r.Bucket.Unix())
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
