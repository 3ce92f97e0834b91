package sqlite

import (
	"context"
	"time"

	"github.com/linkforge/linkforge"
)

// variantEventsSQL reads the variant dimension's totals of the hours of
// the flushed (link, minute) pairs of ?1 (the JSON of clickEvents): primary
// key lookups, one per flushed link and hour.
const variantEventsSQL = `WITH p AS (
		SELECT DISTINCT json_extract(value, '$[0]') AS link_id,
			json_extract(value, '$[1]') - json_extract(value, '$[1]') % 3600 AS hour
		FROM json_each(?1)
	)
	SELECT d.link_id, d.hour, d.value, SUM(d.count) FROM click_dims d
	JOIN p ON d.link_id = p.link_id AND d.hour = p.hour AND d.dimension = 'variant'
	GROUP BY d.link_id, d.hour, d.value
	ORDER BY d.link_id, d.hour, d.value`

// variantHours adds the A/B test hours to the click rows crs of a flush
// (linkforge.WithVariants).
func variantHours(ctx context.Context, tx txQuerier, crs []linkforge.ClickRow, pairs string) error {
	if len(crs) == 0 {
		return nil
	}
	q, err := tx.QueryContext(ctx, variantEventsSQL, pairs)
	if err != nil {
		return err
	}
	rows, err := collect(q, func(q scanner) (linkforge.VariantRow, error) {
		var (
			r    linkforge.VariantRow
			hour int64
		)
		err := q.Scan(&r.LinkID, &hour, &r.Value, &r.Count)
		r.Hour = time.Unix(hour, 0).UTC()
		return r, err
	})
	if err != nil {
		return err
	}
	linkforge.WithVariants(crs, rows)
	return nil
}
