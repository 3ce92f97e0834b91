-- Pre-aggregated click counts for the tenant-wide stats and the analytics
-- queries (docs/adr/010-analytics-queries.md). hour and day are the UTC
-- starts of their interval.
--
-- The aggregates are kept by triggers, in the transaction of the write that
-- changes the raw rows (a flush's upsert, a link delete), whoever writes
-- them. Invariant: each aggregate row is the sum of the raw rows
-- (click_rollup, click_dims) of the links that exist, in its key. Rows of
-- deleted links, or of link ids no link has (a flush racing a delete), are
-- in no aggregate, as the raw queries leave them out by joining links. Link
-- ids are never reused, so a new link has no raw rows to add; a link's
-- tenant never changes. Counts that fall to zero leave their row at zero:
-- the queries skip zeros.
--
-- Concurrency: the triggers are per statement (one pass over a whole flush,
-- grouped), and each first takes one transaction-scoped advisory lock, so
-- aggregate maintenance is serialized: flushes of several nodes touch the
-- same (tenant, hour) rows in orders no sort of the raw rows could make
-- consistent, and would otherwise deadlock. The lock also orders a flush
-- against a link delete: the trigger's lookups of links run after it, so a
-- flush committed after the delete adds nothing for the deleted link.

-- +goose Up
-- GET /api/v1/stats?interval=hour|day and its all-time total.
CREATE TABLE tenant_hourly (
    tenant_id BIGINT      NOT NULL,
    hour      TIMESTAMPTZ NOT NULL,
    count     BIGINT      NOT NULL,
    PRIMARY KEY (tenant_id, hour)
);

-- GET /api/v1/stats/links: whole days from link_daily, the hours at the
-- ends of a range from link_hourly, so that 30 days read one row per link
-- and day rather than one per link and minute.
CREATE TABLE link_hourly (
    tenant_id BIGINT      NOT NULL,
    hour      TIMESTAMPTZ NOT NULL,
    link_id   BIGINT      NOT NULL,
    count     BIGINT      NOT NULL,
    PRIMARY KEY (tenant_id, hour, link_id)
);
CREATE TABLE link_daily (
    tenant_id BIGINT      NOT NULL,
    day       TIMESTAMPTZ NOT NULL,
    link_id   BIGINT      NOT NULL,
    count     BIGINT      NOT NULL,
    PRIMARY KEY (tenant_id, day, link_id)
);

-- GET /api/v1/stats/{dimension}.
CREATE TABLE tenant_dims_hourly (
    tenant_id BIGINT      NOT NULL,
    dimension TEXT        NOT NULL,
    hour      TIMESTAMPTZ NOT NULL,
    value     TEXT        NOT NULL,
    count     BIGINT      NOT NULL,
    PRIMARY KEY (tenant_id, dimension, hour, value)
);

-- GET /api/v1/links/{slug}/stats/{dimension}: whole days from
-- link_dims_daily, the hours at the ends of a range from click_dims through
-- this index (one dimension of one link without reading the other five).
CREATE TABLE link_dims_daily (
    link_id   BIGINT      NOT NULL,
    dimension TEXT        NOT NULL,
    day       TIMESTAMPTZ NOT NULL,
    value     TEXT        NOT NULL,
    count     BIGINT      NOT NULL,
    PRIMARY KEY (link_id, dimension, day, value)
);
CREATE INDEX click_dims_link_dimension ON click_dims (link_id, dimension, hour);

-- +goose StatementBegin
-- Applies (link, minute bucket, delta) triples to the rollup aggregates.
CREATE FUNCTION linkforge_apply_rollup(ids BIGINT[], buckets TIMESTAMPTZ[], deltas BIGINT[]) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
    IF cardinality(ids) = 0 THEN
        RETURN;
    END IF;
    PERFORM pg_advisory_xact_lock(7306231866145637);
    -- Links are looked up after the lock: see the head of this file.
    INSERT INTO tenant_hourly AS a (tenant_id, hour, count)
    SELECT l.tenant_id, date_trunc('hour', u.bucket, 'UTC') AS h, SUM(u.delta)
    FROM unnest(ids, buckets, deltas) AS u (link_id, bucket, delta) JOIN links l ON l.id = u.link_id
    GROUP BY 1, 2 ORDER BY 1, 2
    ON CONFLICT (tenant_id, hour) DO UPDATE SET count = a.count + excluded.count;
    INSERT INTO link_hourly AS a (tenant_id, hour, link_id, count)
    SELECT l.tenant_id, date_trunc('hour', u.bucket, 'UTC') AS h, u.link_id, SUM(u.delta)
    FROM unnest(ids, buckets, deltas) AS u (link_id, bucket, delta) JOIN links l ON l.id = u.link_id
    GROUP BY 1, 2, 3 ORDER BY 1, 2, 3
    ON CONFLICT (tenant_id, hour, link_id) DO UPDATE SET count = a.count + excluded.count;
    INSERT INTO link_daily AS a (tenant_id, day, link_id, count)
    SELECT l.tenant_id, date_trunc('day', u.bucket, 'UTC') AS d, u.link_id, SUM(u.delta)
    FROM unnest(ids, buckets, deltas) AS u (link_id, bucket, delta) JOIN links l ON l.id = u.link_id
    GROUP BY 1, 2, 3 ORDER BY 1, 2, 3
    ON CONFLICT (tenant_id, day, link_id) DO UPDATE SET count = a.count + excluded.count;
END $$;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE FUNCTION linkforge_rollup_agg() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
    ids BIGINT[];
    buckets TIMESTAMPTZ[];
    deltas BIGINT[];
BEGIN
    IF TG_OP = 'INSERT' THEN
        SELECT array_agg(link_id), array_agg(bucket), array_agg(count)
        INTO ids, buckets, deltas FROM new_rows WHERE count <> 0;
    ELSIF TG_OP = 'DELETE' THEN
        SELECT array_agg(link_id), array_agg(bucket), array_agg(-count)
        INTO ids, buckets, deltas FROM old_rows WHERE count <> 0;
    ELSE
        SELECT array_agg(link_id), array_agg(bucket), array_agg(d)
        INTO ids, buckets, deltas FROM (
            SELECT link_id, bucket, SUM(count) AS d FROM (
                SELECT link_id, bucket, count FROM new_rows
                UNION ALL SELECT link_id, bucket, -count FROM old_rows
            ) c GROUP BY link_id, bucket HAVING SUM(count) <> 0
        ) g;
    END IF;
    PERFORM linkforge_apply_rollup(COALESCE(ids, '{}'), COALESCE(buckets, '{}'), COALESCE(deltas, '{}'));
    RETURN NULL;
END $$;
-- +goose StatementEnd

CREATE TRIGGER click_rollup_agg_insert AFTER INSERT ON click_rollup
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION linkforge_rollup_agg();
CREATE TRIGGER click_rollup_agg_update AFTER UPDATE ON click_rollup
    REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION linkforge_rollup_agg();
CREATE TRIGGER click_rollup_agg_delete AFTER DELETE ON click_rollup
    REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION linkforge_rollup_agg();

-- +goose StatementBegin
CREATE FUNCTION linkforge_dims_agg() RETURNS trigger
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

CREATE TRIGGER click_dims_agg_insert AFTER INSERT ON click_dims
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION linkforge_dims_agg();
CREATE TRIGGER click_dims_agg_update AFTER UPDATE ON click_dims
    REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION linkforge_dims_agg();
CREATE TRIGGER click_dims_agg_delete AFTER DELETE ON click_dims
    REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION linkforge_dims_agg();

-- A deleted link's raw rows leave the aggregates, whether DeleteLink
-- deletes them before the link (the triggers above subtract them) or after
-- (then here, and the triggers above find no link).
-- +goose StatementBegin
CREATE FUNCTION linkforge_links_agg_delete() RETURNS trigger
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

CREATE TRIGGER links_agg_delete AFTER DELETE ON links
    REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION linkforge_links_agg_delete();

-- What the raw tables hold already.
INSERT INTO tenant_hourly (tenant_id, hour, count)
SELECT l.tenant_id, date_trunc('hour', r.bucket, 'UTC'), SUM(r.count)
FROM click_rollup r JOIN links l ON l.id = r.link_id GROUP BY 1, 2;
INSERT INTO link_hourly (tenant_id, hour, link_id, count)
SELECT l.tenant_id, date_trunc('hour', r.bucket, 'UTC'), r.link_id, SUM(r.count)
FROM click_rollup r JOIN links l ON l.id = r.link_id GROUP BY 1, 2, 3;
INSERT INTO link_daily (tenant_id, day, link_id, count)
SELECT l.tenant_id, date_trunc('day', r.bucket, 'UTC'), r.link_id, SUM(r.count)
FROM click_rollup r JOIN links l ON l.id = r.link_id GROUP BY 1, 2, 3;
INSERT INTO tenant_dims_hourly (tenant_id, dimension, hour, value, count)
SELECT l.tenant_id, c.dimension, c.hour, c.value, SUM(c.count)
FROM click_dims c JOIN links l ON l.id = c.link_id GROUP BY 1, 2, 3, 4;
INSERT INTO link_dims_daily (link_id, dimension, day, value, count)
SELECT c.link_id, c.dimension, date_trunc('day', c.hour, 'UTC'), c.value, SUM(c.count)
FROM click_dims c JOIN links l ON l.id = c.link_id GROUP BY 1, 2, 3, 4;

-- +goose Down
DROP TRIGGER links_agg_delete ON links;
DROP TRIGGER click_dims_agg_delete ON click_dims;
DROP TRIGGER click_dims_agg_update ON click_dims;
DROP TRIGGER click_dims_agg_insert ON click_dims;
DROP TRIGGER click_rollup_agg_delete ON click_rollup;
DROP TRIGGER click_rollup_agg_update ON click_rollup;
DROP TRIGGER click_rollup_agg_insert ON click_rollup;
DROP FUNCTION linkforge_links_agg_delete();
DROP FUNCTION linkforge_dims_agg();
DROP FUNCTION linkforge_rollup_agg();
DROP FUNCTION linkforge_apply_rollup(BIGINT[], TIMESTAMPTZ[], BIGINT[]);
DROP INDEX click_dims_link_dimension;
DROP TABLE link_dims_daily;
DROP TABLE tenant_dims_hourly;
DROP TABLE link_daily;
DROP TABLE link_hourly;
DROP TABLE tenant_hourly;
