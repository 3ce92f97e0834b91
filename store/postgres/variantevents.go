package postgres

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/linkforge/linkforge"
)

// variantEventsSQL reads the variant dimension's totals of the hours of
// the flushed (link, minute) pairs of $1 and $2: primary key lookups, one
// per flushed link and hour.
const variantEventsSQL = `WITH p AS (
		SELECT DISTINCT link_id, date_trunc('hour', bucket, 'UTC') AS hour
		FROM unnest($1::bigint[], $2::timestamptz[]) AS f (link_id, bucket)
	)
	SELECT d.link_id, d.hour, d.value, SUM(d.count)::bigint FROM click_dims d
	JOIN p ON d.link_id = p.link_id AND d.hour = p.hour AND d.dimension = 'variant'
	GROUP BY d.link_id, d.hour, d.value
	ORDER BY d.link_id, d.hour, d.value`

// variantHours adds the A/B test hours to the click rows crs of a flush
// (linkforge.WithVariants).
func variantHours(ctx context.Context, tx execer, crs []linkforge.ClickRow, ids []int64, buckets []time.Time) error {
	if len(crs) == 0 {
		return nil
	}
	rows, err := tx.Query(ctx, variantEventsSQL, ids, buckets)
	if err != nil {
		return err
	}
	vrs, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (linkforge.VariantRow, error) {
		var r linkforge.VariantRow
		err := row.Scan(&r.LinkID, &r.Hour, &r.Value, &r.Count)
		return r, err
	})
	if err != nil {
		return err
	}
	linkforge.WithVariants(crs, vrs)
	return nil
}
