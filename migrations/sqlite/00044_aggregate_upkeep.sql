-- One home for the aggregates' upkeep (docs/adr/052-aggregate-upkeep.md):
-- the store's Go, in the transaction of the write of raw rows
-- (store/internal/aggregates), as the flush already kept click_dims'
-- since 00025. The row triggers of click_rollup (00006, 00007: four
-- upserts a minute row) and the links delete trigger (00029's) go: the
-- flush now adds the minutes' growth summed by key, and DeleteLink takes
-- the link out of the aggregates itself. The invariant stays: each
-- aggregate row is the sum of its raw rows (store/storetest).
-- +goose Up
DROP TRIGGER click_rollup_agg_insert;
DROP TRIGGER click_rollup_agg_update;
DROP TRIGGER click_rollup_agg_rekey;
DROP TRIGGER click_rollup_links_insert;
DROP TRIGGER click_rollup_links_update;
DROP TRIGGER links_agg_delete;

-- +goose Down
-- The triggers as 00006, 00007 and 00029 left them.
-- +goose StatementBegin
CREATE TRIGGER click_rollup_agg_insert AFTER INSERT ON click_rollup
WHEN NEW.count <> 0
BEGIN
    INSERT INTO tenant_hourly (tenant_id, hour, count)
    SELECT tenant_id, NEW.bucket / 3600 * 3600, NEW.count FROM links WHERE id = NEW.link_id
    ON CONFLICT (tenant_id, hour) DO UPDATE SET count = count + excluded.count;
    INSERT INTO link_hourly (tenant_id, hour, link_id, count)
    SELECT tenant_id, NEW.bucket / 3600 * 3600, id, NEW.count FROM links WHERE id = NEW.link_id
    ON CONFLICT (tenant_id, hour, link_id) DO UPDATE SET count = count + excluded.count;
    INSERT INTO link_daily (tenant_id, day, link_id, count)
    SELECT tenant_id, NEW.bucket / 86400 * 86400, id, NEW.count FROM links WHERE id = NEW.link_id
    ON CONFLICT (tenant_id, day, link_id) DO UPDATE SET count = count + excluded.count;
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER click_rollup_agg_rekey AFTER UPDATE ON click_rollup
WHEN NEW.link_id <> OLD.link_id OR NEW.bucket <> OLD.bucket
BEGIN
    INSERT INTO tenant_hourly (tenant_id, hour, count)
    SELECT tenant_id, OLD.bucket / 3600 * 3600, -OLD.count FROM links WHERE id = OLD.link_id
    ON CONFLICT (tenant_id, hour) DO UPDATE SET count = count + excluded.count;
    INSERT INTO link_hourly (tenant_id, hour, link_id, count)
    SELECT tenant_id, OLD.bucket / 3600 * 3600, id, -OLD.count FROM links WHERE id = OLD.link_id
    ON CONFLICT (tenant_id, hour, link_id) DO UPDATE SET count = count + excluded.count;
    INSERT INTO link_daily (tenant_id, day, link_id, count)
    SELECT tenant_id, OLD.bucket / 86400 * 86400, id, -OLD.count FROM links WHERE id = OLD.link_id
    ON CONFLICT (tenant_id, day, link_id) DO UPDATE SET count = count + excluded.count;
    INSERT INTO tenant_hourly (tenant_id, hour, count)
    SELECT tenant_id, NEW.bucket / 3600 * 3600, NEW.count FROM links WHERE id = NEW.link_id
    ON CONFLICT (tenant_id, hour) DO UPDATE SET count = count + excluded.count;
    INSERT INTO link_hourly (tenant_id, hour, link_id, count)
    SELECT tenant_id, NEW.bucket / 3600 * 3600, id, NEW.count FROM links WHERE id = NEW.link_id
    ON CONFLICT (tenant_id, hour, link_id) DO UPDATE SET count = count + excluded.count;
    INSERT INTO link_daily (tenant_id, day, link_id, count)
    SELECT tenant_id, NEW.bucket / 86400 * 86400, id, NEW.count FROM links WHERE id = NEW.link_id
    ON CONFLICT (tenant_id, day, link_id) DO UPDATE SET count = count + excluded.count;
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER click_rollup_agg_update AFTER UPDATE ON click_rollup
WHEN NEW.link_id = OLD.link_id AND NEW.bucket = OLD.bucket AND NEW.count <> OLD.count
BEGIN
    INSERT INTO tenant_hourly (tenant_id, hour, count)
    SELECT tenant_id, NEW.bucket / 3600 * 3600, NEW.count - OLD.count FROM links WHERE id = NEW.link_id
    ON CONFLICT (tenant_id, hour) DO UPDATE SET count = count + excluded.count;
    INSERT INTO link_hourly (tenant_id, hour, link_id, count)
    SELECT tenant_id, NEW.bucket / 3600 * 3600, id, NEW.count - OLD.count FROM links WHERE id = NEW.link_id
    ON CONFLICT (tenant_id, hour, link_id) DO UPDATE SET count = count + excluded.count;
    INSERT INTO link_daily (tenant_id, day, link_id, count)
    SELECT tenant_id, NEW.bucket / 86400 * 86400, id, NEW.count - OLD.count FROM links WHERE id = NEW.link_id
    ON CONFLICT (tenant_id, day, link_id) DO UPDATE SET count = count + excluded.count;
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER click_rollup_links_insert AFTER INSERT ON click_rollup BEGIN
    UPDATE links SET rollup_clicks = rollup_clicks + new.count WHERE id = new.link_id;
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER click_rollup_links_update AFTER UPDATE OF count ON click_rollup BEGIN
    UPDATE links SET rollup_clicks = rollup_clicks + new.count - old.count WHERE id = new.link_id;
END;
-- +goose StatementEnd
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
