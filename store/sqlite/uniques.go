package sqlite

import (
	"context"
	"fmt"
	"time"

	"github.com/linkforge/linkforge"
)

// UpsertUniques replaces nodeID's sketches of rows' (link, day)s, in one
// transaction.
func (db *DB) UpsertUniques(ctx context.Context, nodeID string, rows []linkforge.UniqueSketch) error {
	if len(rows) == 0 {
		return nil
	}
	tx, err := db.writer.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("sqlite: upsert uniques: %w", err)
	}
	defer tx.Rollback()
	stmt, err := tx.PrepareContext(ctx, `INSERT INTO click_uniques (link_id, day, node_id, sketch) VALUES (?, ?, ?, ?)
		ON CONFLICT (link_id, day, node_id) DO UPDATE SET sketch = excluded.sketch`)
	if err != nil {
		return fmt.Errorf("sqlite: upsert uniques: %w", err)
	}
	defer stmt.Close()
	for _, r := range rows {
		if _, err := stmt.ExecContext(ctx, r.LinkID, r.Day.Unix(), nodeID, r.Sketch); err != nil {
			return fmt.Errorf("sqlite: upsert uniques: link %d day %d: %w", r.LinkID, r.Day.Unix(), err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("sqlite: upsert uniques: %w", err)
	}
	return nil
}

// NodeUniques returns nodeID's stored sketches of keys, uniquesPerRead
// keys to a statement: a flush of a burst's links asks for a thousand at
// once, and a query each was 8 % of a one-off link's flush.
func (db *DB) NodeUniques(ctx context.Context, nodeID string, keys []linkforge.UniqueKey) ([]linkforge.UniqueSketch, error) {
	var out []linkforge.UniqueSketch
	args := make([]any, 0, 1+2*min(len(keys), uniquesPerRead))
	for len(keys) > 0 {
		n := min(len(keys), uniquesPerRead)
		args = append(args[:0], nodeID)
		for _, k := range keys[:n] {
			args = append(args, k.LinkID, k.Day.Unix())
		}
		rows, err := query(ctx, db.reader, scanUnique,
			`SELECT link_id, day, node_id, sketch FROM click_uniques
			WHERE node_id = ? AND (link_id, day) IN (VALUES `+valuesList(n, 2)+`)`, args...)
		if err != nil {
			return nil, fmt.Errorf("sqlite: node uniques of %q: %w", nodeID, err)
		}
		out = append(out, rows...)
		keys = keys[n:]
	}
	return out, nil
}

// uniquesPerRead bounds NodeUniques' keys per statement (two parameters
// each, under SQLite's 32,766).
const uniquesPerRead = 500

// DailyUniques returns every node's sketches of the days in [from, to) of
// one link of the tenant, or of all its links (linkID 0).
func (db *DB) DailyUniques(ctx context.Context, tenantID, linkID int64, from, to time.Time) ([]linkforge.UniqueSketch, error) {
	out, err := query(ctx, db.reader, scanUnique,
		`SELECT c.link_id, c.day, c.node_id, c.sketch FROM click_uniques c JOIN links l ON l.id = c.link_id
		WHERE l.tenant_id = ? AND (? = 0 OR c.link_id = ?) AND c.day >= ? AND c.day < ?
		ORDER BY c.day`,
		tenantID, linkID, linkID, ceilUnix(from), ceilUnix(to))
	if err != nil {
		return nil, fmt.Errorf("sqlite: daily uniques: %w", err)
	}
	return out, nil
}

// scanUnique reads (link_id, day, node_id, sketch).
func scanUnique(row scanner) (linkforge.UniqueSketch, error) {
	var (
		u   linkforge.UniqueSketch
		day int64
	)
	err := row.Scan(&u.LinkID, &day, &u.NodeID, &u.Sketch)
	u.Day = time.Unix(day, 0).UTC()
	return u, err
}
