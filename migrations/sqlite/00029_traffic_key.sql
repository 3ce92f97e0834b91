-- Traffic is a key column of the dimension rows (docs/adr/009-click-dimensions.md):
-- a row is (link, hour, dimension, automated, value, node), and the same
-- for the aggregates that sum them. The traffic shadows' rows
-- ("human:<dim>", "automated:<dim>") become rows of <dim> under their
-- traffic, with the same counts, so that the journal's flushed marks still
-- line up; the all-traffic rows of those dimensions go, the two traffics'
-- rows sum to them; a traffic row takes the traffic of its value. Rows of
-- a group with no shadow at all (hours counted before them) stay, as
-- human: their totals are kept, as DimTraffic's default counts them.
-- Placeholders and traffic_minute rows (00028 moved them into
-- click_rollup.automated) are dropped. The tables are rebuilt for their
-- new primary keys; links_agg_delete, which names their columns, with them.
-- The flush keeps the aggregates in Go (00025, store/sqlite/dims.go).
-- Down writes the old shape back: shadow rows from the traffic rows, and
-- the all-traffic rows as their sums, in the groups that have traffic rows
-- (the others are the hours counted before them, as they were).
-- +goose Up
DROP TRIGGER links_agg_delete;
CREATE TABLE click_dims_new (
    link_id   INTEGER NOT NULL,
    hour      INTEGER NOT NULL,
    dimension TEXT    NOT NULL,
    automated INTEGER NOT NULL CHECK (automated IN (0, 1)),
    value     TEXT    NOT NULL,
    node_id   TEXT    NOT NULL,
    count     INTEGER NOT NULL CHECK (count >= 0),
    PRIMARY KEY (link_id, hour, dimension, automated, value, node_id)
) WITHOUT ROWID;
INSERT INTO click_dims_new (link_id, hour, node_id, dimension, automated, value, count)
SELECT link_id, hour, node_id, dim, automated, value, SUM(count) FROM (
WITH per AS (
    SELECT link_id, hour, node_id, CASE WHEN instr(dimension, ':') > 0 THEN substr(dimension, instr(dimension, ':') + 1) ELSE dimension END AS dim, value,
        SUM(CASE WHEN dimension LIKE '%:%' THEN 0 ELSE count END) AS a,
        SUM(CASE WHEN dimension LIKE 'human:%' THEN count ELSE 0 END) AS h,
        SUM(CASE WHEN dimension LIKE 'automated:%' THEN count ELSE 0 END) AS u
    FROM click_dims WHERE dimension IN ('country', 'referrer', 'device', 'browser', 'os', 'utm_source', 'variant', 'human:country', 'automated:country', 'human:referrer', 'automated:referrer', 'human:device', 'automated:device', 'human:browser', 'automated:browser', 'human:os', 'automated:os', 'human:utm_source', 'automated:utm_source', 'human:variant', 'automated:variant') AND value NOT IN ('(HUMAN)', '(AUTOMATED)')
    GROUP BY link_id, hour, node_id, CASE WHEN instr(dimension, ':') > 0 THEN substr(dimension, instr(dimension, ':') + 1) ELSE dimension END, value
), bad AS (
    SELECT link_id, hour, node_id, dim, SUM(a) - SUM(h) - SUM(u) AS rest FROM per GROUP BY link_id, hour, node_id, dim HAVING MIN(a - u) < 0
), human AS (
    SELECT p.link_id, p.hour, p.node_id, p.dim, p.value, CASE WHEN b.dim IS NULL THEN p.a - p.u ELSE p.h END AS n
    FROM per p LEFT JOIN bad b ON b.link_id = p.link_id AND b.hour = p.hour AND b.node_id = p.node_id AND b.dim = p.dim
)
SELECT link_id, hour, node_id, dim, 1 AS automated, value, u AS count FROM per WHERE u > 0
UNION ALL
SELECT link_id, hour, node_id, dim, 0, value, n FROM human WHERE n > 0
UNION ALL
SELECT link_id, hour, node_id, dim, 0, '(more)', rest FROM bad WHERE rest > 0
UNION ALL
SELECT link_id, hour, node_id, dimension, dimension = 'traffic' AND value = 'automated', value, count FROM click_dims
WHERE dimension NOT IN ('country', 'referrer', 'device', 'browser', 'os', 'utm_source', 'variant', 'human:country', 'automated:country', 'human:referrer', 'automated:referrer', 'human:device', 'automated:device', 'human:browser', 'automated:browser', 'human:os', 'automated:os', 'human:utm_source', 'automated:utm_source', 'human:variant', 'automated:variant') AND dimension <> 'traffic_minute'
) c GROUP BY link_id, hour, node_id, dim, automated, value;
DROP TABLE click_dims;
ALTER TABLE click_dims_new RENAME TO click_dims;
CREATE TABLE tenant_dims_hourly_new (
    tenant_id INTEGER NOT NULL,
    hour      INTEGER NOT NULL,
    dimension TEXT    NOT NULL,
    automated INTEGER NOT NULL CHECK (automated IN (0, 1)),
    value     TEXT    NOT NULL,
    count     INTEGER NOT NULL,
    PRIMARY KEY (tenant_id, dimension, hour, automated, value)
) WITHOUT ROWID;
INSERT INTO tenant_dims_hourly_new (tenant_id, hour, dimension, automated, value, count)
SELECT tenant_id, hour, dim, automated, value, SUM(count) FROM (
WITH per AS (
    SELECT tenant_id, hour, CASE WHEN instr(dimension, ':') > 0 THEN substr(dimension, instr(dimension, ':') + 1) ELSE dimension END AS dim, value,
        SUM(CASE WHEN dimension LIKE '%:%' THEN 0 ELSE count END) AS a,
        SUM(CASE WHEN dimension LIKE 'human:%' THEN count ELSE 0 END) AS h,
        SUM(CASE WHEN dimension LIKE 'automated:%' THEN count ELSE 0 END) AS u
    FROM tenant_dims_hourly WHERE dimension IN ('country', 'referrer', 'device', 'browser', 'os', 'utm_source', 'variant', 'human:country', 'automated:country', 'human:referrer', 'automated:referrer', 'human:device', 'automated:device', 'human:browser', 'automated:browser', 'human:os', 'automated:os', 'human:utm_source', 'automated:utm_source', 'human:variant', 'automated:variant') AND value NOT IN ('(HUMAN)', '(AUTOMATED)')
    GROUP BY tenant_id, hour, CASE WHEN instr(dimension, ':') > 0 THEN substr(dimension, instr(dimension, ':') + 1) ELSE dimension END, value
), bad AS (
    SELECT tenant_id, hour, dim, SUM(a) - SUM(h) - SUM(u) AS rest FROM per GROUP BY tenant_id, hour, dim HAVING MIN(a - u) < 0
), human AS (
    SELECT p.tenant_id, p.hour, p.dim, p.value, CASE WHEN b.dim IS NULL THEN p.a - p.u ELSE p.h END AS n
    FROM per p LEFT JOIN bad b ON b.tenant_id = p.tenant_id AND b.hour = p.hour AND b.dim = p.dim
)
SELECT tenant_id, hour, dim, 1 AS automated, value, u AS count FROM per WHERE u > 0
UNION ALL
SELECT tenant_id, hour, dim, 0, value, n FROM human WHERE n > 0
UNION ALL
SELECT tenant_id, hour, dim, 0, '(more)', rest FROM bad WHERE rest > 0
UNION ALL
SELECT tenant_id, hour, dimension, dimension = 'traffic' AND value = 'automated', value, count FROM tenant_dims_hourly
WHERE dimension NOT IN ('country', 'referrer', 'device', 'browser', 'os', 'utm_source', 'variant', 'human:country', 'automated:country', 'human:referrer', 'automated:referrer', 'human:device', 'automated:device', 'human:browser', 'automated:browser', 'human:os', 'automated:os', 'human:utm_source', 'automated:utm_source', 'human:variant', 'automated:variant') AND dimension <> 'traffic_minute'
) c GROUP BY tenant_id, hour, dim, automated, value;
DROP TABLE tenant_dims_hourly;
ALTER TABLE tenant_dims_hourly_new RENAME TO tenant_dims_hourly;
CREATE TABLE link_dims_daily_new (
    link_id   INTEGER NOT NULL,
    day       INTEGER NOT NULL,
    dimension TEXT    NOT NULL,
    automated INTEGER NOT NULL CHECK (automated IN (0, 1)),
    value     TEXT    NOT NULL,
    count     INTEGER NOT NULL,
    PRIMARY KEY (link_id, dimension, day, automated, value)
) WITHOUT ROWID;
INSERT INTO link_dims_daily_new (link_id, day, dimension, automated, value, count)
SELECT link_id, day, dim, automated, value, SUM(count) FROM (
WITH per AS (
    SELECT link_id, day, CASE WHEN instr(dimension, ':') > 0 THEN substr(dimension, instr(dimension, ':') + 1) ELSE dimension END AS dim, value,
        SUM(CASE WHEN dimension LIKE '%:%' THEN 0 ELSE count END) AS a,
        SUM(CASE WHEN dimension LIKE 'human:%' THEN count ELSE 0 END) AS h,
        SUM(CASE WHEN dimension LIKE 'automated:%' THEN count ELSE 0 END) AS u
    FROM link_dims_daily WHERE dimension IN ('country', 'referrer', 'device', 'browser', 'os', 'utm_source', 'variant', 'human:country', 'automated:country', 'human:referrer', 'automated:referrer', 'human:device', 'automated:device', 'human:browser', 'automated:browser', 'human:os', 'automated:os', 'human:utm_source', 'automated:utm_source', 'human:variant', 'automated:variant') AND value NOT IN ('(HUMAN)', '(AUTOMATED)')
    GROUP BY link_id, day, CASE WHEN instr(dimension, ':') > 0 THEN substr(dimension, instr(dimension, ':') + 1) ELSE dimension END, value
), bad AS (
    SELECT link_id, day, dim, SUM(a) - SUM(h) - SUM(u) AS rest FROM per GROUP BY link_id, day, dim HAVING MIN(a - u) < 0
), human AS (
    SELECT p.link_id, p.day, p.dim, p.value, CASE WHEN b.dim IS NULL THEN p.a - p.u ELSE p.h END AS n
    FROM per p LEFT JOIN bad b ON b.link_id = p.link_id AND b.day = p.day AND b.dim = p.dim
)
SELECT link_id, day, dim, 1 AS automated, value, u AS count FROM per WHERE u > 0
UNION ALL
SELECT link_id, day, dim, 0, value, n FROM human WHERE n > 0
UNION ALL
SELECT link_id, day, dim, 0, '(more)', rest FROM bad WHERE rest > 0
UNION ALL
SELECT link_id, day, dimension, dimension = 'traffic' AND value = 'automated', value, count FROM link_dims_daily
WHERE dimension NOT IN ('country', 'referrer', 'device', 'browser', 'os', 'utm_source', 'variant', 'human:country', 'automated:country', 'human:referrer', 'automated:referrer', 'human:device', 'automated:device', 'human:browser', 'automated:browser', 'human:os', 'automated:os', 'human:utm_source', 'automated:utm_source', 'human:variant', 'automated:variant') AND dimension <> 'traffic_minute'
) c GROUP BY link_id, day, dim, automated, value;
DROP TABLE link_dims_daily;
ALTER TABLE link_dims_daily_new RENAME TO link_dims_daily;
CREATE TABLE tenant_dims_daily_new (
    tenant_id INTEGER NOT NULL,
    day       INTEGER NOT NULL,
    dimension TEXT    NOT NULL,
    automated INTEGER NOT NULL CHECK (automated IN (0, 1)),
    value     TEXT    NOT NULL,
    count     INTEGER NOT NULL,
    PRIMARY KEY (tenant_id, dimension, day, automated, value)
) WITHOUT ROWID;
INSERT INTO tenant_dims_daily_new (tenant_id, day, dimension, automated, value, count)
SELECT tenant_id, day, dim, automated, value, SUM(count) FROM (
WITH per AS (
    SELECT tenant_id, day, CASE WHEN instr(dimension, ':') > 0 THEN substr(dimension, instr(dimension, ':') + 1) ELSE dimension END AS dim, value,
        SUM(CASE WHEN dimension LIKE '%:%' THEN 0 ELSE count END) AS a,
        SUM(CASE WHEN dimension LIKE 'human:%' THEN count ELSE 0 END) AS h,
        SUM(CASE WHEN dimension LIKE 'automated:%' THEN count ELSE 0 END) AS u
    FROM tenant_dims_daily WHERE dimension IN ('country', 'referrer', 'device', 'browser', 'os', 'utm_source', 'variant', 'human:country', 'automated:country', 'human:referrer', 'automated:referrer', 'human:device', 'automated:device', 'human:browser', 'automated:browser', 'human:os', 'automated:os', 'human:utm_source', 'automated:utm_source', 'human:variant', 'automated:variant') AND value NOT IN ('(HUMAN)', '(AUTOMATED)')
    GROUP BY tenant_id, day, CASE WHEN instr(dimension, ':') > 0 THEN substr(dimension, instr(dimension, ':') + 1) ELSE dimension END, value
), bad AS (
    SELECT tenant_id, day, dim, SUM(a) - SUM(h) - SUM(u) AS rest FROM per GROUP BY tenant_id, day, dim HAVING MIN(a - u) < 0
), human AS (
    SELECT p.tenant_id, p.day, p.dim, p.value, CASE WHEN b.dim IS NULL THEN p.a - p.u ELSE p.h END AS n
    FROM per p LEFT JOIN bad b ON b.tenant_id = p.tenant_id AND b.day = p.day AND b.dim = p.dim
)
SELECT tenant_id, day, dim, 1 AS automated, value, u AS count FROM per WHERE u > 0
UNION ALL
SELECT tenant_id, day, dim, 0, value, n FROM human WHERE n > 0
UNION ALL
SELECT tenant_id, day, dim, 0, '(more)', rest FROM bad WHERE rest > 0
UNION ALL
SELECT tenant_id, day, dimension, dimension = 'traffic' AND value = 'automated', value, count FROM tenant_dims_daily
WHERE dimension NOT IN ('country', 'referrer', 'device', 'browser', 'os', 'utm_source', 'variant', 'human:country', 'automated:country', 'human:referrer', 'automated:referrer', 'human:device', 'automated:device', 'human:browser', 'automated:browser', 'human:os', 'automated:os', 'human:utm_source', 'automated:utm_source', 'human:variant', 'automated:variant') AND dimension <> 'traffic_minute'
) c GROUP BY tenant_id, day, dim, automated, value;
DROP TABLE tenant_dims_daily;
ALTER TABLE tenant_dims_daily_new RENAME TO tenant_dims_daily;
CREATE INDEX click_dims_hour ON click_dims (hour);
CREATE INDEX click_dims_link_dimension ON click_dims (link_id, dimension, hour);
-- +goose StatementBegin
CREATE TRIGGER links_agg_delete AFTER DELETE ON links
BEGIN
    INSERT INTO tenant_hourly (tenant_id, hour, count, automated)
    SELECT OLD.tenant_id, hour, -count, -automated FROM link_hourly WHERE link_id = OLD.id AND true
    ON CONFLICT (tenant_id, hour) DO UPDATE SET count = count + excluded.count, automated = automated + excluded.automated;
    DELETE FROM link_hourly WHERE link_id = OLD.id;
    DELETE FROM link_daily WHERE link_id = OLD.id;
    INSERT INTO tenant_dims_hourly (tenant_id, dimension, hour, automated, value, count)
    SELECT OLD.tenant_id, dimension, hour, automated, value, -SUM(count) FROM click_dims
    WHERE link_id = OLD.id GROUP BY dimension, hour, automated, value
    ON CONFLICT (tenant_id, dimension, hour, automated, value) DO UPDATE SET count = count + excluded.count;
    INSERT INTO tenant_dims_daily (tenant_id, dimension, day, automated, value, count)
    SELECT OLD.tenant_id, dimension, day, automated, value, -count FROM link_dims_daily WHERE link_id = OLD.id AND true
    ON CONFLICT (tenant_id, dimension, day, automated, value) DO UPDATE SET count = count + excluded.count;
    DELETE FROM link_dims_daily WHERE link_id = OLD.id;
    DELETE FROM click_rollup WHERE link_id = OLD.id;
    DELETE FROM click_dims WHERE link_id = OLD.id;
    DELETE FROM click_rollup_pruned WHERE link_id = OLD.id;
