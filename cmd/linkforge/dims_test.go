package main

import (
	"context"
	"database/sql"

	"path/filepath"
	"strings"
	"testing"

	"github.com/linkforge/linkforge"
)

// checkDimsInvariant fails t unless, in the store read straight from the
// database (one statement, one snapshot), every link, hour and dimension
// has its click_dims values summing to the hour's click_rollup total
// (docs/adr/009-click-dimensions.md), or to one traffic's part of it (the
// hour's traffic rows) for the dimensions whose other traffic's rows are
// not stored (linkforge.Dimension.StoredSum, docs/performance.md; the
// minute's are the rollup rows' automated parts), and no click_dims hour
// lacks rollup rows. It returns the number of (link, hour) pairs
// checked, so that a caller can tell the check from a vacuous one.
func checkDimsInvariant(t *testing.T, n *node, dbURL string) int {
	t.Helper()
	var db *sql.DB
	hour := "date_trunc('hour', bucket, 'UTC')"
	if dbURL == "" {
		db = mustOpenSQL(t, "sqlite", "file:"+filepath.Join(n.dataDir, sqliteFile)+"?mode=ro&_pragma=busy_timeout(5000)")
		hour = "bucket / 3600 * 3600"
	} else {
		db = mustOpenSQL(t, "pgx", dbURL)
	}
	defer db.Close()
	names := make([]string, linkforge.NumDimensions)
	for d := range linkforge.NumDimensions {
		names[d] = "('" + d.String() + "', '" + d.StoredSum() + "')"
	}
	q := `WITH r AS (
			SELECT link_id, ` + hour + ` AS hour, SUM(count) AS total FROM click_rollup GROUP BY 1, 2
		), d AS (
			SELECT link_id, hour, dimension, SUM(count) AS total FROM click_dims
			WHERE dimension <> 'traffic_minute' GROUP BY 1, 2, 3
			UNION ALL
			SELECT link_id, ` + hour + `, 'traffic_minute', SUM(automated) FROM click_rollup GROUP BY 1, 2
		), t AS (
			SELECT link_id, hour, value, SUM(count) AS total FROM click_dims WHERE dimension = 'traffic' GROUP BY 1, 2, 3
		), dn (dimension, part) AS (VALUES ` + strings.Join(names, ", ") + `), w AS (
			SELECT r.link_id, r.hour, dn.dimension, CASE WHEN dn.part = '' THEN r.total ELSE COALESCE(t.total, 0) END AS total
			FROM r CROSS JOIN dn
			LEFT JOIN t ON t.link_id = r.link_id AND t.hour = r.hour AND t.value = dn.part
		)
		SELECT 0, w.link_id, CAST(w.hour AS TEXT), w.dimension, w.total, COALESCE(d.total, 0)
		FROM w
		LEFT JOIN d ON d.link_id = w.link_id AND d.hour = w.hour AND d.dimension = w.dimension
		WHERE COALESCE(d.total, 0) <> w.total
		UNION ALL
		SELECT 0, d.link_id, CAST(d.hour AS TEXT), d.dimension, 0, d.total
		FROM d LEFT JOIN r ON r.link_id = d.link_id AND r.hour = d.hour
		WHERE r.link_id IS NULL
		UNION ALL
		SELECT 1, COUNT(*), '', '', 0, 0 FROM r`
	rows, err := db.QueryContext(context.Background(), q)
	if err != nil {
		t.Fatalf("check click_dims: %v", err)
	}
	defer rows.Close()
	checked := 0
	for rows.Next() {
		var (
			kind, link   int64
			hr, dim      string
			total, inDim int64
		)
		if err := rows.Scan(&kind, &link, &hr, &dim, &total, &inDim); err != nil {
			t.Fatalf("check click_dims: %v", err)
		}
		if kind == 1 {
			checked = int(link)
			continue
		}
		t.Errorf("link %d hour %s: %s values sum to %d, want %d (the hour's rollup, or its traffic's part)", link, hr, dim, inDim, total)
	}
	if err := rows.Err(); err != nil {
		t.Fatalf("check click_dims: %v", err)
	}
	if checked == 0 {
		t.Errorf("click_dims check: no rollup hour to check")
	}
	return checked
}
