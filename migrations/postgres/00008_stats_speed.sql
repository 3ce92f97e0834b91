-- Faster analytics over long ranges (issue 11's performance leftover,
-- docs/adr/010-analytics-queries.md). day is the UTC start of
-- its day.
--
-- Same invariant and concurrency as 00006: each aggregate row is the sum of
-- the raw rows (here click_dims) of the links that exist, in its key, kept
-- by the statement triggers of 00006 (whose functions this replaces) under
-- the same advisory lock.

-- +goose Up
-- GET /api/v1/stats/{dimension}: whole UTC days from tenant_dims_daily,
-- the hours at the ends of a range from tenant_dims_hourly, so that 30 days
-- of a 100-value dimension read about 5,000 rows instead of 72,000.
CREATE TABLE tenant_dims_daily (
    tenant_id BIGINT      NOT NULL,
    dimension TEXT        NOT NULL,
    day       TIMESTAMPTZ NOT NULL,
    value     TEXT        NOT NULL,
    count     BIGINT      NOT NULL,
    PRIMARY KEY (tenant_id, dimension, day, value)
);

-- GET /api/v1/stats/links ranks the links by their all-time clicks
-- (links_tenant_clicks, 00007: an upper bound of their clicks in any range)
-- and reads the range's exact clicks of the first candidates only, one
-- link at a time: these two indexes serve that read. count is not in them,
-- so a flush's count updates stay HOT where the page has room.
CREATE INDEX link_daily_link ON link_daily (link_id, day);
CREATE INDEX link_hourly_link ON link_hourly (link_id, hour);

-- 00006's functions, each branch also keeping tenant_dims_daily.
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
    INSERT INTO tenant_hourly AS a (tenant_id, hour, count)
    SELECT o.tenant_id, date_trunc('hour', r.bucket, 'UTC') AS h, -SUM(r.count)
    FROM old_rows o JOIN click_rollup r ON r.link_id = o.id
    GROUP BY 1, 2 ORDER BY 1, 2
    ON CONFLICT (tenant_id, hour) DO UPDATE SET count = a.count + excluded.count;
    DELETE FROM link_hourly a USING (
        SELECT DISTINCT o.tenant_id, date_trunc('hour', r.bucket, 'UTC') AS h, o.id
        FROM old_rows o JOIN click_rollup r ON r.link_id = o.id
    ) g WHERE a.tenant_id = g.tenant_id AND a.hour = g.h AND a.link_id = g.id;
    DELETE FROM link_daily a USING (
        SELECT DISTINCT o.tenant_id, date_trunc('day', r.bucket, 'UTC') AS d, o.id
        FROM old_rows o JOIN click_rollup r ON r.link_id = o.id
    ) g WHERE a.tenant_id = g.tenant_id AND a.day = g.d AND a.link_id = g.id;
    INSERT INTO tenant_dims_hourly AS a (tenant_id, dimension, hour, value, count)
    SELECT o.tenant_id, c.dimension, c.hour, c.value, -SUM(c.count)
    FROM old_rows o JOIN click_dims c ON c.link_id = o.id
    GROUP BY 1, 2, 3, 4 ORDER BY 1, 2, 3, 4
    ON CONFLICT (tenant_id, dimension, hour, value) DO UPDATE SET count = a.count + excluded.count;
    DELETE FROM link_dims_daily a USING old_rows o WHERE a.link_id = o.id;
    INSERT INTO tenant_dims_daily AS a (tenant_id, dimension, day, value, count)
    SELECT o.tenant_id, c.dimension, date_trunc('day', c.hour, 'UTC'), c.value, -SUM(c.count)
    FROM old_rows o JOIN click_dims c ON c.link_id = o.id
    GROUP BY 1, 2, 3, 4 ORDER BY 1, 2, 3, 4
    ON CONFLICT (tenant_id, dimension, day, value) DO UPDATE SET count = a.count + excluded.count;
    RETURN NULL;
END $$;
-- +goose StatementEnd

-- What the hourly aggregate holds already (equal, by the invariant, to the
-- raw rows of the existing links, and a tenth of their size).
INSERT INTO tenant_dims_daily (tenant_id, dimension, day, value, count)
SELECT tenant_id, dimension, date_trunc('day', hour, 'UTC'), value, SUM(count)
FROM tenant_dims_hourly GROUP BY 1, 2, 3, 4;

-- +goose Down
-- 00006's functions as they were.
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
    END IF;
    RETURN NULL;
END $$;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE OR REPLACE FUNCTION linkforge_links_agg_delete() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_advisory_xact_lock(7306231866145637);
    INSERT INTO tenant_hourly AS a (tenant_id, hour, count)
    SELECT o.tenant_id, date_trunc('hour', r.bucket, 'UTC') AS h, -SUM(r.count)
    FROM old_rows o JOIN click_rollup r ON r.link_id = o.id
    GROUP BY 1, 2 ORDER BY 1, 2
    ON CONFLICT (tenant_id, hour) DO UPDATE SET count = a.count + excluded.count;
    DELETE FROM link_hourly a USING (
        SELECT DISTINCT o.tenant_id, date_trunc('hour', r.bucket, 'UTC') AS h, o.id
        FROM old_rows o JOIN click_rollup r ON r.link_id = o.id
    ) g WHERE a.tenant_id = g.tenant_id AND a.hour = g.h AND a.link_id = g.id;
    DELETE FROM link_daily a USING (
        SELECT DISTINCT o.tenant_id, date_trunc('day', r.bucket, 'UTC') AS d, o.id
        FROM old_rows o JOIN click_rollup r ON r.link_id = o.id
    ) g WHERE a.tenant_id = g.tenant_id AND a.day = g.d AND a.link_id = g.id;
    INSERT INTO tenant_dims_hourly AS a (tenant_id, dimension, hour, value, count)
    SELECT o.tenant_id, c.dimension, c.hour, c.value, -SUM(c.count)
    FROM old_rows o JOIN click_dims c ON c.link_id = o.id
    GROUP BY 1, 2, 3, 4 ORDER BY 1, 2, 3, 4
    ON CONFLICT (tenant_id, dimension, hour, value) DO UPDATE SET count = a.count + excluded.count;
    DELETE FROM link_dims_daily a USING old_rows o WHERE a.link_id = o.id;
    RETURN NULL;
END $$;
-- +goose StatementEnd

DROP INDEX link_hourly_link;
DROP INDEX link_daily_link;
DROP TABLE tenant_dims_daily;