END;
-- +goose StatementEnd

-- +goose Down
DROP TRIGGER links_agg_delete;
CREATE TABLE click_dims_new (
    link_id   INTEGER NOT NULL,
    hour      INTEGER NOT NULL,
    dimension TEXT    NOT NULL,
    value     TEXT    NOT NULL,
    node_id   TEXT    NOT NULL,
    count     INTEGER NOT NULL CHECK (count >= 0),
    PRIMARY KEY (link_id, hour, dimension, value, node_id)
) WITHOUT ROWID;
INSERT INTO click_dims_new (link_id, hour, node_id, dimension, value, count)
SELECT link_id, hour, node_id, CASE WHEN dimension IN ('country', 'referrer', 'device', 'browser', 'os', 'utm_source', 'variant') AND EXISTS (SELECT 1 FROM click_dims s WHERE s.link_id = t.link_id AND s.hour = t.hour AND s.node_id = t.node_id AND s.dimension = 'traffic')
    THEN iif(automated, 'automated:', 'human:') || dimension ELSE dimension END, value, count
FROM click_dims t WHERE true
UNION ALL
SELECT link_id, hour, node_id, dimension, value, SUM(count) FROM click_dims t
WHERE dimension IN ('country', 'referrer', 'device', 'browser', 'os', 'utm_source', 'variant') AND EXISTS (SELECT 1 FROM click_dims s WHERE s.link_id = t.link_id AND s.hour = t.hour AND s.node_id = t.node_id AND s.dimension = 'traffic')
GROUP BY 1, 2, 3, 4, 5
ON CONFLICT DO UPDATE SET count = count + excluded.count;
DROP TABLE click_dims;
ALTER TABLE click_dims_new RENAME TO click_dims;
CREATE TABLE tenant_dims_hourly_new (
    tenant_id INTEGER NOT NULL,
    hour      INTEGER NOT NULL,
    dimension TEXT    NOT NULL,
    value     TEXT    NOT NULL,
    count     INTEGER NOT NULL,
    PRIMARY KEY (tenant_id, dimension, hour, value)
) WITHOUT ROWID;
INSERT INTO tenant_dims_hourly_new (tenant_id, hour, dimension, value, count)
SELECT tenant_id, hour, CASE WHEN dimension IN ('country', 'referrer', 'device', 'browser', 'os', 'utm_source', 'variant') AND EXISTS (SELECT 1 FROM tenant_dims_hourly s WHERE s.tenant_id = t.tenant_id AND s.hour = t.hour AND s.dimension = 'traffic')
    THEN iif(automated, 'automated:', 'human:') || dimension ELSE dimension END, value, count
