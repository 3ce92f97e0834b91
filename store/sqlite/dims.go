package sqlite

import (
	"cmp"
	"context"
	"database/sql"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/linkforge/linkforge"
)

// upsertDims writes dims of nodeID in tx, with click_rollup's monotonic
// rule (a count replaces a smaller one, never a larger one), and adds what
// each row grew by to the aggregates that sum click_dims: tenant_dims_hourly
// and link_dims_daily (00006), tenant_dims_daily (00008) and the automated
// part of link_hourly and tenant_hourly (00022).
//
// Row triggers kept those aggregates until migration 00025
// (docs/performance.md): three upserts per
// dimension row, and a burst of one-off links wrote 23 rows a link (15
// now), so a tenant's aggregate row was rewritten once per link
// of the flush and the triggers were about half of its time. Here the
// rows' stored counts are read first (one statement per 500 (link, hour)
// pairs), only the rows that grow are written, and their growth is summed
// by aggregate key, so each aggregate row is written once per flush. A
// stale replay writes nothing.
func upsertDims(ctx context.Context, tx *sql.Tx, nodeID string, dims []linkforge.DimRow) error {
	if len(dims) == 0 {
		return nil
	}
	stored, err := storedDims(ctx, tx, nodeID, dims)
	if err != nil {
		return err
	}
	// args: the rows that grow, at their new count; growth: what each grew by.
	args := make([]any, 0, 7*len(dims))
	growth := make([]linkforge.DimRow, 0, len(dims))
	for _, d := range dims {
		k := dimKey{d.LinkID, d.Hour.Unix(), d.Dim.String(), d.Automated, d.Value}
		old := stored[k]
		if d.Count <= old {
			continue
		}
		// A key twice in one flush grows from the first count to the second.
		stored[k] = d.Count
		args = append(args, k.link, k.hour, k.dim, k.automated, k.value, nodeID, d.Count)
		d.Count -= old
		growth = append(growth, d)
	}
	if len(growth) == 0 {
		return nil
	}
	// The max() guard stays: the rows just read are this transaction's (one
	// writer), so it never bites, but a count must not fall if it did.
	if err := execRows(ctx, tx, `INSERT INTO click_dims (link_id, hour, dimension, automated, value, node_id, count) VALUES `,
		` ON CONFLICT (link_id, hour, dimension, automated, value, node_id) DO UPDATE SET count = max(count, excluded.count)
		 WHERE excluded.count > count`, 7, args); err != nil {
		return fmt.Errorf("sqlite: upsert click dimensions: %d rows from link %d hour %d: %w",
			len(growth), growth[0].LinkID, growth[0].Hour.Unix(), err)
	}
	if err := addDimGrowth(ctx, tx, growth); err != nil {
		return fmt.Errorf("sqlite: click dimension aggregates: %w", err)
	}
	return nil
}

// dimKey is a click_dims row's key within one node's rows.
type dimKey struct {
	link      int64
	hour      int64
	dim       string
	automated bool
	value     string
}

