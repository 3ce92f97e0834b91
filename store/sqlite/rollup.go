package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/linkforge/linkforge"
)

// UpsertRollup writes the absolute counts of nodeID in one transaction:
// UpsertClicks without dimensions.
func (db *DB) UpsertRollup(ctx context.Context, nodeID string, rows []linkforge.RollupRow) error {
	return db.UpsertClicks(ctx, nodeID, rows, nil)
}

// UpsertClicks writes the absolute minute counts (rows) and hour counts by
// dimension (dims) of nodeID in one transaction, so that a flush's minutes
// and their hours' dimensions are committed together or not at all.
// A count replaces a smaller one and never a larger one: a node's count of a
// minute only grows, so a smaller value is a stale one (a late statement, a
// journal restarted below the rollup) and a retried, replayed or late flush
// cannot lower a count. A bucket that is not the start of a minute, or a negative
// count, is a caller bug and answers EInvalid before anything is written.
func (db *DB) UpsertClicks(ctx context.Context, nodeID string, rows []linkforge.RollupRow, dims []linkforge.DimRow) error {
	if write, err := linkforge.CheckFlush(nodeID, rows, dims); !write {
		return err
	}

	tx, err := db.writer.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("sqlite: upsert rollup: %w", err)
	}
	defer tx.Rollback()
	if err := writeClicks(ctx, tx, nodeID, rows, dims); err != nil {
		return err
	}
	w := db.writes.Begin()
	ts := now()
	if err := clickEvents(ctx, tx, w, rows, ts); err != nil {
		return fmt.Errorf("sqlite: upsert rollup: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("sqlite: upsert rollup: %w", err)
	}
	w.Committed()
	return nil
}

// Stats sums the rollup over node ids for one link of the tenant
// (q.LinkID != 0; another tenant's link answers ENotFound) or for all its
// links. Rows whose minute bucket lies in [From, To) are grouped by the
// UTC start of their interval; Total counts all time.
func (db *DB) Stats(ctx context.Context, q linkforge.StatsQuery) (linkforge.Stats, error) {
	if !q.Interval.Valid() {
		return linkforge.Stats{}, linkforge.InvalidField("interval", "must be minute, hour or day")
	}
	width := int64(q.Interval.Duration() / time.Second)
	from, to := ceilUnix(q.From), ceilUnix(q.To)

	// One read transaction, so that Total and Buckets come from one snapshot.
	tx, err := db.reader.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return linkforge.Stats{}, fmt.Errorf("sqlite: stats: %w", err)
	}
	defer tx.Rollback()

	var (
		totalSQL, bucketsSQL string
		scope                int64
	)
	if q.LinkID == 0 && q.Interval != linkforge.Minute {
		return aggregateStats(ctx, tx, q.TenantID, 0, width, from, to)
	}
	if q.LinkID != 0 {
		var one int
		err := tx.QueryRowContext(ctx,
			`SELECT 1 FROM links WHERE id = ? AND tenant_id = ?`, q.LinkID, q.TenantID).Scan(&one)
		if errors.Is(err, sql.ErrNoRows) {
			return linkforge.Stats{}, notFound("link")
		}
		if err != nil {
			return linkforge.Stats{}, fmt.Errorf("sqlite: stats: %w", err)
		}
		if q.Interval != linkforge.Minute {
			return aggregateStats(ctx, tx, q.TenantID, q.LinkID, width, from, to)
		}
		scope = q.LinkID
		// The sum of its rollup rows (writeClicks keeps it).
		totalSQL = `SELECT rollup_clicks FROM links WHERE id = ?`
		// Integer division floors here because buckets are after 1970.
		bucketsSQL = `SELECT bucket / ?1 * ?1 AS start, SUM(count) FROM click_rollup
			WHERE link_id = ?2 AND bucket >= ?3 AND bucket < ?4 GROUP BY start ORDER BY start`
	} else {
		// The join keeps rows of deleted links (a flush racing a delete)
		// and of other tenants out.
		scope = q.TenantID
		// The all-time total from the aggregate (migration 00006): the
		// raw rows of a busy tenant are millions.
		totalSQL = `SELECT COALESCE(SUM(count), 0) FROM tenant_hourly WHERE tenant_id = ?`
		bucketsSQL = `SELECT r.bucket / ?1 * ?1 AS start, SUM(r.count) FROM click_rollup r
			JOIN links l ON l.id = r.link_id
			WHERE l.tenant_id = ?2 AND r.bucket >= ?3 AND r.bucket < ?4 GROUP BY start ORDER BY start`
	}

	var st linkforge.Stats
	if err := tx.QueryRowContext(ctx, totalSQL, scope).Scan(&st.Total); err != nil {
		return linkforge.Stats{}, fmt.Errorf("sqlite: stats total: %w", err)
	}
	rows, err := tx.QueryContext(ctx, bucketsSQL, width, scope, from, to)
	if err != nil {
		return linkforge.Stats{}, fmt.Errorf("sqlite: stats buckets: %w", err)
	}
	if st.Buckets, err = scanBuckets(rows); err != nil {
		return linkforge.Stats{}, fmt.Errorf("sqlite: stats buckets: %w", err)
	}
	if err := addTraffic(ctx, tx, &st, q.TenantID, q.LinkID, width, [][2]int64{{from, to}}, 0, 0); err != nil {
		return linkforge.Stats{}, err
	}
	return st, nil
}

// ceilUnix returns the first whole unix second at or after t: a bucket
// (whole seconds) is at or after t exactly when it is at or after
// ceilUnix(t), so both bounds of [From, To) keep their meaning for times
// with fractions of a second.
func ceilUnix(t time.Time) int64 {
	s := t.Unix()
	if t.Nanosecond() > 0 {
		s++
	}
	return s
}

// NodeRollup returns nodeID's rollup rows whose bucket is at or after from
// (the bucket index keeps it to those minutes).
func (db *DB) NodeRollup(ctx context.Context, nodeID string, from time.Time) ([]linkforge.RollupRow, error) {
	out, err := query(ctx, db.reader, scanRollupRow,
		`SELECT link_id, bucket, count, automated FROM click_rollup WHERE bucket >= ? AND node_id = ?`,
		ceilUnix(from), nodeID)
	if err != nil {
		return nil, fmt.Errorf("sqlite: node rollup of %q: %w", nodeID, err)
	}
	return out, nil
}

// scanRollupRow reads (link_id, bucket, count, automated).
func scanRollupRow(row scanner) (linkforge.RollupRow, error) {
	var (
		r      linkforge.RollupRow
		bucket int64
	)
	err := row.Scan(&r.LinkID, &bucket, &r.Count, &r.Automated)
	r.Bucket = time.Unix(bucket, 0).UTC()
	return r, err
}

// scanBuckets reads rows of (bucket start in unix seconds, count), the shape
// of every stats query, and closes them. Never nil: an empty range is [].
func scanBuckets(rows *sql.Rows) ([]linkforge.StatsBucket, error) {
	return collect(rows, func(r scanner) (linkforge.StatsBucket, error) {
		var (
			start int64
			b     linkforge.StatsBucket
		)
		err := r.Scan(&start, &b.Count)
		b.Start = time.Unix(start, 0).UTC()
		return b, err
	})
}
