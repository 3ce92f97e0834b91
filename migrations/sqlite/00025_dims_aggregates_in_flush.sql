-- The flush keeps click_dims' aggregates itself (store/sqlite/dims.go,
-- upsertDims; docs/performance.md): it reads the
-- rows' stored counts, writes the rows that grow, and adds their growth to
-- tenant_dims_hourly, link_dims_daily, tenant_dims_daily and the automated
-- part of link_hourly and tenant_hourly summed by key, once per aggregate
-- row per flush. The row triggers below did it three upserts per dimension
-- row: about half of a burst of one-off links' flush. SQLite has no
-- statement triggers, so the sum by key can only be the writer's.
--
-- The invariant of 00006 and 00008 holds: each aggregate row is the sum of
-- the raw rows of the links that exist, kept in the transaction of the
-- write. Every writer of click_dims rows is the flush (or a delete, whose
-- triggers stay): a tool that inserts raw rows into a migrated database
-- must go through the store's UpsertClicks, or load under the schema
-- before 00006 and migrate (the bench's stats loader does).
-- +goose Up
DROP TRIGGER click_dims_traffic_hourly_update;
DROP TRIGGER click_dims_traffic_hourly_insert;
DROP TRIGGER click_dims_agg_daily_update;
DROP TRIGGER click_dims_agg_daily_insert;
DROP TRIGGER click_dims_agg_update;
DROP TRIGGER click_dims_agg_insert;

-- +goose Down
-- The triggers as 00006, 00008 and 00022 made them.
-- +goose StatementBegin
CREATE TRIGGER click_dims_agg_insert AFTER INSERT ON click_dims
WHEN NEW.count <> 0
BEGIN
    INSERT INTO tenant_dims_hourly (tenant_id, dimension, hour, value, count)
    SELECT tenant_id, NEW.dimension, NEW.hour, NEW.value, NEW.count FROM links WHERE id = NEW.link_id
    ON CONFLICT (tenant_id, dimension, hour, value) DO UPDATE SET count = count + excluded.count;
    INSERT INTO link_dims_daily (link_id, dimension, day, value, count)
    SELECT id, NEW.dimension, NEW.hour / 86400 * 86400, NEW.value, NEW.count FROM links WHERE id = NEW.link_id
    ON CONFLICT (link_id, dimension, day, value) DO UPDATE SET count = count + excluded.count;
END;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE TRIGGER click_dims_agg_update AFTER UPDATE ON click_dims
BEGIN
    INSERT INTO tenant_dims_hourly (tenant_id, dimension, hour, value, count)
    SELECT tenant_id, OLD.dimension, OLD.hour, OLD.value, -OLD.count FROM links WHERE id = OLD.link_id
    ON CONFLICT (tenant_id, dimension, hour, value) DO UPDATE SET count = count + excluded.count;
    INSERT INTO link_dims_daily (link_id, dimension, day, value, count)
    SELECT id, OLD.dimension, OLD.hour / 86400 * 86400, OLD.value, -OLD.count FROM links WHERE id = OLD.link_id
    ON CONFLICT (link_id, dimension, day, value) DO UPDATE SET count = count + excluded.count;
    INSERT INTO tenant_dims_hourly (tenant_id, dimension, hour, value, count)
    SELECT tenant_id, NEW.dimension, NEW.hour, NEW.value, NEW.count FROM links WHERE id = NEW.link_id
    ON CONFLICT (tenant_id, dimension, hour, value) DO UPDATE SET count = count + excluded.count;
    INSERT INTO link_dims_daily (link_id, dimension, day, value, count)
    SELECT id, NEW.dimension, NEW.hour / 86400 * 86400, NEW.value, NEW.count FROM links WHERE id = NEW.link_id
    ON CONFLICT (link_id, dimension, day, value) DO UPDATE SET count = count + excluded.count;
END;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE TRIGGER click_dims_agg_daily_insert AFTER INSERT ON click_dims
WHEN NEW.count <> 0
BEGIN
    INSERT INTO tenant_dims_daily (tenant_id, dimension, day, value, count)
    SELECT tenant_id, NEW.dimension, NEW.hour / 86400 * 86400, NEW.value, NEW.count FROM links WHERE id = NEW.link_id
    ON CONFLICT (tenant_id, dimension, day, value) DO UPDATE SET count = count + excluded.count;
END;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE TRIGGER click_dims_agg_daily_update AFTER UPDATE ON click_dims
WHEN NEW.count <> OLD.count OR NEW.link_id <> OLD.link_id OR NEW.hour <> OLD.hour
    OR NEW.dimension <> OLD.dimension OR NEW.value <> OLD.value
BEGIN
    INSERT INTO tenant_dims_daily (tenant_id, dimension, day, value, count)
    SELECT tenant_id, OLD.dimension, OLD.hour / 86400 * 86400, OLD.value, -OLD.count FROM links WHERE id = OLD.link_id
    ON CONFLICT (tenant_id, dimension, day, value) DO UPDATE SET count = count + excluded.count;
    INSERT INTO tenant_dims_daily (tenant_id, dimension, day, value, count)
    SELECT tenant_id, NEW.dimension, NEW.hour / 86400 * 86400, NEW.value, NEW.count FROM links WHERE id = NEW.link_id
    ON CONFLICT (tenant_id, dimension, day, value) DO UPDATE SET count = count + excluded.count;
END;
-- +goose StatementEnd

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