FROM tenant_dims_hourly t WHERE true
UNION ALL
SELECT tenant_id, hour, dimension, value, SUM(count) FROM tenant_dims_hourly t
WHERE dimension IN ('country', 'referrer', 'device', 'browser', 'os', 'utm_source', 'variant') AND EXISTS (SELECT 1 FROM tenant_dims_hourly s WHERE s.tenant_id = t.tenant_id AND s.hour = t.hour AND s.dimension = 'traffic')
GROUP BY 1, 2, 3, 4
ON CONFLICT DO UPDATE SET count = count + excluded.count;
DROP TABLE tenant_dims_hourly;
ALTER TABLE tenant_dims_hourly_new RENAME TO tenant_dims_hourly;
CREATE TABLE link_dims_daily_new (
    link_id   INTEGER NOT NULL,
    day       INTEGER NOT NULL,
    dimension TEXT    NOT NULL,
    value     TEXT    NOT NULL,
    count     INTEGER NOT NULL,
    PRIMARY KEY (link_id, dimension, day, value)
) WITHOUT ROWID;
INSERT INTO link_dims_daily_new (link_id, day, dimension, value, count)
SELECT link_id, day, CASE WHEN dimension IN ('country', 'referrer', 'device', 'browser', 'os', 'utm_source', 'variant') AND EXISTS (SELECT 1 FROM link_dims_daily s WHERE s.link_id = t.link_id AND s.day = t.day AND s.dimension = 'traffic')
    THEN iif(automated, 'automated:', 'human:') || dimension ELSE dimension END, value, count
