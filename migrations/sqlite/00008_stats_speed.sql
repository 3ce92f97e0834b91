-- Faster analytics over long ranges (issue 11's performance leftover,
-- docs/adr/010-analytics-queries.md). Times are INTEGER unix
-- seconds of the day start (UTC), as in 00006.
--
-- Same invariant as 00006: each aggregate row is the sum of the raw rows
-- (here click_dims) of the links that exist, in its key, kept by triggers
-- in the transaction of the write that changes the raw rows.

-- +goose Up
-- GET /api/v1/stats/{dimension}: whole UTC days from tenant_dims_daily,
-- the hours at the ends of a range from tenant_dims_hourly, so that 30 days
-- of a 100-value dimension read about 5,000 rows instead of 72,000.
CREATE TABLE tenant_dims_daily (
    tenant_id INTEGER NOT NULL,
    dimension TEXT    NOT NULL,
    day       INTEGER NOT NULL,
    value     TEXT    NOT NULL,
    count     INTEGER NOT NULL,
    PRIMARY KEY (tenant_id, dimension, day, value)
) WITHOUT ROWID;

-- GET /api/v1/stats/links ranks the links by their all-time clicks
-- (links_tenant_clicks, 00007: an upper bound of their clicks in any range)
-- and reads the range's exact clicks of the first candidates only, one
-- link at a time: these two indexes serve that read. count is not in them,
-- so a flush's count updates leave them alone; only a new (link, hour) or
-- (link, day) row adds an entry.
CREATE INDEX link_daily_link ON link_daily (link_id, day);
CREATE INDEX link_hourly_link ON link_hourly (link_id, hour);

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
CREATE TRIGGER click_dims_agg_daily_delete AFTER DELETE ON click_dims
WHEN OLD.count <> 0
BEGIN
    INSERT INTO tenant_dims_daily (tenant_id, dimension, day, value, count)
    SELECT tenant_id, OLD.dimension, OLD.hour / 86400 * 86400, OLD.value, -OLD.count FROM links WHERE id = OLD.link_id
    ON CONFLICT (tenant_id, dimension, day, value) DO UPDATE SET count = count + excluded.count;
END;
-- +goose StatementEnd

-- The flush's max() upsert changes count only (and not at all for a stale
-- replay: the WHEN skips it); any other UPDATE moves the row's old count
-- out and its new count in.
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

-- A deleted link's remaining dimension rows leave the daily aggregate, as
-- links_agg_delete (00006) does for the others.
-- +goose StatementBegin
CREATE TRIGGER links_agg_daily_delete AFTER DELETE ON links
BEGIN
    INSERT INTO tenant_dims_daily (tenant_id, dimension, day, value, count)
    SELECT OLD.tenant_id, dimension, hour / 86400 * 86400 AS d, value, -SUM(count) FROM click_dims
    WHERE link_id = OLD.id GROUP BY dimension, d, value
    ON CONFLICT (tenant_id, dimension, day, value) DO UPDATE SET count = count + excluded.count;
END;
-- +goose StatementEnd

-- What the hourly aggregate holds already (equal, by the invariant, to the
-- raw rows of the existing links, and a tenth of their size).
INSERT INTO tenant_dims_daily (tenant_id, dimension, day, value, count)
SELECT tenant_id, dimension, hour / 86400 * 86400 AS d, value, SUM(count)
FROM tenant_dims_hourly WHERE true GROUP BY tenant_id, dimension, d, value;

-- +goose Down
DROP TRIGGER links_agg_daily_delete;
DROP TRIGGER click_dims_agg_daily_update;
DROP TRIGGER click_dims_agg_daily_delete;
DROP TRIGGER click_dims_agg_daily_insert;
DROP INDEX link_hourly_link;
DROP INDEX link_daily_link;
DROP TABLE tenant_dims_daily;