// storedDims returns nodeID's stored counts of the (link, hour) pairs of
// dims, by row key: 500 pairs to a statement, each found by its primary
// key's (link_id, hour) prefix.
func storedDims(ctx context.Context, tx *sql.Tx, nodeID string, dims []linkforge.DimRow) (map[dimKey]int64, error) {
	type linkHour struct{ link, hour int64 }
	seen := make(map[linkHour]struct{}, len(dims)/8+1)
	args := make([]any, 0, 1+2*min(len(dims), storedPerRead))
	out := make(map[dimKey]int64, len(dims))
	type storedRow struct {
		k dimKey
		n int64
	}
	scan := func(r scanner) (storedRow, error) {
		var s storedRow
		err := r.Scan(&s.k.link, &s.k.hour, &s.k.dim, &s.k.automated, &s.k.value, &s.n)
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

// addDimGrowth adds growth (dimension rows whose Count is what the stored
// row grew by) to the aggregates of the links that exist: a deleted link's
// rows left them with its delete, and a late flush of its rows must not
// bring them back (the triggers' join on links did the same).
func addDimGrowth(ctx context.Context, tx *sql.Tx, growth []linkforge.DimRow) error {
	if len(growth) == 0 {
		return nil
	}
	tenants, err := linkTenants(ctx, tx, growth)
	if err != nil {
		return err
	}
	type tenantKey struct {
		tenant    int64
		dim       string
		at        int64 // the hour, or the day
		automated bool
		value     string
	}
	type hourKey struct{ tenant, hour, link int64 }
	var (
		hourly = map[tenantKey]int64{}
		daily  = map[tenantKey]int64{}
		// link_dims_daily's rows, one per growing row: its key is the
		// link's, so few rows share one (a link's hours of one day), and
		// SQLite's upsert adds a key twice in one statement as it would in
		// two. The flush's rows come link by link, near the key's order.
		linkDaily  = make([]any, 0, 6*len(growth))
		autoLink   = map[hourKey]int64{}
		autoTenant = map[hourKey]int64{} // link 0
	)
	traffic := linkforge.DimTraffic.String()
	for _, g := range growth {
		tn, ok := tenants[g.LinkID]
		if !ok {
			continue
		}
		name, hour := g.Dim.String(), g.Hour.Unix()
		day := hour / 86400 * 86400
		hourly[tenantKey{tn, name, hour, g.Automated, g.Value}] += g.Count
		daily[tenantKey{tn, name, day, g.Automated, g.Value}] += g.Count
		linkDaily = append(linkDaily, g.LinkID, name, day, g.Automated, g.Value, g.Count)
		if name == traffic && g.Value == linkforge.TrafficAutomated {
			autoLink[hourKey{tn, hour, g.LinkID}] += g.Count
			autoTenant[hourKey{tn, hour, 0}] += g.Count
		}
	}
	// The tenants' rows, few, in key order: neighbouring rows of one
	// B-tree page go in together.
	byTenant := func(a, b tenantKey) int {
		return cmp.Or(cmp.Compare(a.tenant, b.tenant), cmp.Compare(a.dim, b.dim), cmp.Compare(a.at, b.at), compareBool(a.automated, b.automated), cmp.Compare(a.value, b.value))
	}
	byHour := func(a, b hourKey) int {
		return cmp.Or(cmp.Compare(a.tenant, b.tenant), cmp.Compare(a.hour, b.hour), cmp.Compare(a.link, b.link))
	}
	var args []any
	tenantRows := func(m map[tenantKey]int64) []any {
		args = args[:0]
		for _, k := range slices.SortedFunc(maps.Keys(m), byTenant) {
			args = append(args, k.tenant, k.dim, k.at, k.automated, k.value, m[k])
		}
		return args
	}
	if err := execRows(ctx, tx, `INSERT INTO tenant_dims_hourly (tenant_id, dimension, hour, automated, value, count) VALUES `,
		` ON CONFLICT (tenant_id, dimension, hour, automated, value) DO UPDATE SET count = count + excluded.count`, 6, tenantRows(hourly)); err != nil {
		return err
	}
	if err := execRows(ctx, tx, `INSERT INTO tenant_dims_daily (tenant_id, dimension, day, automated, value, count) VALUES `,
		` ON CONFLICT (tenant_id, dimension, day, automated, value) DO UPDATE SET count = count + excluded.count`, 6, tenantRows(daily)); err != nil {
		return err
	}
	if err := execRows(ctx, tx, `INSERT INTO link_dims_daily (link_id, dimension, day, automated, value, count) VALUES `,
		` ON CONFLICT (link_id, dimension, day, automated, value) DO UPDATE SET count = count + excluded.count`, 6, linkDaily); err != nil {
		return err
	}
	args = args[:0]
	for _, k := range slices.SortedFunc(maps.Keys(autoLink), byHour) {
		args = append(args, k.tenant, k.hour, k.link, 0, autoLink[k])
	}
	if err := execRows(ctx, tx, `INSERT INTO link_hourly (tenant_id, hour, link_id, count, automated) VALUES `,
		` ON CONFLICT (tenant_id, hour, link_id) DO UPDATE SET automated = automated + excluded.automated`, 5, args); err != nil {
		return err
	}
	args = args[:0]
	for _, k := range slices.SortedFunc(maps.Keys(autoTenant), byHour) {
		args = append(args, k.tenant, k.hour, 0, autoTenant[k])
	}
	return execRows(ctx, tx, `INSERT INTO tenant_hourly (tenant_id, hour, count, automated) VALUES `,
		` ON CONFLICT (tenant_id, hour) DO UPDATE SET automated = automated + excluded.automated`, 4, args)
}

// linkTenants returns the tenant of each link of rows that exists.
func linkTenants(ctx context.Context, tx *sql.Tx, rows []linkforge.DimRow) (map[int64]int64, error) {
	out := map[int64]int64{}
	ids := make([]any, 0, min(len(rows), storedPerRead))
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
	for _, r := range rows {
		if _, ok := asked[r.LinkID]; ok {
			continue
		}
		asked[r.LinkID] = struct{}{}
		if ids = append(ids, r.LinkID); len(ids) == storedPerRead {
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

// compareBool orders false before true, as the automated column's 0 and 1.
func compareBool(a, b bool) int {
	switch {
	case a == b:
		return 0
	case a:
		return 1
	}
	return -1
}
