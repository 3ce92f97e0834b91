-- The automated part of each hour's clicks, beside the hour's count in the
-- hourly aggregates that retention keeps (docs/adr/027-retention.md): the
-- per-bucket human/automated split of /stats by hour and by day reads it,
-- so a bucket older than --retention-hours, whose click_dims and
-- tenant_dims_hourly rows are gone (deleted or a dropped partition), still
-- carries its own split. Kept on insert and update of click_dims rows of
-- the traffic dimension's "automated" value, like the other aggregates
-- (never on delete), under the same advisory lock as 00006; a link's
-- delete lowers tenant_hourly by it as by the count.

--
-- It also adds link_daily_top: the top of each (tenant, day) of link_daily
-- by count, which /stats/links over a range with no whole day (the last
-- 24 hours) reads its candidates from, a few rows per day instead of every
-- link's (store/postgres TopLinks). It costs an index entry per link_daily
-- upsert, as links_tenant_clicks does per rollup_clicks change.

-- +goose Up
CREATE INDEX link_daily_top ON link_daily (tenant_id, day, count DESC) INCLUDE (link_id);
ALTER TABLE link_hourly ADD COLUMN automated BIGINT NOT NULL DEFAULT 0;
ALTER TABLE tenant_hourly ADD COLUMN automated BIGINT NOT NULL DEFAULT 0;

-- What the raw rows still hold: hours already pruned keep 0.
INSERT INTO link_hourly AS a (tenant_id, hour, link_id, count, automated)
SELECT l.tenant_id, c.hour, c.link_id, 0, SUM(c.count) FROM click_dims c JOIN links l ON l.id = c.link_id
WHERE c.dimension = 'traffic' AND c.value = 'automated' GROUP BY 1, 2, 3
ON CONFLICT (tenant_id, hour, link_id) DO UPDATE SET automated = excluded.automated;
INSERT INTO tenant_hourly AS a (tenant_id, hour, count, automated)
SELECT tenant_id, hour, 0, SUM(count) FROM tenant_dims_hourly
WHERE dimension = 'traffic' AND value = 'automated' GROUP BY 1, 2
ON CONFLICT (tenant_id, hour) DO UPDATE SET automated = excluded.automated;

-- +goose StatementBegin
CREATE FUNCTION linkforge_traffic_hourly_agg() RETURNS trigger
LANGUAGE plpgsql AS $$
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

CREATE TRIGGER click_dims_traffic_hourly_insert AFTER INSERT ON click_dims
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION linkforge_traffic_hourly_agg();
CREATE TRIGGER click_dims_traffic_hourly_update AFTER UPDATE ON click_dims
    REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION linkforge_traffic_hourly_agg();

-- 00020's linkforge_links_agg_delete, lowering tenant_hourly's automated as well.
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

-- +goose Down
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION linkforge_links_agg_delete() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_advisory_xact_lock(7306231866145637);
    INSERT INTO tenant_hourly AS a (tenant_id, hour, count)
    SELECT h.tenant_id, h.hour, -SUM(h.count)
    FROM old_rows o JOIN link_hourly h ON h.link_id = o.id
    GROUP BY 1, 2 ORDER BY 1, 2
    ON CONFLICT (tenant_id, hour) DO UPDATE SET count = a.count + excluded.count;
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
DROP TRIGGER click_dims_traffic_hourly_update ON click_dims;
DROP TRIGGER click_dims_traffic_hourly_insert ON click_dims;
DROP FUNCTION linkforge_traffic_hourly_agg();
-- Rows the triggers made for an hour with no click_rollup row yet.
DELETE FROM link_hourly WHERE count = 0;
DELETE FROM tenant_hourly WHERE count = 0;
ALTER TABLE tenant_hourly DROP COLUMN automated;
ALTER TABLE link_hourly DROP COLUMN automated;
DROP INDEX link_daily_top;
