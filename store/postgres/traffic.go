package postgres

import (
	"fmt"
	"time"

	"github.com/linkforge/linkforge"
)

// The kinds of the rows withTraffic adds to a Stats statement.
const (
	kindAutomatedTotal = 3 // the scope's automated clicks of all time
	kindAutomated      = 4 // one bucket's automated clicks
)

// withTraffic extends a Stats statement (rows of kind, start, n, ordered by
// kind and start) with the automated clicks of the same scope, in the same
// statement and so the same snapshot: the all-time total from the traffic
// dimension's daily aggregate, and each bucket's from the traffic_minute
// rows (the minute of each automated click) of the hours that meet
// [from, to). For a tenant (linkID 0) from tenant_dims_daily and
// tenant_dims_hourly, for a link from link_dims_daily and click_dims
// (through click_dims_link_dimension). The minute's value is cast only where
// it is one, so no plan order can cast "human".
func withTraffic(query string, args []any, tenantID, linkID int64, interval string, from, to time.Time) (string, []any) {
	n := len(args)
	scope, totalTable, hourTable, scopeCol := tenantID, "tenant_dims_daily", "tenant_dims_hourly", "tenant_id"
	if linkID != 0 {
		scope, totalTable, hourTable, scopeCol = linkID, "link_dims_daily", "click_dims", "link_id"
	}
	args = append(args, scope, interval, from.Truncate(time.Hour), from, to,
		linkforge.DimTraffic.String(), linkforge.TrafficAutomated, linkforge.DimTrafficMinute.String())
	p := func(i int) string { return fmt.Sprintf("$%d", n+i) }
	return `WITH base AS (` + query + `
	), minutes AS (
		SELECT hour + (CASE WHEN value ~ '^[0-5][0-9]$' THEN value::int END) * interval '1 minute' AS m, count
		FROM ` + hourTable + ` WHERE ` + scopeCol + ` = ` + p(1) + ` AND dimension = ` + p(8) + `
		AND value ~ '^[0-5][0-9]$' AND hour >= ` + p(3) + ` AND hour < ` + p(5) + `
	)
	SELECT kind, start, n FROM base
	UNION ALL
	SELECT ` + fmt.Sprint(kindAutomatedTotal) + `, NULL, COALESCE(SUM(count), 0)::bigint FROM ` + totalTable + `
	WHERE ` + scopeCol + ` = ` + p(1) + ` AND dimension = ` + p(6) + ` AND value = ` + p(7) + `
	UNION ALL
	SELECT ` + fmt.Sprint(kindAutomated) + `, date_trunc(` + p(2) + `, m, 'UTC'), SUM(count)::bigint FROM minutes
	WHERE m >= ` + p(4) + ` AND m < ` + p(5) + ` GROUP BY 2
	ORDER BY 1, 2`, args
}
