-- Retention (docs/adr/027-retention.md): a daily job removes minute rollup
-- rows and hourly dimension rows past their bounds, and the daily
-- aggregates and every total stay as they were.
--
-- So the aggregates are kept on insert and update only: deleting a raw row
-- (click_rollup, click_dims) no longer lowers anything. A link's delete
-- lowers the tenant aggregates from the link's own aggregates (link_hourly,
-- link_dims_daily), which retention leaves alone, and then removes every
-- row of the link itself (the cascade). tenant_dims_hourly is lowered from
-- click_dims, as before: retention removes both below the same bound.
--
-- click_rollup_pruned keeps, per link and node, the clicks of the minute
-- rows retention removed, so that the per-node totals that max_clicks and
-- the flush rely on (ClickTotal, NodeClickTotal, ReserveClicks) still add
-- up to every click.

-- +goose Up
CREATE TABLE click_rollup_pruned (
    link_id INTEGER NOT NULL,
    node_id TEXT    NOT NULL,
    count   INTEGER NOT NULL CHECK (count >= 0),
    PRIMARY KEY (link_id, node_id)
) WITHOUT ROWID;

-- Daily jobs run on one node at a time: a job is claimed under a lease,
-- as alarms are.
CREATE TABLE scheduled_jobs (
    name        TEXT    PRIMARY KEY,
    due_at      INTEGER NOT NULL,
    lease_owner TEXT,
    lease_until INTEGER
) WITHOUT ROWID;

-- The pruning reads of deliveries and audit events past their bound.
CREATE INDEX webhook_deliveries_delivered ON webhook_deliveries (updated_at)
    WHERE state = 'delivered' AND event_key IS NULL;
CREATE INDEX audit_events_at ON audit_events (at);

DROP TRIGGER click_rollup_agg_delete;
DROP TRIGGER click_rollup_links_delete;
DROP TRIGGER click_dims_agg_delete;
DROP TRIGGER click_dims_agg_daily_delete;
DROP TRIGGER links_agg_daily_delete;
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

-- +goose Down
-- The clicks in click_rollup_pruned go with it: after a retention run,
-- a link's ClickTotal on the older schema counts only its remaining rows.
DROP TRIGGER links_agg_delete;
-- +goose StatementBegin
CREATE TRIGGER links_agg_delete AFTER DELETE ON links
BEGIN
    INSERT INTO tenant_hourly (tenant_id, hour, count)
    SELECT OLD.tenant_id, bucket / 3600 * 3600 AS h, -SUM(count) FROM click_rollup
    WHERE link_id = OLD.id GROUP BY h
    ON CONFLICT (tenant_id, hour) DO UPDATE SET count = count + excluded.count;
    DELETE FROM link_hourly WHERE tenant_id = OLD.tenant_id AND link_id = OLD.id
        AND hour IN (SELECT DISTINCT bucket / 3600 * 3600 FROM click_rollup WHERE link_id = OLD.id);
    DELETE FROM link_daily WHERE tenant_id = OLD.tenant_id AND link_id = OLD.id
        AND day IN (SELECT DISTINCT bucket / 86400 * 86400 FROM click_rollup WHERE link_id = OLD.id);
    INSERT INTO tenant_dims_hourly (tenant_id, dimension, hour, value, count)
    SELECT OLD.tenant_id, dimension, hour, value, -SUM(count) FROM click_dims
    WHERE link_id = OLD.id GROUP BY dimension, hour, value
    ON CONFLICT (tenant_id, dimension, hour, value) DO UPDATE SET count = count + excluded.count;
    DELETE FROM link_dims_daily WHERE link_id = OLD.id;
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER links_agg_daily_delete AFTER DELETE ON links
BEGIN
    INSERT INTO tenant_dims_daily (tenant_id, dimension, day, value, count)
    SELECT OLD.tenant_id, dimension, hour / 86400 * 86400 AS d, value, -SUM(count) FROM click_dims
    WHERE link_id = OLD.id GROUP BY dimension, d, value
    ON CONFLICT (tenant_id, dimension, day, value) DO UPDATE SET count = count + excluded.count;
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER click_dims_agg_daily_delete AFTER DELETE ON click_dims
WHEN OLD.count <> 0
BEGIN
    INSERT INTO tenant_dims_daily (tenant_id, dimension, day, value, count)
    SELECT tenant_id, OLD.dimension, OLD.hour / 86400 * 86400, OLD.value, -OLD.count FROM links WHERE id = OLD.link_id
    ON CONFLICT (tenant_id, dimension, day, value) DO UPDATE SET count = count + excluded.count;
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER click_dims_agg_delete AFTER DELETE ON click_dims
WHEN OLD.count <> 0
BEGIN
    INSERT INTO tenant_dims_hourly (tenant_id, dimension, hour, value, count)
    SELECT tenant_id, OLD.dimension, OLD.hour, OLD.value, -OLD.count FROM links WHERE id = OLD.link_id
    ON CONFLICT (tenant_id, dimension, hour, value) DO UPDATE SET count = count + excluded.count;
    INSERT INTO link_dims_daily (link_id, dimension, day, value, count)
    SELECT id, OLD.dimension, OLD.hour / 86400 * 86400, OLD.value, -OLD.count FROM links WHERE id = OLD.link_id
    ON CONFLICT (link_id, dimension, day, value) DO UPDATE SET count = count + excluded.count;
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER click_rollup_links_delete AFTER DELETE ON click_rollup BEGIN
    UPDATE links SET rollup_clicks = rollup_clicks - old.count WHERE id = old.link_id;
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER click_rollup_agg_delete AFTER DELETE ON click_rollup
WHEN OLD.count <> 0
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
END;
-- +goose StatementEnd
DROP INDEX audit_events_at;
DROP INDEX webhook_deliveries_delivered;
DROP TABLE scheduled_jobs;
DROP TABLE click_rollup_pruned;
