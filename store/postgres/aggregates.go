package postgres

import (
	"cmp"
	"context"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/store/internal/aggregates"
)

// aggLock is the advisory lock every writer of raw click rows or of the
// aggregates takes first, in its transaction: the flush (writeClicks), a
// link's delete (forgetLink) and a retention batch. Their reads of stored
// counts then see every earlier writer's commit, and no two of them
// deadlock on aggregate rows. (Migration 00006's triggers took it too.)
const aggLock = 7306231866145637

// The stored counts of the keys a write names: $1 links, $2 buckets or
// hours, $3 the node. Each key is found through its primary key's
// (link_id, bucket / hour) prefix.
const (
	storedMinutesSQL = `SELECT r.link_id, r.bucket, r.count, r.automated
		FROM unnest($1::bigint[], $2::timestamptz[]) AS u (link_id, bucket)
		JOIN click_rollup r ON r.link_id = u.link_id AND r.bucket = u.bucket AND r.node_id = $3`
	storedDimsSQL = `SELECT c.link_id, c.hour, c.dimension, c.automated, c.value, c.count
		FROM (SELECT DISTINCT * FROM unnest($1::bigint[], $2::timestamptz[])) AS u (link_id, hour)
		JOIN click_dims c ON c.link_id = u.link_id AND c.hour = u.hour AND c.node_id = $3`
	linkTenantsSQL = `SELECT id, tenant_id FROM links WHERE id = ANY($1::bigint[])`
)

// The raw rows' writes: a count replaces a smaller one, never a larger one
// (the rows just read are under aggLock, so the guard never bites, but a
// count must not fall if it did).
const (
	writeMinutesSQL = `INSERT INTO click_rollup AS r (link_id, bucket, node_id, count, automated)
		SELECT u.link_id, u.bucket, $4, u.count, u.automated
		FROM unnest($1::bigint[], $2::timestamptz[], $3::bigint[], $5::bigint[]) AS u (link_id, bucket, count, automated)
		ON CONFLICT (link_id, bucket, node_id) DO UPDATE SET count = GREATEST(r.count, excluded.count),
		automated = GREATEST(r.automated, excluded.automated)`
	writeDimsSQL = `INSERT INTO click_dims AS c (link_id, hour, dimension, automated, value, node_id, count)
		SELECT d.link_id, d.hour, d.dimension, d.automated, d.value, $6, d.count
		FROM unnest($1::bigint[], $2::timestamptz[], $3::text[], $4::boolean[], $5::text[], $7::bigint[]) AS d (link_id, hour, dimension, automated, value, count)
		ON CONFLICT (link_id, hour, dimension, automated, value, node_id) DO UPDATE SET count = GREATEST(c.count, excluded.count)`
)

// The aggregates' upserts, each adding growth to the stored sums, rows in
// key order.
const (
	tenantHourlySQL = `INSERT INTO tenant_hourly AS a (tenant_id, hour, count, automated)
		SELECT * FROM unnest($1::bigint[], $2::timestamptz[], $3::bigint[], $4::bigint[])
		ON CONFLICT (tenant_id, hour) DO UPDATE SET count = a.count + excluded.count, automated = a.automated + excluded.automated`
	linkHourlySQL = `INSERT INTO link_hourly AS a (tenant_id, hour, link_id, count, automated)
		SELECT * FROM unnest($1::bigint[], $2::timestamptz[], $3::bigint[], $4::bigint[], $5::bigint[])
		ON CONFLICT (tenant_id, hour, link_id) DO UPDATE SET count = a.count + excluded.count, automated = a.automated + excluded.automated`
	linkDailySQL = `INSERT INTO link_daily AS a (tenant_id, day, link_id, count)
		SELECT * FROM unnest($1::bigint[], $2::timestamptz[], $3::bigint[], $4::bigint[])
		ON CONFLICT (tenant_id, day, link_id) DO UPDATE SET count = a.count + excluded.count`
	linkTotalsSQL = `UPDATE links l SET rollup_clicks = l.rollup_clicks + u.n
		FROM unnest($1::bigint[], $2::bigint[]) AS u (id, n) WHERE l.id = u.id`
	tenantDimsHourlySQL = `INSERT INTO tenant_dims_hourly AS a (tenant_id, dimension, hour, automated, value, count)
		SELECT * FROM unnest($1::bigint[], $2::text[], $3::timestamptz[], $4::boolean[], $5::text[], $6::bigint[])
		ON CONFLICT (tenant_id, dimension, hour, automated, value) DO UPDATE SET count = a.count + excluded.count`
	tenantDimsDailySQL = `INSERT INTO tenant_dims_daily AS a (tenant_id, dimension, day, automated, value, count)
		SELECT * FROM unnest($1::bigint[], $2::text[], $3::timestamptz[], $4::boolean[], $5::text[], $6::bigint[])
		ON CONFLICT (tenant_id, dimension, day, automated, value) DO UPDATE SET count = a.count + excluded.count`
	linkDimsDailySQL = `INSERT INTO link_dims_daily AS a (link_id, dimension, day, automated, value, count)
		SELECT * FROM unnest($1::bigint[], $2::text[], $3::timestamptz[], $4::boolean[], $5::text[], $6::bigint[])
		ON CONFLICT (link_id, dimension, day, automated, value) DO UPDATE SET count = a.count + excluded.count`
)

