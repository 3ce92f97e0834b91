package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/linkforge/linkforge"
)

// UpsertUniques replaces nodeID's sketches of rows' (link, day)s, in one
// statement.
func (db *DB) UpsertUniques(ctx context.Context, nodeID string, rows []linkforge.UniqueSketch) error {
	if len(rows) == 0 {
		return nil
	}
	ids := make([]int64, len(rows))
	days := make([]time.Time, len(rows))
	sketches := make([][]byte, len(rows))
	for i, r := range rows {
		ids[i], days[i], sketches[i] = r.LinkID, r.Day.UTC(), r.Sketch
	}
	if _, err := db.pool.Exec(ctx, `INSERT INTO click_uniques (link_id, day, node_id, sketch)
		SELECT u.link_id, (u.day AT TIME ZONE 'UTC')::date, $4, u.sketch
		FROM unnest($1::bigint[], $2::timestamptz[], $3::bytea[]) AS u (link_id, day, sketch)
		ON CONFLICT (link_id, day, node_id) DO UPDATE SET sketch = excluded.sketch`,
		ids, days, sketches, nodeID); err != nil {
		return fmt.Errorf("postgres: upsert uniques: %d sketches: %w", len(rows), err)
	}
	return nil
}

// NodeUniques returns nodeID's stored sketches of keys.
func (db *DB) NodeUniques(ctx context.Context, nodeID string, keys []linkforge.UniqueKey) ([]linkforge.UniqueSketch, error) {
	if len(keys) == 0 {
		return nil, nil
	}
	ids := make([]int64, len(keys))
	days := make([]time.Time, len(keys))
	for i, k := range keys {
		ids[i], days[i] = k.LinkID, k.Day.UTC()
	}
	out, err := query(ctx, db.pool, scanUnique,
		`SELECT c.link_id, c.day, c.node_id, c.sketch
		FROM unnest($1::bigint[], $2::timestamptz[]) AS k (link_id, day)
		JOIN click_uniques c ON c.link_id = k.link_id AND c.day = (k.day AT TIME ZONE 'UTC')::date AND c.node_id = $3`,
		ids, days, nodeID)
	if err != nil {
		return nil, fmt.Errorf("postgres: node uniques of %q: %w", nodeID, err)
	}
	return out, nil
}

// DailyUniques returns every node's sketches of the days in [from, to) of
// one link of the tenant, or of all its links (linkID 0). The join with
// links keeps other tenants' rows out.
func (db *DB) DailyUniques(ctx context.Context, tenantID, linkID int64, from, to time.Time) ([]linkforge.UniqueSketch, error) {
	out, err := query(ctx, db.pool, scanUnique,
		`SELECT c.link_id, c.day, c.node_id, c.sketch FROM click_uniques c JOIN links l ON l.id = c.link_id
		WHERE l.tenant_id = $1 AND ($2 = 0 OR c.link_id = $2)
		AND c.day >= ($3::timestamptz AT TIME ZONE 'UTC')::date AND c.day < ($4::timestamptz AT TIME ZONE 'UTC')::date
		ORDER BY c.day`,
		tenantID, linkID, dayCeil(from), dayCeil(to))
	if err != nil {
		return nil, fmt.Errorf("postgres: daily uniques: %w", err)
	}
	return out, nil
}

// dayCeil returns the first UTC midnight at or after t.
func dayCeil(t time.Time) time.Time {
	d := t.UTC().Truncate(24 * time.Hour)
	if d.Before(t) {
		d = d.Add(24 * time.Hour)
	}
	return d
}

// scanUnique reads (link_id, day, node_id, sketch).
func scanUnique(row pgx.Row) (linkforge.UniqueSketch, error) {
	var u linkforge.UniqueSketch
	err := row.Scan(&u.LinkID, &u.Day, &u.NodeID, &u.Sketch)
	y, m, d := u.Day.Date()
	u.Day = time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
	return u, err
}
