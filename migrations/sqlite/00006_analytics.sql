-- Pre-aggregated click counts for the tenant-wide stats and the analytics
-- queries (docs/adr/010-analytics-queries.md). Times are INTEGER unix
-- seconds of the hour or day start (UTC), as click_rollup.bucket.
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

-- +goose Up
-- GET /api/v1/stats?interval=hour|day and its all-time total.
CREATE TABLE tenant_hourly (
    tenant_id INTEGER NOT NULL,
    hour      INTEGER NOT NULL,
    count     INTEGER NOT NULL,
    PRIMARY KEY (tenant_id, hour)
) WITHOUT ROWID;

-- GET /api/v1/stats/links: whole days from link_daily, the hours at the
-- ends of a range from link_hourly, so that 30 days read one row per link
-- and day rather than one per link and minute.
CREATE TABLE link_hourly (
    tenant_id INTEGER NOT NULL,
    hour      INTEGER NOT NULL,
    link_id   INTEGER NOT NULL,
    count     INTEGER NOT NULL,
    PRIMARY KEY (tenant_id, hour, link_id)
) WITHOUT ROWID;
CREATE TABLE link_daily (
    tenant_id INTEGER NOT NULL,
    day       INTEGER NOT NULL,
    link_id   INTEGER NOT NULL,
    count     INTEGER NOT NULL,
    PRIMARY KEY (tenant_id, day, link_id)
) WITHOUT ROWID;

-- GET /api/v1/stats/{dimension}.
CREATE TABLE tenant_dims_hourly (
    tenant_id INTEGER NOT NULL,
    dimension TEXT    NOT NULL,
    hour      INTEGER NOT NULL,
    value     TEXT    NOT NULL,
    count     INTEGER NOT NULL,
    PRIMARY KEY (tenant_id, dimension, hour, value)
) WITHOUT ROWID;

-- GET /api/v1/links/{slug}/stats/{dimension}: whole days from
-- link_dims_daily, the hours at the ends of a range from click_dims through
-- this index (one dimension of one link without reading the other five).
CREATE TABLE link_dims_daily (
    link_id   INTEGER NOT NULL,
    dimension TEXT    NOT NULL,
    day       INTEGER NOT NULL,
    value     TEXT    NOT NULL,
    count     INTEGER NOT NULL,
    PRIMARY KEY (link_id, dimension, day, value)
) WITHOUT ROWID;
CREATE INDEX click_dims_link_dimension ON click_dims (link_id, dimension, hour);

-- The flush's upserts only ever change count; the key-change triggers keep
-- the invariant for any other UPDATE.
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

-- A deleted link's raw rows leave the aggregates, whether DeleteLink
-- deletes them before the link (the triggers above subtract them) or after
-- (then here, and the triggers above find no link).
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

-- What the raw tables hold already.
INSERT INTO tenant_hourly (tenant_id, hour, count)
SELECT l.tenant_id, r.bucket / 3600 * 3600 AS h, SUM(r.count)
FROM click_rollup r JOIN links l ON l.id = r.link_id WHERE true GROUP BY l.tenant_id, h;
INSERT INTO link_hourly (tenant_id, hour, link_id, count)
SELECT l.tenant_id, r.bucket / 3600 * 3600 AS h, r.link_id, SUM(r.count)
FROM click_rollup r JOIN links l ON l.id = r.link_id WHERE true GROUP BY l.tenant_id, h, r.link_id;
INSERT INTO link_daily (tenant_id, day, link_id, count)
SELECT l.tenant_id, r.bucket / 86400 * 86400 AS d, r.link_id, SUM(r.count)
FROM click_rollup r JOIN links l ON l.id = r.link_id WHERE true GROUP BY l.tenant_id, d, r.link_id;
INSERT INTO tenant_dims_hourly (tenant_id, dimension, hour, value, count)
SELECT l.tenant_id, c.dimension, c.hour, c.value, SUM(c.count)
FROM click_dims c JOIN links l ON l.id = c.link_id WHERE true GROUP BY l.tenant_id, c.dimension, c.hour, c.value;
INSERT INTO link_dims_daily (link_id, dimension, day, value, count)
SELECT c.link_id, c.dimension, c.hour / 86400 * 86400 AS d, c.value, SUM(c.count)
FROM click_dims c JOIN links l ON l.id = c.link_id WHERE true GROUP BY c.link_id, c.dimension, d, c.value;

-- +goose Down
DROP TRIGGER links_agg_delete;
DROP TRIGGER click_dims_agg_update;
DROP TRIGGER click_dims_agg_delete;
DROP TRIGGER click_dims_agg_insert;
DROP TRIGGER click_rollup_agg_rekey;
DROP TRIGGER click_rollup_agg_update;
DROP TRIGGER click_rollup_agg_delete;
DROP TRIGGER click_rollup_agg_insert;
DROP INDEX click_dims_link_dimension;
DROP TABLE link_dims_daily;
DROP TABLE tenant_dims_hourly;
DROP TABLE link_daily;
DROP TABLE link_hourly;
DROP TABLE tenant_hourly;