// writeClicks writes the absolute minute counts (rows) and hour counts by
// dimension (dims) of nodeID in tx, each only where it raises the stored
// one, and adds what they grew by to the aggregates: what every writer of
// raw click rows calls in its transaction (store/internal/aggregates).
// When rows or dims hold one key twice the larger count wins, as if the
// rows were written one after the other (PostgreSQL refuses to update one
// row twice in a statement, 21000). It takes aggLock, reads the stored counts and the links' tenants in one
// round trip, and writes the rows and the aggregates in one statement.
func writeClicks(ctx context.Context, tx pgx.Tx, nodeID string, rows []linkforge.RollupRow, dims []linkforge.DimRow) error {
	rows, dims = dedupeMinutes(rows), dedupeDims(dims)
	minuteIDs, buckets := make([]int64, len(rows)), make([]time.Time, len(rows))
	for i, r := range rows {
		minuteIDs[i], buckets[i] = r.LinkID, r.Bucket
	}
	dimIDs, hours := make([]int64, len(dims)), make([]time.Time, len(dims))
	for i, d := range dims {
		dimIDs[i], hours[i] = d.LinkID, d.Hour
	}
	var (
		b            pgx.Batch
		storedMins   = make(map[aggregates.MinuteKey]aggregates.Minute)
		storedCells  = make(map[aggregates.DimKey]int64)
		tenants      = make(map[int64]int64)
		bucket, hour time.Time
		m            aggregates.Minute
		mk           aggregates.MinuteKey
		dk           aggregates.DimKey
		n            int64
	)
	b.Queue(`SELECT pg_advisory_xact_lock($1)`, int64(aggLock))
	if len(rows) > 0 {
		b.Queue(storedMinutesSQL, minuteIDs, buckets, nodeID).Query(func(r pgx.Rows) error {
			_, err := pgx.ForEachRow(r, []any{&mk.Link, &bucket, &m.Count, &m.Automated}, func() error {
				mk.Bucket = bucket.Unix()
				storedMins[mk] = m
				return nil
			})
			return err
		})
	}
	if len(dims) > 0 {
		b.Queue(storedDimsSQL, dimIDs, hours, nodeID).Query(func(r pgx.Rows) error {
			_, err := pgx.ForEachRow(r, []any{&dk.Link, &hour, &dk.Dim, &dk.Automated, &dk.Value, &n}, func() error {
				dk.Hour = hour.Unix()
				storedCells[dk] = n
				return nil
			})
			return err
		})
	}
	var id, tenant int64
	b.Queue(linkTenantsSQL, slices.Concat(minuteIDs, dimIDs)).Query(func(r pgx.Rows) error {
		_, err := pgx.ForEachRow(r, []any{&id, &tenant}, func() error {
			tenants[id] = tenant
			return nil
		})
		return err
	})
	if err := tx.SendBatch(ctx, &b).Close(); err != nil {
		return fmt.Errorf("stored counts: %w", err)
	}
	minutes, grown := aggregates.GrowMinutes(storedMins, rows)
	cells, cellGrowth := aggregates.GrowDims(storedCells, dims)
	var w cteWrites
	if len(minutes) > 0 {
		ids, bs, counts, autos := make([]int64, len(minutes)), make([]time.Time, len(minutes)), make([]int64, len(minutes)), make([]int64, len(minutes))
		for i, r := range minutes {
			ids[i], bs[i], counts[i], autos[i] = r.LinkID, r.Bucket, r.Count, r.Automated
		}
		w.Queue(writeMinutesSQL, ids, bs, counts, nodeID, autos)
	}
	if len(cells) > 0 {
		c := dimColumnsOf(cells)
		w.Queue(writeDimsSQL, c.ids, c.hours, c.dims, c.autos, c.values, nodeID, c.counts)
	}
	queueAggregates(&w, aggregates.Sum(tenants, grown, cellGrowth))
	if len(w.parts) == 0 {
		return nil
	}
	if _, err := tx.Exec(ctx, w.sql(), w.args...); err != nil {
		return fmt.Errorf("write rows and aggregates: %w", err)
	}
	return nil
}