FROM link_dims_daily t WHERE true
UNION ALL
SELECT link_id, day, dimension, value, SUM(count) FROM link_dims_daily t
WHERE dimension IN ('country', 'referrer', 'device', 'browser', 'os', 'utm_source', 'variant') AND EXISTS (SELECT 1 FROM link_dims_daily s WHERE s.link_id = t.link_id AND s.day = t.day AND s.dimension = 'traffic')
GROUP BY 1, 2, 3, 4
ON CONFLICT DO UPDATE SET count = count + excluded.count;
DROP TABLE link_dims_daily;
ALTER TABLE link_dims_daily_new RENAME TO link_dims_daily;
CREATE TABLE tenant_dims_daily_new (
    tenant_id INTEGER NOT NULL,
    day       INTEGER NOT NULL,
    dimension TEXT    NOT NULL,
    value     TEXT    NOT NULL,
    count     INTEGER NOT NULL,
    PRIMARY KEY (tenant_id, dimension, day, value)
) WITHOUT ROWID;
INSERT INTO tenant_dims_daily_new (tenant_id, day, dimension, value, count)
SELECT tenant_id, day, CASE WHEN dimension IN ('country', 'referrer', 'device', 'browser', 'os', 'utm_source', 'variant') AND EXISTS (SELECT 1 FROM tenant_dims_daily s WHERE s.tenant_id = t.tenant_id AND s.day = t.day AND s.dimension = 'traffic')
    THEN iif(automated, 'automated:', 'human:') || dimension ELSE dimension END, value, count
