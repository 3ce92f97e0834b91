package postgres

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/linkforge/linkforge"
)

// PartitionsAhead is how many months after the current one EnsurePartitions
// makes: a flush never waits for a partition, even if the daily job misses
// weeks (and the DEFAULT partition takes the rows if it misses months).
const PartitionsAhead = 2

// partitioned are the tables migration 00021 partitions by UTC month, with
// their time column and the retention kind that removes their rows.
var partitioned = []struct {
	table, col string
	kind       linkforge.PruneKind
}{
	{"click_rollup", "bucket", linkforge.PruneMinutes},
	{"click_dims", "hour", linkforge.PruneLinkHours},
}

// monthOf is the start of t's UTC month.
func monthOf(t time.Time) time.Time {
	t = t.UTC()
	return time.Date(t.Year(), t.Month(), 1, 0, 0, 0, 0, time.UTC)
}

// EnsurePartitions makes the monthly partitions of now's month and the
// PartitionsAhead next ones that do not exist yet, moving rows of those
// months out of the DEFAULT partition (the retention job calls it daily).
func (db *DB) EnsurePartitions(ctx context.Context, now time.Time) error {
	for _, p := range partitioned {
		for k := range PartitionsAhead + 1 {
			m := monthOf(now).AddDate(0, k, 0)
			if _, err := db.pool.Exec(ctx, `SELECT linkforge_ensure_month($1, $2, $3)`, p.table, p.col, m); err != nil {
				return fmt.Errorf("postgres: partition %s of %s: %w", m.Format("2006-01"), p.table, err)
			}
		}
	}
	return nil
}

// Partitions returns table's monthly partitions by the start of their
// month (the DEFAULT partition is not among them).
func (db *DB) Partitions(ctx context.Context, table string) (map[string]time.Time, error) {
	rows, err := db.pool.Query(ctx, `SELECT c.relname FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
		WHERE i.inhparent = to_regclass($1)`, table)
	if err != nil {
		return nil, fmt.Errorf("postgres: partitions of %s: %w", table, err)
	}
	names, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, fmt.Errorf("postgres: partitions of %s: %w", table, err)
	}
	out := map[string]time.Time{}
	for _, name := range names {
		suffix, ok := strings.CutPrefix(name, table+"_")
		if !ok || len(suffix) != 6 {
			continue
		}
		m, err := time.Parse("200601", suffix)
		if err != nil {
			continue
		}
		out[name] = m
	}
	return out, nil
}

// dropMonths drops the partitions of the table that kind prunes whose
// whole month is before the bound, and returns the rows they held: a
// month goes in one statement instead of row by row. The minute rows'
// counts first move into click_rollup_pruned, as pruneMinutesSQL does.
func (db *DB) dropMonths(ctx context.Context, kind linkforge.PruneKind, before time.Time) (int64, error) {
	var table string
	for _, p := range partitioned {
		if p.kind == kind {
			table = p.table
		}
	}
	if table == "" {
		return 0, nil
	}
	parts, err := db.Partitions(ctx, table)
	if err != nil {
		return 0, err
	}
	var removed int64
	for name, m := range parts {
		if m.AddDate(0, 1, 0).After(before) {
			continue
		}
		n, err := db.dropMonth(ctx, table, name)
		if err != nil {
			return removed, err
		}
		removed += n
	}
	return removed, nil
}

func (db *DB) dropMonth(ctx context.Context, table, name string) (int64, error) {
	var n int64
	ident := pgx.Identifier{name}.Sanitize()
	err := pgx.BeginFunc(ctx, db.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, int64(aggLock)); err != nil {
			return err
		}
		if err := tx.QueryRow(ctx, `SELECT count(*) FROM `+ident).Scan(&n); err != nil {
			return err
		}
		if table == "click_rollup" {
			if _, err := tx.Exec(ctx, `INSERT INTO click_rollup_pruned AS p (link_id, node_id, count)
				SELECT link_id, node_id, SUM(count) FROM `+ident+` GROUP BY 1, 2 ORDER BY 1, 2
				ON CONFLICT (link_id, node_id) DO UPDATE SET count = p.count + excluded.count`); err != nil {
				return err
			}
		}
		_, err := tx.Exec(ctx, `DROP TABLE `+ident)
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("postgres: drop partition %s: %w", name, err)
	}
	return n, nil
}
