-- Retention (docs/adr/027-retention.md): a daily job removes minute rollup
-- rows and hourly dimension rows past their bounds, and the daily
-- aggregates and every total stay as they were.
--
-- So the aggregates are kept on insert and update only: deleting a raw row
-- (click_rollup, click_dims) no longer lowers anything, and neither does it
-- lower links.rollup_clicks. A link's delete lowers the tenant aggregates
-- from the link's own aggregates (link_hourly, link_dims_daily), which
-- retention leaves alone, and then removes every row of the link itself
-- (the cascade). tenant_dims_hourly is lowered from click_dims, as before:
-- retention removes both below the same bound. Same advisory lock as 00006.
--
-- click_rollup_pruned keeps, per link and node, the clicks of the minute
-- rows retention removed, so that the per-node totals that max_clicks and
-- the flush rely on (ClickTotal, NodeClickTotal, ReserveClicks) still add
-- up to every click.

-- +goose Up
CREATE TABLE click_rollup_pruned (
    link_id BIGINT NOT NULL,
    node_id TEXT   NOT NULL,
    count   BIGINT NOT NULL CHECK (count >= 0),
    PRIMARY KEY (link_id, node_id)
);

-- Daily jobs run on one node at a time: a job is claimed under a lease,
-- as alarms are.
CREATE TABLE scheduled_jobs (
    name        TEXT        PRIMARY KEY,
    due_at      TIMESTAMPTZ NOT NULL,
    lease_owner TEXT,
    lease_until TIMESTAMPTZ
);

-- The pruning reads of deliveries and audit events past their bound.
CREATE INDEX webhook_deliveries_delivered ON webhook_deliveries (updated_at)
    WHERE state = 'delivered' AND event_key IS NULL;
CREATE INDEX audit_events_at ON audit_events (at);

DROP TRIGGER click_rollup_agg_delete ON click_rollup;
DROP TRIGGER click_dims_agg_delete ON click_dims;
DROP TRIGGER click_rollup_links_clicks ON click_rollup;
CREATE TRIGGER click_rollup_links_clicks AFTER INSERT OR UPDATE OF count ON click_rollup
    FOR EACH ROW EXECUTE FUNCTION links_rollup_clicks();

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

-- +goose Down
-- The clicks in click_rollup_pruned go with it: after a retention run,
-- a link's ClickTotal on the older schema counts only its remaining rows.
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
DROP TRIGGER click_rollup_links_clicks ON click_rollup;
CREATE TRIGGER click_rollup_links_clicks AFTER INSERT OR UPDATE OF count OR DELETE ON click_rollup
    FOR EACH ROW EXECUTE FUNCTION links_rollup_clicks();
CREATE TRIGGER click_dims_agg_delete AFTER DELETE ON click_dims
    REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION linkforge_dims_agg();
CREATE TRIGGER click_rollup_agg_delete AFTER DELETE ON click_rollup
    REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION linkforge_rollup_agg();
DROP INDEX audit_events_at;
DROP INDEX webhook_deliveries_delivered;
DROP TABLE scheduled_jobs;
DROP TABLE click_rollup_pruned;