FROM tenant_dims_daily t WHERE true
UNION ALL
SELECT tenant_id, day, dimension, value, SUM(count) FROM tenant_dims_daily t
WHERE dimension IN ('country', 'referrer', 'device', 'browser', 'os', 'utm_source', 'variant') AND EXISTS (SELECT 1 FROM tenant_dims_daily s WHERE s.tenant_id = t.tenant_id AND s.day = t.day AND s.dimension = 'traffic')
GROUP BY 1, 2, 3, 4
ON CONFLICT DO UPDATE SET count = count + excluded.count;
DROP TABLE tenant_dims_daily;
ALTER TABLE tenant_dims_daily_new RENAME TO tenant_dims_daily;
CREATE INDEX click_dims_hour ON click_dims (hour);
CREATE INDEX click_dims_link_dimension ON click_dims (link_id, dimension, hour);
-- +goose StatementBegin
CREATE TRIGGER links_agg_delete AFTER DELETE ON links
BEGIN
    INSERT INTO tenant_hourly (tenant_id, hour, count, automated)
    SELECT OLD.tenant_id, hour, -count, -automated FROM link_hourly WHERE link_id = OLD.id AND true
    ON CONFLICT (tenant_id, hour) DO UPDATE SET count = count + excluded.count, automated = automated + excluded.automated;
    DELETE FROM link_hourly WHERE link_id = OLD.id;
    DELETE FROM link_daily WHERE link_id = OLD.id;
    INSERT INTO tenant_dims_hourly (tenant_id, dimension, hour, value, count)
    SELECT OLD.tenant_id, dimension, hour, value, -SUM(count) FROM click_dims
    WHERE link_id = OLD.id GROUP BY dimension, hour, value
    ON CONFLICT (tenant_id, dimension, hour, value) DO UPDATE SET count = count + excluded.count;
    INSERT INTO tenant_dims_daily (tenant_id, dimension, day, value, count)
    SELECT OLD.tenant_id, dimension, day, value, -count FROM link_dims_daily WHERE link_id = OLD.id AND true
    ON CONFLICT (tenant_id, dimension, day, value) DO UPDATE SET count = count + excluded.count;
    DELETE FROM link_dims_daily WHERE link_id = OLD.id;
    DELETE FROM click_rollup WHERE link_id = OLD.id;
    DELETE FROM click_dims WHERE link_id = OLD.id;
    DELETE FROM click_rollup_pruned WHERE link_id = OLD.id;
END;
-- +goose StatementEnd
