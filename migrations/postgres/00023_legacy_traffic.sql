-- The traffic rows of clicks counted before click classification existed
-- (docs/adr/009-click-dimensions.md). Such clicks have only the public
-- dimension rows (country ... variant): the series count them as human
-- (automated is 0), but a breakdown under traffic=human reads the shadow
-- rows "human:<dim>", which they lack, so it was empty where the series
-- said N human. This gives each of them the rows the counter writes for a
-- human click (ClickDims.Counted): traffic=human and traffic_minute=human
-- with the legacy count, "human:<dim>" a copy of <dim>'s values, and
-- "automated:<dim>" the same count under the placeholder "(HUMAN)".
--
-- The legacy part of a group (a link's hour on one node, a tenant's hour,
-- a link's or tenant's day) is its country count less its traffic count:
-- every dimension sums to the group's clicks, and traffic only counts the
-- classified ones, so a group that mixes both (a node that seeded an old
-- hour, a day with the upgrade in it) gets only its legacy part. Its value
-- split is <dim> less both shadows, value by value; where that does not
-- come out as non-negative counts summing to the legacy part (a bound's
-- "(more)" taken at a different value by a dimension and its shadow), the
-- part goes to "(more)" whole, so that the sums still hold.
--
-- Only human rows are written: link_hourly and tenant_hourly (automated)
-- and every total stay as they were. Step 1 writes click_dims, whose
-- triggers carry the rows into the hourly and daily aggregates; steps 2 to
-- 4 then fill each aggregate's own remainder, the hours and days whose
-- click_dims rows retention already removed.

-- +goose Up
-- 1. Each (link, hour, node) of click_dims. The triggers carry the new rows
-- into tenant_dims_hourly, link_dims_daily and tenant_dims_daily.
CREATE TEMP TABLE legacy_link_hours AS
SELECT link_id, hour, node_id, SUM(CASE WHEN dimension = 'country' THEN count ELSE -count END) AS n
FROM click_dims WHERE dimension IN ('country', 'traffic') GROUP BY link_id, hour, node_id
HAVING SUM(CASE WHEN dimension = 'country' THEN count ELSE -count END) > 0;
WITH names (dim) AS (VALUES ('country'), ('referrer'), ('device'), ('browser'), ('os'), ('utm_source'), ('variant')),
per AS (
    SELECT c.link_id, c.hour, c.node_id, CASE WHEN c.dimension LIKE '%:%' THEN split_part(c.dimension, ':', 2) ELSE c.dimension END AS dim, c.value,
        SUM(CASE WHEN c.dimension LIKE '%:%' THEN -c.count ELSE c.count END) AS n
    FROM click_dims c JOIN legacy_link_hours p ON c.link_id = p.link_id AND c.hour = p.hour AND c.node_id = p.node_id
    WHERE c.dimension IN ('country', 'referrer', 'device', 'browser', 'os', 'utm_source', 'variant',
        'human:country', 'automated:country', 'human:referrer', 'automated:referrer', 'human:device', 'automated:device', 'human:browser', 'automated:browser', 'human:os', 'automated:os', 'human:utm_source', 'automated:utm_source', 'human:variant', 'automated:variant')
        AND c.value NOT IN ('(HUMAN)', '(AUTOMATED)')
    GROUP BY c.link_id, c.hour, c.node_id, 4, c.value
),
fit AS (
    SELECT c.link_id, c.hour, c.node_id, c.dim FROM per c JOIN legacy_link_hours p ON c.link_id = p.link_id AND c.hour = p.hour AND c.node_id = p.node_id
    GROUP BY c.link_id, c.hour, c.node_id, c.dim HAVING MIN(c.n) >= 0 AND SUM(c.n) = MAX(p.n)
)
INSERT INTO click_dims AS a (link_id, hour, node_id, dimension, value, count)
SELECT c.link_id, c.hour, c.node_id, 'human:' || c.dim, c.value, c.n FROM per c
WHERE c.n > 0 AND EXISTS (SELECT 1 FROM fit f WHERE f.link_id = c.link_id AND f.hour = c.hour AND f.node_id = c.node_id AND f.dim = c.dim)
UNION ALL
SELECT p.link_id, p.hour, p.node_id, 'human:' || names.dim, '(more)', p.n FROM legacy_link_hours p CROSS JOIN names
WHERE NOT EXISTS (SELECT 1 FROM fit f WHERE f.link_id = p.link_id AND f.hour = p.hour AND f.node_id = p.node_id AND f.dim = names.dim)
UNION ALL
SELECT p.link_id, p.hour, p.node_id, 'automated:' || names.dim, '(HUMAN)', p.n FROM legacy_link_hours p CROSS JOIN names WHERE true
UNION ALL
SELECT p.link_id, p.hour, p.node_id, 'traffic', 'human', p.n FROM legacy_link_hours p WHERE true
UNION ALL
SELECT p.link_id, p.hour, p.node_id, 'traffic_minute', 'human', p.n FROM legacy_link_hours p WHERE true
ON CONFLICT (link_id, hour, dimension, value, node_id) DO UPDATE SET count = a.count + excluded.count;
DROP TABLE legacy_link_hours;