// dedupeMinutes keeps the largest count and automated part of each key of
// rows, sorted by key.
func dedupeMinutes(rows []linkforge.RollupRow) []linkforge.RollupRow {
	type key struct{ link, bucket int64 }
	latest := make(map[key]linkforge.RollupRow, len(rows))
	for _, r := range rows {
		k := key{r.LinkID, r.Bucket.Unix()}
		if l, ok := latest[k]; ok {
			r.Count, r.Automated = max(r.Count, l.Count), max(r.Automated, l.Automated)
		}
		latest[k] = r
	}
	batch := make([]linkforge.RollupRow, 0, len(latest))
	for _, r := range latest {
		batch = append(batch, r)
	}
	slices.SortFunc(batch, func(a, b linkforge.RollupRow) int {
		return cmp.Or(cmp.Compare(a.LinkID, b.LinkID), a.Bucket.Compare(b.Bucket))
	})
	return batch
}

// cteWrites are statements that change different tables, sent as the
// data-modifying CTEs of one statement: one parse, plan and round trip
// for a flush's raw rows and every aggregate they change.
type cteWrites struct {
	parts []string
	args  []any
}

// placeholder matches a statement's parameters, renumbered by Queue.
var placeholder = regexp.MustCompile(`\$(\d+)`)

// Queue adds sql with its parameters $1… as args.
func (w *cteWrites) Queue(sql string, args ...any) {
	base := len(w.args)
	w.parts = append(w.parts, placeholder.ReplaceAllStringFunc(sql, func(p string) string {
		n, _ := strconv.Atoi(p[1:])
		return "$" + strconv.Itoa(base+n)
	}))
	w.args = append(w.args, args...)
}

// sql is the one statement.
func (w *cteWrites) sql() string {
	var b strings.Builder
	b.WriteString("WITH ")
	for i, p := range w.parts {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "w%d AS (%s)", i, p)
	}
	b.WriteString(" SELECT 1")
	return b.String()
}

