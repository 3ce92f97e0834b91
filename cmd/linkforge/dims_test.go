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
// has its click_dims values of one traffic summing to the hour's traffic
// row of it (docs/adr/009-click-dimensions.md), the traffic rows to the
// hour's click_rollup total and their automated one to the minutes'
// automated parts, and no click_dims hour
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
	var names []string
	for d := linkforge.Dimension(0); d.Public(); d++ {
		names = append(names, "('"+d.String()+"', 0), ('"+d.String()+"', 1)")
	}
	q := `WITH r AS (
			SELECT link_id, ` + hour + ` AS hour, SUM(count) AS total, SUM(automated) AS auto FROM click_rollup GROUP BY 1, 2
		), d AS (
			SELECT link_id, hour, dimension, CASE WHEN automated THEN 1 ELSE 0 END AS a, SUM(count) AS total FROM click_dims GROUP BY 1, 2, 3, 4
		), t AS (
			SELECT link_id, hour, CASE WHEN value = 'automated' THEN 1 ELSE 0 END AS a, SUM(count) AS total FROM click_dims WHERE dimension = 'traffic' GROUP BY 1, 2, 3
		), dn (dimension, a) AS (VALUES ` + strings.Join(names, ", ") + `), w AS (
			SELECT r.link_id, r.hour, dn.dimension, dn.a, COALESCE(t.total, 0) AS total
			FROM r CROSS JOIN dn
			LEFT JOIN t ON t.link_id = r.link_id AND t.hour = r.hour AND t.a = dn.a
		)
		SELECT 0, w.link_id, CAST(w.hour AS TEXT), w.dimension || '/' || CAST(w.a AS TEXT), w.total, COALESCE(d.total, 0)
		FROM w
		LEFT JOIN d ON d.link_id = w.link_id AND d.hour = w.hour AND d.dimension = w.dimension AND d.a = w.a
		WHERE COALESCE(d.total, 0) <> w.total
		UNION ALL
		SELECT 0, r.link_id, CAST(r.hour AS TEXT), 'traffic', r.total, COALESCE(th.total, 0) + COALESCE(ta.total, 0)
		FROM r LEFT JOIN t th ON th.link_id = r.link_id AND th.hour = r.hour AND th.a = 0
		LEFT JOIN t ta ON ta.link_id = r.link_id AND ta.hour = r.hour AND ta.a = 1
		WHERE COALESCE(th.total, 0) + COALESCE(ta.total, 0) <> r.total OR COALESCE(ta.total, 0) <> r.auto
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
