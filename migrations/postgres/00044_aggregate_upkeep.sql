-- One home for the aggregates' upkeep (docs/adr/052-aggregate-upkeep.md):
-- the store's Go, in the transaction of the write of raw rows
-- (store/internal/aggregates, store/postgres/aggregates.go), as on SQLite.
-- The statement triggers that summed click_rollup (00006, 00021, 00024)
-- and click_dims (00008, 00022, 00029) into the six aggregate tables and
-- links.rollup_clicks, and the links delete trigger, go with their
-- functions: the flush reads the stored counts under the aggregates'
-- advisory lock, writes the rows that grow and adds their growth summed
-- by key; DeleteLink takes the link out of the aggregates itself. The
-- invariant stays: each aggregate row is the sum of its raw rows
-- (store/storetest). Down puts the triggers back as 00029 left them.
-- +goose Up
DROP TRIGGER click_rollup_agg_insert ON click_rollup;
DROP TRIGGER click_rollup_agg_update ON click_rollup;
DROP TRIGGER click_rollup_0_links_clicks_insert ON click_rollup;
DROP TRIGGER click_rollup_0_links_clicks_update ON click_rollup;
DROP TRIGGER click_dims_agg_insert ON click_dims;
DROP TRIGGER click_dims_agg_update ON click_dims;
DROP TRIGGER click_dims_traffic_hourly_insert ON click_dims;
DROP TRIGGER click_dims_traffic_hourly_update ON click_dims;
DROP TRIGGER links_agg_delete ON links;
DROP FUNCTION linkforge_rollup_agg();
DROP FUNCTION linkforge_apply_rollup(BIGINT[], TIMESTAMPTZ[], BIGINT[]);
DROP FUNCTION links_rollup_clicks_stmt();
DROP FUNCTION linkforge_dims_agg();
DROP FUNCTION linkforge_traffic_hourly_agg();
DROP FUNCTION linkforge_links_agg_delete();

-- +goose Down
-- +goose StatementBegin
CREATE FUNCTION linkforge_apply_rollup(ids bigint[], buckets timestamp with time zone[], deltas bigint[])
 RETURNS void
 LANGUAGE plpgsql
AS $$
BEGIN
    IF cardinality(ids) = 0 THEN
        RETURN;
    END IF;
    PERFORM pg_advisory_xact_lock(7306231866145637);
    -- Links are looked up after the lock: see the head of 00006.
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
CREATE FUNCTION linkforge_rollup_agg()
 RETURNS trigger
 LANGUAGE plpgsql
AS $$
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
-- +goose StatementBegin
CREATE FUNCTION linkforge_dims_agg()
 RETURNS trigger
 LANGUAGE plpgsql
AS $$
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
CREATE FUNCTION linkforge_traffic_hourly_agg()
 RETURNS trigger
 LANGUAGE plpgsql
