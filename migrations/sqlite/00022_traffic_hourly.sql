-- The automated part of each hour's clicks, beside the hour's count in the
-- hourly aggregates that retention keeps (docs/adr/027-retention.md): the
-- per-bucket human/automated split of /stats by hour and by day reads it,
-- so a bucket older than --retention-hours, whose click_dims and
-- tenant_dims_hourly rows are gone, still carries its own split. Kept on
-- insert and update of click_dims rows of the traffic dimension's
-- "automated" value, like the other aggregates (never on delete); a link's
-- delete lowers tenant_hourly by it as by the count.

-- +goose Up
ALTER TABLE link_hourly ADD COLUMN automated INTEGER NOT NULL DEFAULT 0;
ALTER TABLE tenant_hourly ADD COLUMN automated INTEGER NOT NULL DEFAULT 0;

-- What the raw rows still hold: hours already pruned keep 0.
INSERT INTO link_hourly (tenant_id, hour, link_id, count, automated)
SELECT l.tenant_id, c.hour, c.link_id, 0, SUM(c.count) FROM click_dims c JOIN links l ON l.id = c.link_id
WHERE c.dimension = 'traffic' AND c.value = 'automated' GROUP BY l.tenant_id, c.hour, c.link_id
ON CONFLICT (tenant_id, hour, link_id) DO UPDATE SET automated = excluded.automated;
INSERT INTO tenant_hourly (tenant_id, hour, count, automated)
SELECT tenant_id, hour, 0, SUM(count) FROM tenant_dims_hourly
WHERE dimension = 'traffic' AND value = 'automated' GROUP BY tenant_id, hour
ON CONFLICT (tenant_id, hour) DO UPDATE SET automated = excluded.automated;

-- +goose StatementBegin
CREATE TRIGGER click_dims_traffic_hourly_insert AFTER INSERT ON click_dims
WHEN NEW.dimension = 'traffic' AND NEW.value = 'automated' AND NEW.count <> 0
BEGIN
    INSERT INTO link_hourly (tenant_id, hour, link_id, count, automated)
    SELECT tenant_id, NEW.hour, id, 0, NEW.count FROM links WHERE id = NEW.link_id
    ON CONFLICT (tenant_id, hour, link_id) DO UPDATE SET automated = automated + excluded.automated;
    INSERT INTO tenant_hourly (tenant_id, hour, count, automated)
    SELECT tenant_id, NEW.hour, 0, NEW.count FROM links WHERE id = NEW.link_id
    ON CONFLICT (tenant_id, hour) DO UPDATE SET automated = automated + excluded.automated;
END;
-- +goose StatementEnd

-- An update adds the new count and takes away the old, each where it is
-- the traffic dimension's "automated" row.
-- +goose StatementBegin
CREATE TRIGGER click_dims_traffic_hourly_update AFTER UPDATE ON click_dims
WHEN (NEW.dimension = 'traffic' AND NEW.value = 'automated') OR (OLD.dimension = 'traffic' AND OLD.value = 'automated')
BEGIN
    INSERT INTO link_hourly (tenant_id, hour, link_id, count, automated)
    SELECT tenant_id, OLD.hour, id, 0, -OLD.count FROM links
    WHERE id = OLD.link_id AND OLD.dimension = 'traffic' AND OLD.value = 'automated'
    ON CONFLICT (tenant_id, hour, link_id) DO UPDATE SET automated = automated + excluded.automated;
    INSERT INTO tenant_hourly (tenant_id, hour, count, automated)
    SELECT tenant_id, OLD.hour, 0, -OLD.count FROM links
    WHERE id = OLD.link_id AND OLD.dimension = 'traffic' AND OLD.value = 'automated'
    ON CONFLICT (tenant_id, hour) DO UPDATE SET automated = automated + excluded.automated;
    INSERT INTO link_hourly (tenant_id, hour, link_id, count, automated)
    SELECT tenant_id, NEW.hour, id, 0, NEW.count FROM links
    WHERE id = NEW.link_id AND NEW.dimension = 'traffic' AND NEW.value = 'automated'
    ON CONFLICT (tenant_id, hour, link_id) DO UPDATE SET automated = automated + excluded.automated;
    INSERT INTO tenant_hourly (tenant_id, hour, count, automated)
    SELECT tenant_id, NEW.hour, 0, NEW.count FROM links
    WHERE id = NEW.link_id AND NEW.dimension = 'traffic' AND NEW.value = 'automated'
    ON CONFLICT (tenant_id, hour) DO UPDATE SET automated = automated + excluded.automated;
END;
-- +goose StatementEnd

-- 00020's links_agg_delete, lowering tenant_hourly's automated as well.
DROP TRIGGER links_agg_delete;
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

-- +goose Down
DROP TRIGGER links_agg_delete;
-- +goose StatementBegin
CREATE TRIGGER links_agg_delete AFTER DELETE ON links
BEGIN
    INSERT INTO tenant_hourly (tenant_id, hour, count)
    SELECT OLD.tenant_id, hour, -count FROM link_hourly WHERE link_id = OLD.id AND true
    ON CONFLICT (tenant_id, hour) DO UPDATE SET count = count + excluded.count;
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
DROP TRIGGER click_dims_traffic_hourly_update;
DROP TRIGGER click_dims_traffic_hourly_insert;
-- Rows the triggers made for an hour with no click_rollup row yet.
DELETE FROM link_hourly WHERE count = 0;
DELETE FROM tenant_hourly WHERE count = 0;
ALTER TABLE tenant_hourly DROP COLUMN automated;
ALTER TABLE link_hourly DROP COLUMN automated;