-- 2. Tenant hours whose click_dims rows retention already removed (its
-- bound for link hours can be shorter): what step 1 left of their legacy part.
CREATE TEMP TABLE legacy_tenant_hours AS
SELECT tenant_id, hour, SUM(CASE WHEN dimension = 'country' THEN count ELSE -count END) AS n
FROM tenant_dims_hourly WHERE dimension IN ('country', 'traffic') GROUP BY tenant_id, hour
HAVING SUM(CASE WHEN dimension = 'country' THEN count ELSE -count END) > 0;
WITH names (dim) AS (VALUES ('country'), ('referrer'), ('device'), ('browser'), ('os'), ('utm_source'), ('variant')),
per AS (
    SELECT c.tenant_id, c.hour, CASE WHEN c.dimension LIKE '%:%' THEN split_part(c.dimension, ':', 2) ELSE c.dimension END AS dim, c.value,
        SUM(CASE WHEN c.dimension LIKE '%:%' THEN -c.count ELSE c.count END) AS n
    FROM tenant_dims_hourly c JOIN legacy_tenant_hours p ON c.tenant_id = p.tenant_id AND c.hour = p.hour
    WHERE c.dimension IN ('country', 'referrer', 'device', 'browser', 'os', 'utm_source', 'variant',
        'human:country', 'automated:country', 'human:referrer', 'automated:referrer', 'human:device', 'automated:device', 'human:browser', 'automated:browser', 'human:os', 'automated:os', 'human:utm_source', 'automated:utm_source', 'human:variant', 'automated:variant')
        AND c.value NOT IN ('(HUMAN)', '(AUTOMATED)')
    GROUP BY c.tenant_id, c.hour, 3, c.value
),
fit AS (
    SELECT c.tenant_id, c.hour, c.dim FROM per c JOIN legacy_tenant_hours p ON c.tenant_id = p.tenant_id AND c.hour = p.hour
    GROUP BY c.tenant_id, c.hour, c.dim HAVING MIN(c.n) >= 0 AND SUM(c.n) = MAX(p.n)
)
INSERT INTO tenant_dims_hourly AS a (tenant_id, hour, dimension, value, count)
SELECT c.tenant_id, c.hour, 'human:' || c.dim, c.value, c.n FROM per c
WHERE c.n > 0 AND EXISTS (SELECT 1 FROM fit f WHERE f.tenant_id = c.tenant_id AND f.hour = c.hour AND f.dim = c.dim)
UNION ALL
SELECT p.tenant_id, p.hour, 'human:' || names.dim, '(more)', p.n FROM legacy_tenant_hours p CROSS JOIN names
WHERE NOT EXISTS (SELECT 1 FROM fit f WHERE f.tenant_id = p.tenant_id AND f.hour = p.hour AND f.dim = names.dim)
UNION ALL
SELECT p.tenant_id, p.hour, 'automated:' || names.dim, '(HUMAN)', p.n FROM legacy_tenant_hours p CROSS JOIN names WHERE true
UNION ALL
SELECT p.tenant_id, p.hour, 'traffic', 'human', p.n FROM legacy_tenant_hours p WHERE true
UNION ALL
SELECT p.tenant_id, p.hour, 'traffic_minute', 'human', p.n FROM legacy_tenant_hours p WHERE true
ON CONFLICT (tenant_id, dimension, hour, value) DO UPDATE SET count = a.count + excluded.count;
DROP TABLE legacy_tenant_hours;

