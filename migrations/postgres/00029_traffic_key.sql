-- Traffic is a key column of the dimension rows (docs/adr/009-click-dimensions.md):
-- a row is (link, hour, dimension, automated, value, node), and the same
-- for the aggregates that sum them. The traffic shadows' rows become rows
-- of their dimension under their traffic, with the same counts (the
-- journal's flushed marks line up); the all-traffic rows of those
-- dimensions go, the two traffics' rows sum to them; a traffic row takes
-- the traffic of its value. Rows of a group with no shadow at all (hours
-- counted before them) stay, as human, their totals kept. Placeholders and
-- traffic_minute rows (00028 moved them into click_rollup.automated) go.
-- The triggers that sum click_dims are off while each table converts on
-- its own, and come back with the new key. Down writes the old shape back:
-- shadow rows from the traffic rows, all-traffic rows as their sums, in
-- the groups with traffic rows (the others were counted before them).
-- (click_dims is partitioned by hour, 00021: its primary key still starts
-- with link_id, hour.)
-- +goose Up
DROP TRIGGER click_dims_agg_insert ON click_dims;
DROP TRIGGER click_dims_agg_update ON click_dims;
DROP TRIGGER click_dims_traffic_hourly_insert ON click_dims;
DROP TRIGGER click_dims_traffic_hourly_update ON click_dims;
-- +goose StatementBegin
CREATE FUNCTION linkforge_drop_pkey(t regclass) RETURNS void LANGUAGE plpgsql AS $$
DECLARE n text;
BEGIN
    SELECT conname INTO n FROM pg_constraint WHERE conrelid = t AND contype = 'p';
    EXECUTE format('ALTER TABLE %s DROP CONSTRAINT %I', t, n);
END $$;
-- +goose StatementEnd
ALTER TABLE click_dims ADD COLUMN automated BOOLEAN NOT NULL DEFAULT false;
SELECT linkforge_drop_pkey('click_dims');
CREATE TEMP TABLE converted AS
WITH per AS (
    SELECT link_id, hour, node_id, CASE WHEN dimension LIKE '%:%' THEN split_part(dimension, ':', 2) ELSE dimension END AS dim, value,
        SUM(CASE WHEN dimension LIKE '%:%' THEN 0 ELSE count END) AS a,
        SUM(CASE WHEN dimension LIKE 'human:%' THEN count ELSE 0 END) AS h,
        SUM(CASE WHEN dimension LIKE 'automated:%' THEN count ELSE 0 END) AS u
    FROM click_dims WHERE dimension IN ('country', 'referrer', 'device', 'browser', 'os', 'utm_source', 'variant', 'human:country', 'automated:country', 'human:referrer', 'automated:referrer', 'human:device', 'automated:device', 'human:browser', 'automated:browser', 'human:os', 'automated:os', 'human:utm_source', 'automated:utm_source', 'human:variant', 'automated:variant') AND value NOT IN ('(HUMAN)', '(AUTOMATED)')
    GROUP BY link_id, hour, node_id, CASE WHEN dimension LIKE '%:%' THEN split_part(dimension, ':', 2) ELSE dimension END, value
), bad AS (
    SELECT link_id, hour, node_id, dim, SUM(a) - SUM(h) - SUM(u) AS rest FROM per GROUP BY link_id, hour, node_id, dim HAVING MIN(a - u) < 0
), human AS (
    SELECT p.link_id, p.hour, p.node_id, p.dim, p.value, CASE WHEN b.dim IS NULL THEN p.a - p.u ELSE p.h END AS n
    FROM per p LEFT JOIN bad b ON b.link_id = p.link_id AND b.hour = p.hour AND b.node_id = p.node_id AND b.dim = p.dim
)
SELECT link_id, hour, node_id, dim, true AS automated, value, u AS count FROM per WHERE u > 0
UNION ALL
SELECT link_id, hour, node_id, dim, false, value, n FROM human WHERE n > 0
UNION ALL
SELECT link_id, hour, node_id, dim, false, '(more)', rest FROM bad WHERE rest > 0
UNION ALL
SELECT link_id, hour, node_id, dimension, dimension = 'traffic' AND value = 'automated', value, count FROM click_dims
WHERE dimension NOT IN ('country', 'referrer', 'device', 'browser', 'os', 'utm_source', 'variant', 'human:country', 'automated:country', 'human:referrer', 'automated:referrer', 'human:device', 'automated:device', 'human:browser', 'automated:browser', 'human:os', 'automated:os', 'human:utm_source', 'automated:utm_source', 'human:variant', 'automated:variant') AND dimension <> 'traffic_minute';
DELETE FROM click_dims WHERE dimension IN ('country', 'referrer', 'device', 'browser', 'os', 'utm_source', 'variant', 'human:country', 'automated:country', 'human:referrer', 'automated:referrer', 'human:device', 'automated:device', 'human:browser', 'automated:browser', 'human:os', 'automated:os', 'human:utm_source', 'automated:utm_source', 'human:variant', 'automated:variant', 'traffic_minute');
UPDATE click_dims SET automated = true WHERE dimension = 'traffic' AND value = 'automated';
INSERT INTO click_dims (link_id, hour, node_id, dimension, automated, value, count)
SELECT link_id, hour, node_id, dim, automated, value, SUM(count) FROM converted
WHERE dim IN ('country', 'referrer', 'device', 'browser', 'os', 'utm_source', 'variant') GROUP BY link_id, hour, node_id, dim, automated, value;
DROP TABLE converted;
ALTER TABLE click_dims ADD PRIMARY KEY (link_id, hour, dimension, automated, value, node_id);
ALTER TABLE tenant_dims_hourly ADD COLUMN automated BOOLEAN NOT NULL DEFAULT false;
SELECT linkforge_drop_pkey('tenant_dims_hourly');
CREATE TEMP TABLE converted AS
WITH per AS (
    SELECT tenant_id, hour, CASE WHEN dimension LIKE '%:%' THEN split_part(dimension, ':', 2) ELSE dimension END AS dim, value,
        SUM(CASE WHEN dimension LIKE '%:%' THEN 0 ELSE count END) AS a,
        SUM(CASE WHEN dimension LIKE 'human:%' THEN count ELSE 0 END) AS h,
        SUM(CASE WHEN dimension LIKE 'automated:%' THEN count ELSE 0 END) AS u
    FROM tenant_dims_hourly WHERE dimension IN ('country', 'referrer', 'device', 'browser', 'os', 'utm_source', 'variant', 'human:country', 'automated:country', 'human:referrer', 'automated:referrer', 'human:device', 'automated:device', 'human:browser', 'automated:browser', 'human:os', 'automated:os', 'human:utm_source', 'automated:utm_source', 'human:variant', 'automated:variant') AND value NOT IN ('(HUMAN)', '(AUTOMATED)')
    GROUP BY tenant_id, hour, CASE WHEN dimension LIKE '%:%' THEN split_part(dimension, ':', 2) ELSE dimension END, value
), bad AS (
    SELECT tenant_id, hour, dim, SUM(a) - SUM(h) - SUM(u) AS rest FROM per GROUP BY tenant_id, hour, dim HAVING MIN(a - u) < 0
), human AS (
    SELECT p.tenant_id, p.hour, p.dim, p.value, CASE WHEN b.dim IS NULL THEN p.a - p.u ELSE p.h END AS n
    FROM per p LEFT JOIN bad b ON b.tenant_id = p.tenant_id AND b.hour = p.hour AND b.dim = p.dim
)
SELECT tenant_id, hour, dim, true AS automated, value, u AS count FROM per WHERE u > 0
UNION ALL
SELECT tenant_id, hour, dim, false, value, n FROM human WHERE n > 0
UNION ALL
SELECT tenant_id, hour, dim, false, '(more)', rest FROM bad WHERE rest > 0
UNION ALL
SELECT tenant_id, hour, dimension, dimension = 'traffic' AND value = 'automated', value, count FROM tenant_dims_hourly
WHERE dimension NOT IN ('country', 'referrer', 'device', 'browser', 'os', 'utm_source', 'variant', 'human:country', 'automated:country', 'human:referrer', 'automated:referrer', 'human:device', 'automated:device', 'human:browser', 'automated:browser', 'human:os', 'automated:os', 'human:utm_source', 'automated:utm_source', 'human:variant', 'automated:variant') AND dimension <> 'traffic_minute';
DELETE FROM tenant_dims_hourly WHERE dimension IN ('country', 'referrer', 'device', 'browser', 'os', 'utm_source', 'variant', 'human:country', 'automated:country', 'human:referrer', 'automated:referrer', 'human:device', 'automated:device', 'human:browser', 'automated:browser', 'human:os', 'automated:os', 'human:utm_source', 'automated:utm_source', 'human:variant', 'automated:variant', 'traffic_minute');
UPDATE tenant_dims_hourly SET automated = true WHERE dimension = 'traffic' AND value = 'automated';
INSERT INTO tenant_dims_hourly (tenant_id, hour, dimension, automated, value, count)
SELECT tenant_id, hour, dim, automated, value, SUM(count) FROM converted
WHERE dim IN ('country', 'referrer', 'device', 'browser', 'os', 'utm_source', 'variant') GROUP BY tenant_id, hour, dim, automated, value;
DROP TABLE converted;
ALTER TABLE tenant_dims_hourly ADD PRIMARY KEY (tenant_id, dimension, hour, automated, value);
ALTER TABLE link_dims_daily ADD COLUMN automated BOOLEAN NOT NULL DEFAULT false;
SELECT linkforge_drop_pkey('link_dims_daily');
CREATE TEMP TABLE converted AS
WITH per AS (
    SELECT link_id, day, CASE WHEN dimension LIKE '%:%' THEN split_part(dimension, ':', 2) ELSE dimension END AS dim, value,
        SUM(CASE WHEN dimension LIKE '%:%' THEN 0 ELSE count END) AS a,
        SUM(CASE WHEN dimension LIKE 'human:%' THEN count ELSE 0 END) AS h,
        SUM(CASE WHEN dimension LIKE 'automated:%' THEN count ELSE 0 END) AS u
    FROM link_dims_daily WHERE dimension IN ('country', 'referrer', 'device', 'browser', 'os', 'utm_source', 'variant', 'human:country', 'automated:country', 'human:referrer', 'automated:referrer', 'human:device', 'automated:device', 'human:browser', 'automated:browser', 'human:os', 'automated:os', 'human:utm_source', 'automated:utm_source', 'human:variant', 'automated:variant') AND value NOT IN ('(HUMAN)', '(AUTOMATED)')
    GROUP BY link_id, day, CASE WHEN dimension LIKE '%:%' THEN split_part(dimension, ':', 2) ELSE dimension END, value
), bad AS (
    SELECT link_id, day, dim, SUM(a) - SUM(h) - SUM(u) AS rest FROM per GROUP BY link_id, day, dim HAVING MIN(a - u) < 0
), human AS (
    SELECT p.link_id, p.day, p.dim, p.value, CASE WHEN b.dim IS NULL THEN p.a - p.u ELSE p.h END AS n
    FROM per p LEFT JOIN bad b ON b.link_id = p.link_id AND b.day = p.day AND b.dim = p.dim
)
SELECT link_id, day, dim, true AS automated, value, u AS count FROM per WHERE u > 0
UNION ALL
SELECT link_id, day, dim, false, value, n FROM human WHERE n > 0
UNION ALL
SELECT link_id, day, dim, false, '(more)', rest FROM bad WHERE rest > 0
UNION ALL
SELECT link_id, day, dimension, dimension = 'traffic' AND value = 'automated', value, count FROM link_dims_daily
WHERE dimension NOT IN ('country', 'referrer', 'device', 'browser', 'os', 'utm_source', 'variant', 'human:country', 'automated:country', 'human:referrer', 'automated:referrer', 'human:device', 'automated:device', 'human:browser', 'automated:browser', 'human:os', 'automated:os', 'human:utm_source', 'automated:utm_source', 'human:variant', 'automated:variant') AND dimension <> 'traffic_minute';
DELETE FROM link_dims_daily WHERE dimension IN ('country', 'referrer', 'device', 'browser', 'os', 'utm_source', 'variant', 'human:country', 'automated:country', 'human:referrer', 'automated:referrer', 'human:device', 'automated:device', 'human:browser', 'automated:browser', 'human:os', 'automated:os', 'human:utm_source', 'automated:utm_source', 'human:variant', 'automated:variant', 'traffic_minute');
UPDATE link_dims_daily SET automated = true WHERE dimension = 'traffic' AND value = 'automated';
INSERT INTO link_dims_daily (link_id, day, dimension, automated, value, count)
SELECT link_id, day, dim, automated, value, SUM(count) FROM converted
WHERE dim IN ('country', 'referrer', 'device', 'browser', 'os', 'utm_source', 'variant') GROUP BY link_id, day, dim, automated, value;
DROP TABLE converted;
ALTER TABLE link_dims_daily ADD PRIMARY KEY (link_id, dimension, day, automated, value);
ALTER TABLE tenant_dims_daily ADD COLUMN automated BOOLEAN NOT NULL DEFAULT false;
SELECT linkforge_drop_pkey('tenant_dims_daily');
CREATE TEMP TABLE converted AS
WITH per AS (
    SELECT tenant_id, day, CASE WHEN dimension LIKE '%:%' THEN split_part(dimension, ':', 2) ELSE dimension END AS dim, value,
        SUM(CASE WHEN dimension LIKE '%:%' THEN 0 ELSE count END) AS a,
        SUM(CASE WHEN dimension LIKE 'human:%' THEN count ELSE 0 END) AS h,
        SUM(CASE WHEN dimension LIKE 'automated:%' THEN count ELSE 0 END) AS u
    FROM tenant_dims_daily WHERE dimension IN ('country', 'referrer', 'device', 'browser', 'os', 'utm_source', 'variant', 'human:country', 'automated:country', 'human:referrer', 'automated:referrer', 'human:device', 'automated:device', 'human:browser', 'automated:browser', 'human:os', 'automated:os', 'human:utm_source', 'automated:utm_source', 'human:variant', 'automated:variant') AND value NOT IN ('(HUMAN)', '(AUTOMATED)')
    GROUP BY tenant_id, day, CASE WHEN dimension LIKE '%:%' THEN split_part(dimension, ':', 2) ELSE dimension END, value
), bad AS (
    SELECT tenant_id, day, dim, SUM(a) - SUM(h) - SUM(u) AS rest FROM per GROUP BY tenant_id, day, dim HAVING MIN(a - u) < 0
), human AS (
    SELECT p.tenant_id, p.day, p.dim, p.value, CASE WHEN b.dim IS NULL THEN p.a - p.u ELSE p.h END AS n
    FROM per p LEFT JOIN bad b ON b.tenant_id = p.tenant_id AND b.day = p.day AND b.dim = p.dim
)
SELECT tenant_id, day, dim, true AS automated, value, u AS count FROM per WHERE u > 0
UNION ALL
SELECT tenant_id, day, dim, false, value, n FROM human WHERE n > 0
UNION ALL
SELECT tenant_id, day, dim, false, '(more)', rest FROM bad WHERE rest > 0
UNION ALL
SELECT tenant_id, day, dimension, dimension = 'traffic' AND value = 'automated', value, count FROM tenant_dims_daily
WHERE dimension NOT IN ('country', 'referrer', 'device', 'browser', 'os', 'utm_source', 'variant', 'human:country', 'automated:country', 'human:referrer', 'automated:referrer', 'human:device', 'automated:device', 'human:browser', 'automated:browser', 'human:os', 'automated:os', 'human:utm_source', 'automated:utm_source', 'human:variant', 'automated:variant') AND dimension <> 'traffic_minute';
DELETE FROM tenant_dims_daily WHERE dimension IN ('country', 'referrer', 'device', 'browser', 'os', 'utm_source', 'variant', 'human:country', 'automated:country', 'human:referrer', 'automated:referrer', 'human:device', 'automated:device', 'human:browser', 'automated:browser', 'human:os', 'automated:os', 'human:utm_source', 'automated:utm_source', 'human:variant', 'automated:variant', 'traffic_minute');
UPDATE tenant_dims_daily SET automated = true WHERE dimension = 'traffic' AND value = 'automated';
INSERT INTO tenant_dims_daily (tenant_id, day, dimension, automated, value, count)
SELECT tenant_id, day, dim, automated, value, SUM(count) FROM converted
WHERE dim IN ('country', 'referrer', 'device', 'browser', 'os', 'utm_source', 'variant') GROUP BY tenant_id, day, dim, automated, value;
DROP TABLE converted;
ALTER TABLE tenant_dims_daily ADD PRIMARY KEY (tenant_id, dimension, day, automated, value);
DROP FUNCTION linkforge_drop_pkey(regclass);
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION linkforge_dims_agg() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_advisory_xact_lock(7306231866145637);
    IF TG_OP = 'INSERT' THEN
        INSERT INTO tenant_dims_hourly AS a (tenant_id, dimension, hour, automated, value, count)
        SELECT l.tenant_id, n.dimension, n.hour, n.automated, n.value, SUM(n.count)
        FROM new_rows n JOIN links l ON l.id = n.link_id WHERE n.count <> 0
        GROUP BY 1, 2, 3, 4, 5 ORDER BY 1, 2, 3, 4, 5
        ON CONFLICT (tenant_id, dimension, hour, automated, value) DO UPDATE SET count = a.count + excluded.count;
        INSERT INTO link_dims_daily AS a (link_id, dimension, day, automated, value, count)
        SELECT c.link_id, c.dimension, date_trunc('day', c.hour, 'UTC'), c.automated, c.value, SUM(c.count)
        FROM new_rows c JOIN links l ON l.id = c.link_id WHERE c.count <> 0
        GROUP BY 1, 2, 3, 4, 5 ORDER BY 1, 2, 3, 4, 5
        ON CONFLICT (link_id, dimension, day, automated, value) DO UPDATE SET count = a.count + excluded.count;
        INSERT INTO tenant_dims_daily AS a (tenant_id, dimension, day, automated, value, count)
        SELECT l.tenant_id, n.dimension, date_trunc('day', n.hour, 'UTC'), n.automated, n.value, SUM(n.count)
        FROM new_rows n JOIN links l ON l.id = n.link_id WHERE n.count <> 0
        GROUP BY 1, 2, 3, 4, 5 ORDER BY 1, 2, 3, 4, 5
        ON CONFLICT (tenant_id, dimension, day, automated, value) DO UPDATE SET count = a.count + excluded.count;
    ELSIF TG_OP = 'DELETE' THEN
        INSERT INTO tenant_dims_hourly AS a (tenant_id, dimension, hour, automated, value, count)
        SELECT l.tenant_id, o.dimension, o.hour, o.automated, o.value, -SUM(o.count)
        FROM old_rows o JOIN links l ON l.id = o.link_id WHERE o.count <> 0
        GROUP BY 1, 2, 3, 4, 5 ORDER BY 1, 2, 3, 4, 5
        ON CONFLICT (tenant_id, dimension, hour, automated, value) DO UPDATE SET count = a.count + excluded.count;
        INSERT INTO link_dims_daily AS a (link_id, dimension, day, automated, value, count)
        SELECT c.link_id, c.dimension, date_trunc('day', c.hour, 'UTC'), c.automated, c.value, -SUM(c.count)
        FROM old_rows c JOIN links l ON l.id = c.link_id WHERE c.count <> 0
        GROUP BY 1, 2, 3, 4, 5 ORDER BY 1, 2, 3, 4, 5
        ON CONFLICT (link_id, dimension, day, automated, value) DO UPDATE SET count = a.count + excluded.count;
        INSERT INTO tenant_dims_daily AS a (tenant_id, dimension, day, automated, value, count)
        SELECT l.tenant_id, o.dimension, date_trunc('day', o.hour, 'UTC'), o.automated, o.value, -SUM(o.count)
        FROM old_rows o JOIN links l ON l.id = o.link_id WHERE o.count <> 0
        GROUP BY 1, 2, 3, 4, 5 ORDER BY 1, 2, 3, 4, 5
        ON CONFLICT (tenant_id, dimension, day, automated, value) DO UPDATE SET count = a.count + excluded.count;
    ELSE
        INSERT INTO tenant_dims_hourly AS a (tenant_id, dimension, hour, automated, value, count)
        SELECT l.tenant_id, c.dimension, c.hour, c.automated, c.value, SUM(c.count)
        FROM (
            SELECT link_id, dimension, hour, automated, value, count FROM new_rows
            UNION ALL SELECT link_id, dimension, hour, automated, value, -count FROM old_rows
        ) c JOIN links l ON l.id = c.link_id
        GROUP BY 1, 2, 3, 4, 5 HAVING SUM(c.count) <> 0 ORDER BY 1, 2, 3, 4, 5
        ON CONFLICT (tenant_id, dimension, hour, automated, value) DO UPDATE SET count = a.count + excluded.count;
        INSERT INTO link_dims_daily AS a (link_id, dimension, day, automated, value, count)
        SELECT c.link_id, c.dimension, date_trunc('day', c.hour, 'UTC'), c.automated, c.value, SUM(c.count)
        FROM (
            SELECT link_id, dimension, hour, automated, value, count FROM new_rows
            UNION ALL SELECT link_id, dimension, hour, automated, value, -count FROM old_rows
        ) c JOIN links l ON l.id = c.link_id
        GROUP BY 1, 2, 3, 4, 5 HAVING SUM(c.count) <> 0 ORDER BY 1, 2, 3, 4, 5
        ON CONFLICT (link_id, dimension, day, automated, value) DO UPDATE SET count = a.count + excluded.count;
        INSERT INTO tenant_dims_daily AS a (tenant_id, dimension, day, automated, value, count)
        SELECT l.tenant_id, c.dimension, date_trunc('day', c.hour, 'UTC'), c.automated, c.value, SUM(c.count)
        FROM (
            SELECT link_id, dimension, hour, automated, value, count FROM new_rows
            UNION ALL SELECT link_id, dimension, hour, automated, value, -count FROM old_rows
        ) c JOIN links l ON l.id = c.link_id
        GROUP BY 1, 2, 3, 4, 5 HAVING SUM(c.count) <> 0 ORDER BY 1, 2, 3, 4, 5
        ON CONFLICT (tenant_id, dimension, day, automated, value) DO UPDATE SET count = a.count + excluded.count;
    END IF;
    RETURN NULL;
END $$;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION linkforge_links_agg_delete() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_advisory_xact_lock(7306231866145637);
    INSERT INTO tenant_hourly AS a (tenant_id, hour, count, automated)
    SELECT h.tenant_id, h.hour, -SUM(h.count), -SUM(h.automated)
    FROM old_rows o JOIN link_hourly h ON h.link_id = o.id
    GROUP BY 1, 2 ORDER BY 1, 2
    ON CONFLICT (tenant_id, hour) DO UPDATE SET count = a.count + excluded.count, automated = a.automated + excluded.automated;
    DELETE FROM link_hourly a USING old_rows o WHERE a.link_id = o.id;
    DELETE FROM link_daily a USING old_rows o WHERE a.link_id = o.id;
    INSERT INTO tenant_dims_hourly AS a (tenant_id, dimension, hour, automated, value, count)
    SELECT o.tenant_id, c.dimension, c.hour, c.automated, c.value, -SUM(c.count)
    FROM old_rows o JOIN click_dims c ON c.link_id = o.id
    GROUP BY 1, 2, 3, 4, 5 ORDER BY 1, 2, 3, 4, 5
    ON CONFLICT (tenant_id, dimension, hour, automated, value) DO UPDATE SET count = a.count + excluded.count;
    INSERT INTO tenant_dims_daily AS a (tenant_id, dimension, day, automated, value, count)
    SELECT o.tenant_id, d.dimension, d.day, d.automated, d.value, -SUM(d.count)
    FROM old_rows o JOIN link_dims_daily d ON d.link_id = o.id
    GROUP BY 1, 2, 3, 4, 5 ORDER BY 1, 2, 3, 4, 5
    ON CONFLICT (tenant_id, dimension, day, automated, value) DO UPDATE SET count = a.count + excluded.count;
    DELETE FROM link_dims_daily a USING old_rows o WHERE a.link_id = o.id;
    DELETE FROM click_rollup r USING old_rows o WHERE r.link_id = o.id;
    DELETE FROM click_dims c USING old_rows o WHERE c.link_id = o.id;
    DELETE FROM click_rollup_pruned p USING old_rows o WHERE p.link_id = o.id;
    RETURN NULL;
END $$;
-- +goose StatementEnd
CREATE TRIGGER click_dims_agg_insert AFTER INSERT ON click_dims
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION linkforge_dims_agg();
CREATE TRIGGER click_dims_agg_update AFTER UPDATE ON click_dims
    REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION linkforge_dims_agg();
CREATE TRIGGER click_dims_traffic_hourly_insert AFTER INSERT ON click_dims
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION linkforge_traffic_hourly_agg();
CREATE TRIGGER click_dims_traffic_hourly_update AFTER UPDATE ON click_dims
    REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION linkforge_traffic_hourly_agg();

-- +goose Down
DROP TRIGGER click_dims_agg_insert ON click_dims;
DROP TRIGGER click_dims_agg_update ON click_dims;
DROP TRIGGER click_dims_traffic_hourly_insert ON click_dims;
DROP TRIGGER click_dims_traffic_hourly_update ON click_dims;
-- +goose StatementBegin
CREATE FUNCTION linkforge_drop_pkey(t regclass) RETURNS void LANGUAGE plpgsql AS $$
DECLARE n text;
BEGIN
    SELECT conname INTO n FROM pg_constraint WHERE conrelid = t AND contype = 'p';
    EXECUTE format('ALTER TABLE %s DROP CONSTRAINT %I', t, n);
END $$;
-- +goose StatementEnd
UPDATE click_dims t SET dimension = CASE WHEN automated THEN 'automated:' ELSE 'human:' END || dimension
WHERE dimension IN ('country', 'referrer', 'device', 'browser', 'os', 'utm_source', 'variant')
AND EXISTS (SELECT 1 FROM click_dims s WHERE s.link_id = t.link_id AND s.hour = t.hour AND s.node_id = t.node_id AND s.dimension = 'traffic');
INSERT INTO click_dims (link_id, hour, node_id, dimension, automated, value, count)
SELECT link_id, hour, node_id, split_part(dimension, ':', 2), false, value, SUM(count) FROM click_dims
WHERE dimension LIKE '%:%' GROUP BY link_id, hour, node_id, split_part(dimension, ':', 2), value;
SELECT linkforge_drop_pkey('click_dims');
ALTER TABLE click_dims DROP COLUMN automated;
ALTER TABLE click_dims ADD PRIMARY KEY (link_id, hour, dimension, value, node_id);
UPDATE tenant_dims_hourly t SET dimension = CASE WHEN automated THEN 'automated:' ELSE 'human:' END || dimension
WHERE dimension IN ('country', 'referrer', 'device', 'browser', 'os', 'utm_source', 'variant')
AND EXISTS (SELECT 1 FROM tenant_dims_hourly s WHERE s.tenant_id = t.tenant_id AND s.hour = t.hour AND s.dimension = 'traffic');
INSERT INTO tenant_dims_hourly (tenant_id, hour, dimension, automated, value, count)
SELECT tenant_id, hour, split_part(dimension, ':', 2), false, value, SUM(count) FROM tenant_dims_hourly
WHERE dimension LIKE '%:%' GROUP BY tenant_id, hour, split_part(dimension, ':', 2), value;
SELECT linkforge_drop_pkey('tenant_dims_hourly');
ALTER TABLE tenant_dims_hourly DROP COLUMN automated;
ALTER TABLE tenant_dims_hourly ADD PRIMARY KEY (tenant_id, dimension, hour, value);
UPDATE link_dims_daily t SET dimension = CASE WHEN automated THEN 'automated:' ELSE 'human:' END || dimension
WHERE dimension IN ('country', 'referrer', 'device', 'browser', 'os', 'utm_source', 'variant')
AND EXISTS (SELECT 1 FROM link_dims_daily s WHERE s.link_id = t.link_id AND s.day = t.day AND s.dimension = 'traffic');
INSERT INTO link_dims_daily (link_id, day, dimension, automated, value, count)
SELECT link_id, day, split_part(dimension, ':', 2), false, value, SUM(count) FROM link_dims_daily
WHERE dimension LIKE '%:%' GROUP BY link_id, day, split_part(dimension, ':', 2), value;
SELECT linkforge_drop_pkey('link_dims_daily');
ALTER TABLE link_dims_daily DROP COLUMN automated;
ALTER TABLE link_dims_daily ADD PRIMARY KEY (link_id, dimension, day, value);
UPDATE tenant_dims_daily t SET dimension = CASE WHEN automated THEN 'automated:' ELSE 'human:' END || dimension
WHERE dimension IN ('country', 'referrer', 'device', 'browser', 'os', 'utm_source', 'variant')
AND EXISTS (SELECT 1 FROM tenant_dims_daily s WHERE s.tenant_id = t.tenant_id AND s.day = t.day AND s.dimension = 'traffic');
INSERT INTO tenant_dims_daily (tenant_id, day, dimension, automated, value, count)
SELECT tenant_id, day, split_part(dimension, ':', 2), false, value, SUM(count) FROM tenant_dims_daily
WHERE dimension LIKE '%:%' GROUP BY tenant_id, day, split_part(dimension, ':', 2), value;
SELECT linkforge_drop_pkey('tenant_dims_daily');
ALTER TABLE tenant_dims_daily DROP COLUMN automated;
ALTER TABLE tenant_dims_daily ADD PRIMARY KEY (tenant_id, dimension, day, value);
DROP FUNCTION linkforge_drop_pkey(regclass);
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION linkforge_dims_agg() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_advisory_xact_lock(7306231866145637);
    IF TG_OP = 'INSERT' THEN
        INSERT INTO tenant_dims_hourly AS a (tenant_id, dimension, hour, value, count)
        SELECT l.tenant_id, n.dimension, n.hour, n.value, SUM(n.count)
        FROM new_rows n JOIN links l ON l.id = n.link_id WHERE n.count <> 0
        GROUP BY 1, 2, 3, 4 ORDER BY 1, 2, 3, 4
        ON CONFLICT (tenant_id, dimension, hour, value) DO UPDATE SET count = a.count + excluded.count;
        INSERT INTO link_dims_daily AS a (link_id, dimension, day, value, count)
        SELECT c.link_id, c.dimension, date_trunc('day', c.hour, 'UTC'), c.value, SUM(c.count)
        FROM new_rows c JOIN links l ON l.id = c.link_id WHERE c.count <> 0
        GROUP BY 1, 2, 3, 4 ORDER BY 1, 2, 3, 4
        ON CONFLICT (link_id, dimension, day, value) DO UPDATE SET count = a.count + excluded.count;
        INSERT INTO tenant_dims_daily AS a (tenant_id, dimension, day, value, count)
        SELECT l.tenant_id, n.dimension, date_trunc('day', n.hour, 'UTC'), n.value, SUM(n.count)
        FROM new_rows n JOIN links l ON l.id = n.link_id WHERE n.count <> 0
        GROUP BY 1, 2, 3, 4 ORDER BY 1, 2, 3, 4
        ON CONFLICT (tenant_id, dimension, day, value) DO UPDATE SET count = a.count + excluded.count;
    ELSIF TG_OP = 'DELETE' THEN
        INSERT INTO tenant_dims_hourly AS a (tenant_id, dimension, hour, value, count)
        SELECT l.tenant_id, o.dimension, o.hour, o.value, -SUM(o.count)
        FROM old_rows o JOIN links l ON l.id = o.link_id WHERE o.count <> 0
        GROUP BY 1, 2, 3, 4 ORDER BY 1, 2, 3, 4
        ON CONFLICT (tenant_id, dimension, hour, value) DO UPDATE SET count = a.count + excluded.count;
        INSERT INTO link_dims_daily AS a (link_id, dimension, day, value, count)
        SELECT c.link_id, c.dimension, date_trunc('day', c.hour, 'UTC'), c.value, -SUM(c.count)
        FROM old_rows c JOIN links l ON l.id = c.link_id WHERE c.count <> 0
        GROUP BY 1, 2, 3, 4 ORDER BY 1, 2, 3, 4
        ON CONFLICT (link_id, dimension, day, value) DO UPDATE SET count = a.count + excluded.count;
        INSERT INTO tenant_dims_daily AS a (tenant_id, dimension, day, value, count)
        SELECT l.tenant_id, o.dimension, date_trunc('day', o.hour, 'UTC'), o.value, -SUM(o.count)
        FROM old_rows o JOIN links l ON l.id = o.link_id WHERE o.count <> 0
        GROUP BY 1, 2, 3, 4 ORDER BY 1, 2, 3, 4
        ON CONFLICT (tenant_id, dimension, day, value) DO UPDATE SET count = a.count + excluded.count;
    ELSE
        INSERT INTO tenant_dims_hourly AS a (tenant_id, dimension, hour, value, count)
        SELECT l.tenant_id, c.dimension, c.hour, c.value, SUM(c.count)
        FROM (
            SELECT link_id, dimension, hour, value, count FROM new_rows
            UNION ALL SELECT link_id, dimension, hour, value, -count FROM old_rows
        ) c JOIN links l ON l.id = c.link_id
        GROUP BY 1, 2, 3, 4 HAVING SUM(c.count) <> 0 ORDER BY 1, 2, 3, 4
        ON CONFLICT (tenant_id, dimension, hour, value) DO UPDATE SET count = a.count + excluded.count;
        INSERT INTO link_dims_daily AS a (link_id, dimension, day, value, count)
        SELECT c.link_id, c.dimension, date_trunc('day', c.hour, 'UTC'), c.value, SUM(c.count)
        FROM (
            SELECT link_id, dimension, hour, value, count FROM new_rows
            UNION ALL SELECT link_id, dimension, hour, value, -count FROM old_rows
        ) c JOIN links l ON l.id = c.link_id
        GROUP BY 1, 2, 3, 4 HAVING SUM(c.count) <> 0 ORDER BY 1, 2, 3, 4
        ON CONFLICT (link_id, dimension, day, value) DO UPDATE SET count = a.count + excluded.count;
        INSERT INTO tenant_dims_daily AS a (tenant_id, dimension, day, value, count)
        SELECT l.tenant_id, c.dimension, date_trunc('day', c.hour, 'UTC'), c.value, SUM(c.count)
        FROM (
            SELECT link_id, dimension, hour, value, count FROM new_rows
            UNION ALL SELECT link_id, dimension, hour, value, -count FROM old_rows
        ) c JOIN links l ON l.id = c.link_id
        GROUP BY 1, 2, 3, 4 HAVING SUM(c.count) <> 0 ORDER BY 1, 2, 3, 4
        ON CONFLICT (tenant_id, dimension, day, value) DO UPDATE SET count = a.count + excluded.count;
    END IF;
    RETURN NULL;
END $$;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION linkforge_links_agg_delete() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_advisory_xact_lock(7306231866145637);
    INSERT INTO tenant_hourly AS a (tenant_id, hour, count, automated)
    SELECT h.tenant_id, h.hour, -SUM(h.count), -SUM(h.automated)
    FROM old_rows o JOIN link_hourly h ON h.link_id = o.id
    GROUP BY 1, 2 ORDER BY 1, 2
    ON CONFLICT (tenant_id, hour) DO UPDATE SET count = a.count + excluded.count, automated = a.automated + excluded.automated;
    DELETE FROM link_hourly a USING old_rows o WHERE a.link_id = o.id;
    DELETE FROM link_daily a USING old_rows o WHERE a.link_id = o.id;
    INSERT INTO tenant_dims_hourly AS a (tenant_id, dimension, hour, value, count)
    SELECT o.tenant_id, c.dimension, c.hour, c.value, -SUM(c.count)
    FROM old_rows o JOIN click_dims c ON c.link_id = o.id
    GROUP BY 1, 2, 3, 4 ORDER BY 1, 2, 3, 4
    ON CONFLICT (tenant_id, dimension, hour, value) DO UPDATE SET count = a.count + excluded.count;
    INSERT INTO tenant_dims_daily AS a (tenant_id, dimension, day, value, count)
    SELECT o.tenant_id, d.dimension, d.day, d.value, -SUM(d.count)
    FROM old_rows o JOIN link_dims_daily d ON d.link_id = o.id
    GROUP BY 1, 2, 3, 4 ORDER BY 1, 2, 3, 4
    ON CONFLICT (tenant_id, dimension, day, value) DO UPDATE SET count = a.count + excluded.count;
    DELETE FROM link_dims_daily a USING old_rows o WHERE a.link_id = o.id;
    DELETE FROM click_rollup r USING old_rows o WHERE r.link_id = o.id;
    DELETE FROM click_dims c USING old_rows o WHERE c.link_id = o.id;
    DELETE FROM click_rollup_pruned p USING old_rows o WHERE p.link_id = o.id;
    RETURN NULL;
END $$;
-- +goose StatementEnd
CREATE TRIGGER click_dims_agg_insert AFTER INSERT ON click_dims
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION linkforge_dims_agg();
CREATE TRIGGER click_dims_agg_update AFTER UPDATE ON click_dims
    REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION linkforge_dims_agg();
CREATE TRIGGER click_dims_traffic_hourly_insert AFTER INSERT ON click_dims
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION linkforge_traffic_hourly_agg();
CREATE TRIGGER click_dims_traffic_hourly_update AFTER UPDATE ON click_dims
    REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION linkforge_traffic_hourly_agg();