// queueAggregates queues r's upserts on b, one per table that changes.
func queueAggregates(b *cteWrites, r aggregates.Rows) {
	hourly := func(sql string, rows []aggregates.Hourly, link, automated bool) {
		if len(rows) == 0 {
			return
		}
		tenants, at, links, counts, autos := make([]int64, len(rows)), make([]time.Time, len(rows)), make([]int64, len(rows)), make([]int64, len(rows)), make([]int64, len(rows))
		for i, h := range rows {
			tenants[i], at[i], links[i], counts[i], autos[i] = h.Tenant, time.Unix(h.At, 0).UTC(), h.Link, h.Count, h.Automated
		}
		switch {
		case link && automated:
			b.Queue(sql, tenants, at, links, counts, autos)
		case link:
			b.Queue(sql, tenants, at, links, counts)
		default:
			b.Queue(sql, tenants, at, counts, autos)
		}
	}
	dims := func(sql string, rows []aggregates.Dim) {
		if len(rows) == 0 {
			return
		}
		owners, names, at, autos, values, counts := make([]int64, len(rows)), make([]string, len(rows)), make([]time.Time, len(rows)), make([]bool, len(rows)), make([]string, len(rows)), make([]int64, len(rows))
		for i, d := range rows {
			owners[i], names[i], at[i], autos[i], values[i], counts[i] = d.Owner, d.Dim, time.Unix(d.At, 0).UTC(), d.Automated, d.Value, d.Count
		}
		b.Queue(sql, owners, names, at, autos, values, counts)
	}
	hourly(tenantHourlySQL, r.TenantHourly, false, true)
	hourly(linkHourlySQL, r.LinkHourly, true, true)
	hourly(linkDailySQL, r.LinkDaily, true, false)
	if len(r.LinkTotals) > 0 {
		ids, counts := make([]int64, len(r.LinkTotals)), make([]int64, len(r.LinkTotals))
		for i, t := range r.LinkTotals {
			ids[i], counts[i] = t.Link, t.Count
		}
		b.Queue(linkTotalsSQL, ids, counts)
	}
	dims(tenantDimsHourlySQL, r.TenantDimsHourly)
	dims(tenantDimsDailySQL, r.TenantDimsDaily)
	dims(linkDimsDailySQL, r.LinkDimsDaily)
}

// forgetLink takes link id of tenant out of every aggregate and deletes
// its raw rows, in the transaction that deletes the link, under aggLock:
// the tenant's rows lose what the link's rows added, the link's own rows
// go. links.rollup_clicks stays whole (the caller returns it).
func forgetLink(ctx context.Context, tx pgx.Tx, tenant, id int64) error {
	var b pgx.Batch
	b.Queue(`INSERT INTO tenant_hourly AS a (tenant_id, hour, count, automated)
		SELECT tenant_id, hour, -count, -automated FROM link_hourly WHERE tenant_id = $1 AND link_id = $2 ORDER BY hour
		ON CONFLICT (tenant_id, hour) DO UPDATE SET count = a.count + excluded.count, automated = a.automated + excluded.automated`, tenant, id)
	b.Queue(`INSERT INTO tenant_dims_hourly AS a (tenant_id, dimension, hour, automated, value, count)
		SELECT $1::bigint, dimension, hour, automated, value, -SUM(count) FROM click_dims WHERE link_id = $2
		GROUP BY 2, 3, 4, 5 ORDER BY 2, 3, 4, 5
		ON CONFLICT (tenant_id, dimension, hour, automated, value) DO UPDATE SET count = a.count + excluded.count`, tenant, id)
	b.Queue(`INSERT INTO tenant_dims_daily AS a (tenant_id, dimension, day, automated, value, count)
		SELECT $1::bigint, dimension, day, automated, value, -count FROM link_dims_daily WHERE link_id = $2 ORDER BY 2, 3, 4, 5
		ON CONFLICT (tenant_id, dimension, day, automated, value) DO UPDATE SET count = a.count + excluded.count`, tenant, id)
	b.Queue(`DELETE FROM link_hourly WHERE tenant_id = $1 AND link_id = $2`, tenant, id)
	b.Queue(`DELETE FROM link_daily WHERE tenant_id = $1 AND link_id = $2`, tenant, id)
	for _, q := range []string{
		`DELETE FROM link_dims_daily WHERE link_id = $1`,
		`DELETE FROM click_rollup WHERE link_id = $1`,
		`DELETE FROM click_dims WHERE link_id = $1`,
		`DELETE FROM click_rollup_pruned WHERE link_id = $1`,
	} {
		b.Queue(q, id)
	}
	if err := tx.SendBatch(ctx, &b).Close(); err != nil {
		return fmt.Errorf("forget link %d: %w", id, err)
	}
	return nil
}