AS $$
BEGIN
    PERFORM pg_advisory_xact_lock(7306231866145637);
    IF TG_OP = 'INSERT' THEN
        INSERT INTO link_hourly AS a (tenant_id, hour, link_id, count, automated)
        SELECT l.tenant_id, n.hour, n.link_id, 0, SUM(n.count)
        FROM new_rows n JOIN links l ON l.id = n.link_id
        WHERE n.dimension = 'traffic' AND n.value = 'automated' AND n.count <> 0
        GROUP BY 1, 2, 3 ORDER BY 1, 2, 3
        ON CONFLICT (tenant_id, hour, link_id) DO UPDATE SET automated = a.automated + excluded.automated;
        INSERT INTO tenant_hourly AS a (tenant_id, hour, count, automated)
        SELECT l.tenant_id, n.hour, 0, SUM(n.count)
        FROM new_rows n JOIN links l ON l.id = n.link_id
        WHERE n.dimension = 'traffic' AND n.value = 'automated' AND n.count <> 0
        GROUP BY 1, 2 ORDER BY 1, 2
        ON CONFLICT (tenant_id, hour) DO UPDATE SET automated = a.automated + excluded.automated;
    ELSE
        INSERT INTO link_hourly AS a (tenant_id, hour, link_id, count, automated)
        SELECT l.tenant_id, c.hour, c.link_id, 0, SUM(c.count)
        FROM (
            SELECT link_id, hour, count FROM new_rows WHERE dimension = 'traffic' AND value = 'automated'
            UNION ALL SELECT link_id, hour, -count FROM old_rows WHERE dimension = 'traffic' AND value = 'automated'
        ) c JOIN links l ON l.id = c.link_id
        GROUP BY 1, 2, 3 HAVING SUM(c.count) <> 0 ORDER BY 1, 2, 3
        ON CONFLICT (tenant_id, hour, link_id) DO UPDATE SET automated = a.automated + excluded.automated;
        INSERT INTO tenant_hourly AS a (tenant_id, hour, count, automated)
        SELECT l.tenant_id, c.hour, 0, SUM(c.count)
        FROM (
            SELECT link_id, hour, count FROM new_rows WHERE dimension = 'traffic' AND value = 'automated'
            UNION ALL SELECT link_id, hour, -count FROM old_rows WHERE dimension = 'traffic' AND value = 'automated'
        ) c JOIN links l ON l.id = c.link_id
        GROUP BY 1, 2 HAVING SUM(c.count) <> 0 ORDER BY 1, 2
        ON CONFLICT (tenant_id, hour) DO UPDATE SET automated = a.automated + excluded.automated;
    END IF;
    RETURN NULL;
END $$;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE FUNCTION links_rollup_clicks_stmt()
 RETURNS trigger
 LANGUAGE plpgsql
AS $$
BEGIN
    PERFORM 1 FROM links l WHERE l.id IN (
        SELECT link_id FROM new_rows
    ) ORDER BY l.id FOR NO KEY UPDATE;
    IF TG_OP = 'INSERT' THEN
        UPDATE links l SET rollup_clicks = l.rollup_clicks + d.n
        FROM (SELECT link_id, SUM(count) AS n FROM new_rows GROUP BY link_id HAVING SUM(count) <> 0) d
        WHERE l.id = d.link_id;
    ELSE
        UPDATE links l SET rollup_clicks = l.rollup_clicks + d.n
        FROM (
            SELECT link_id, SUM(c) AS n FROM (
                SELECT link_id, count AS c FROM new_rows
                UNION ALL SELECT link_id, -count FROM old_rows
            ) u GROUP BY link_id HAVING SUM(c) <> 0
        ) d
        WHERE l.id = d.link_id;
    END IF;
    RETURN NULL;
END;
$$;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE FUNCTION linkforge_links_agg_delete()
 RETURNS trigger
 LANGUAGE plpgsql
AS $$
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
CREATE TRIGGER click_rollup_agg_insert AFTER INSERT ON click_rollup
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION linkforge_rollup_agg();
CREATE TRIGGER click_rollup_agg_update AFTER UPDATE ON click_rollup
    REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION linkforge_rollup_agg();
CREATE TRIGGER click_rollup_0_links_clicks_insert AFTER INSERT ON click_rollup
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION links_rollup_clicks_stmt();
CREATE TRIGGER click_rollup_0_links_clicks_update AFTER UPDATE ON click_rollup
    REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION links_rollup_clicks_stmt();
CREATE TRIGGER click_dims_agg_insert AFTER INSERT ON click_dims
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION linkforge_dims_agg();
CREATE TRIGGER click_dims_agg_update AFTER UPDATE ON click_dims
    REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION linkforge_dims_agg();
CREATE TRIGGER click_dims_traffic_hourly_insert AFTER INSERT ON click_dims
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION linkforge_traffic_hourly_agg();
CREATE TRIGGER click_dims_traffic_hourly_update AFTER UPDATE ON click_dims
    REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION linkforge_traffic_hourly_agg();
CREATE TRIGGER links_agg_delete AFTER DELETE ON links
    REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION linkforge_links_agg_delete();