-- 3. Link days: the legacy part of the hours retention already removed.
CREATE TEMP TABLE legacy_link_days AS
SELECT link_id, day, SUM(CASE WHEN dimension = 'country' THEN count ELSE -count END) AS n
FROM link_dims_daily WHERE dimension IN ('country', 'traffic') GROUP BY link_id, day
HAVING SUM(CASE WHEN dimension = 'country' THEN count ELSE -count END) > 0;
WITH names (dim) AS (VALUES ('country'), ('referrer'), ('device'), ('browser'), ('os'), ('utm_source'), ('variant')),
per AS (
    SELECT c.link_id, c.day, CASE WHEN c.dimension LIKE '%:%' THEN split_part(c.dimension, ':', 2) ELSE c.dimension END AS dim, c.value,
        SUM(CASE WHEN c.dimension LIKE '%:%' THEN -c.count ELSE c.count END) AS n
    FROM link_dims_daily c JOIN legacy_link_days p ON c.link_id = p.link_id AND c.day = p.day
    WHERE c.dimension IN ('country', 'referrer', 'device', 'browser', 'os', 'utm_source', 'variant',
        'human:country', 'automated:country', 'human:referrer', 'automated:referrer', 'human:device', 'automated:device', 'human:browser', 'automated:browser', 'human:os', 'automated:os', 'human:utm_source', 'automated:utm_source', 'human:variant', 'automated:variant')
        AND c.value NOT IN ('(HUMAN)', '(AUTOMATED)')
    GROUP BY c.link_id, c.day, 3, c.value
),
fit AS (
    SELECT c.link_id, c.day, c.dim FROM per c JOIN legacy_link_days p ON c.link_id = p.link_id AND c.day = p.day
    GROUP BY c.link_id, c.day, c.dim HAVING MIN(c.n) >= 0 AND SUM(c.n) = MAX(p.n)
)
INSERT INTO link_dims_daily AS a (link_id, day, dimension, value, count)
SELECT c.link_id, c.day, 'human:' || c.dim, c.value, c.n FROM per c
WHERE c.n > 0 AND EXISTS (SELECT 1 FROM fit f WHERE f.link_id = c.link_id AND f.day = c.day AND f.dim = c.dim)
UNION ALL
SELECT p.link_id, p.day, 'human:' || names.dim, '(more)', p.n FROM legacy_link_days p CROSS JOIN names
WHERE NOT EXISTS (SELECT 1 FROM fit f WHERE f.link_id = p.link_id AND f.day = p.day AND f.dim = names.dim)
UNION ALL
SELECT p.link_id, p.day, 'automated:' || names.dim, '(HUMAN)', p.n FROM legacy_link_days p CROSS JOIN names WHERE true
UNION ALL
SELECT p.link_id, p.day, 'traffic', 'human', p.n FROM legacy_link_days p WHERE true
UNION ALL
SELECT p.link_id, p.day, 'traffic_minute', 'human', p.n FROM legacy_link_days p WHERE true
ON CONFLICT (link_id, dimension, day, value) DO UPDATE SET count = a.count + excluded.count;
DROP TABLE legacy_link_days;

-- 4. Tenant days, the same.
CREATE TEMP TABLE legacy_tenant_days AS
SELECT tenant_id, day, SUM(CASE WHEN dimension = 'country' THEN count ELSE -count END) AS n
FROM tenant_dims_daily WHERE dimension IN ('country', 'traffic') GROUP BY tenant_id, day
HAVING SUM(CASE WHEN dimension = 'country' THEN count ELSE -count END) > 0;
WITH names (dim) AS (VALUES ('country'), ('referrer'), ('device'), ('browser'), ('os'), ('utm_source'), ('variant')),
per AS (
    SELECT c.tenant_id, c.day, CASE WHEN c.dimension LIKE '%:%' THEN split_part(c.dimension, ':', 2) ELSE c.dimension END AS dim, c.value,
        SUM(CASE WHEN c.dimension LIKE '%:%' THEN -c.count ELSE c.count END) AS n
    FROM tenant_dims_daily c JOIN legacy_tenant_days p ON c.tenant_id = p.tenant_id AND c.day = p.day
    WHERE c.dimension IN ('country', 'referrer', 'device', 'browser', 'os', 'utm_source', 'variant',
        'human:country', 'automated:country', 'human:referrer', 'automated:referrer', 'human:device', 'automated:device', 'human:browser', 'automated:browser', 'human:os', 'automated:os', 'human:utm_source', 'automated:utm_source', 'human:variant', 'automated:variant')
        AND c.value NOT IN ('(HUMAN)', '(AUTOMATED)')
    GROUP BY c.tenant_id, c.day, 3, c.value
),
fit AS (
    SELECT c.tenant_id, c.day, c.dim FROM per c JOIN legacy_tenant_days p ON c.tenant_id = p.tenant_id AND c.day = p.day
    GROUP BY c.tenant_id, c.day, c.dim HAVING MIN(c.n) >= 0 AND SUM(c.n) = MAX(p.n)
)
INSERT INTO tenant_dims_daily AS a (tenant_id, day, dimension, value, count)
SELECT c.tenant_id, c.day, 'human:' || c.dim, c.value, c.n FROM per c
WHERE c.n > 0 AND EXISTS (SELECT 1 FROM fit f WHERE f.tenant_id = c.tenant_id AND f.day = c.day AND f.dim = c.dim)
UNION ALL
SELECT p.tenant_id, p.day, 'human:' || names.dim, '(more)', p.n FROM legacy_tenant_days p CROSS JOIN names
WHERE NOT EXISTS (SELECT 1 FROM fit f WHERE f.tenant_id = p.tenant_id AND f.day = p.day AND f.dim = names.dim)
UNION ALL
SELECT p.tenant_id, p.day, 'automated:' || names.dim, '(HUMAN)', p.n FROM legacy_tenant_days p CROSS JOIN names WHERE true
UNION ALL
SELECT p.tenant_id, p.day, 'traffic', 'human', p.n FROM legacy_tenant_days p WHERE true
UNION ALL
SELECT p.tenant_id, p.day, 'traffic_minute', 'human', p.n FROM legacy_tenant_days p WHERE true
ON CONFLICT (tenant_id, dimension, day, value) DO UPDATE SET count = a.count + excluded.count;
DROP TABLE legacy_tenant_days;

-- +goose Down
-- Kept: the rows are what the counter writes for human clicks, which the
-- schema before this one reads the same way, and after the Up they cannot
-- be told apart from rows of clicks classified human.
SELECT 1;
