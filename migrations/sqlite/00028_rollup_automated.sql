-- A minute row carries its automated part (docs/adr/009-click-dimensions.md):
-- the minute series splits by traffic from click_rollup itself, as the
-- hourly aggregates already do (00022), rather than from the traffic_minute
-- dimension rows, which the flush no longer writes (linkforge.Dimension.Stored).
-- Existing rows take it from those rows. A Down writes them back from the
-- column (the growth also into the aggregates the flush keeps, 00025)
-- before dropping it, so the release before reads the same split. Like
-- count, it only grows (the flush's max rule), and it is at most count.
-- +goose Up
ALTER TABLE click_rollup ADD COLUMN automated INTEGER NOT NULL DEFAULT 0 CHECK (automated >= 0);
UPDATE click_rollup SET automated = min(count, (
    SELECT d.count FROM click_dims d
    WHERE d.link_id = click_rollup.link_id AND d.node_id = click_rollup.node_id
    AND d.hour = click_rollup.bucket / 3600 * 3600 AND d.dimension = 'traffic_minute'
    AND d.value = printf('%02d', click_rollup.bucket % 3600 / 60)))
WHERE EXISTS (
    SELECT 1 FROM click_dims d
    WHERE d.link_id = click_rollup.link_id AND d.node_id = click_rollup.node_id
    AND d.hour = click_rollup.bucket / 3600 * 3600 AND d.dimension = 'traffic_minute'
    AND d.value = printf('%02d', click_rollup.bucket % 3600 / 60));

-- +goose Down
CREATE TEMP TABLE minute_automated AS
SELECT r.link_id, r.bucket / 3600 * 3600 AS hour, printf('%02d', r.bucket % 3600 / 60) AS value, r.node_id,
    r.automated AS count, r.automated - COALESCE(d.count, 0) AS delta
FROM click_rollup r LEFT JOIN click_dims d ON d.link_id = r.link_id AND d.node_id = r.node_id
    AND d.hour = r.bucket / 3600 * 3600 AND d.dimension = 'traffic_minute'
    AND d.value = printf('%02d', r.bucket % 3600 / 60)
WHERE r.automated > COALESCE(d.count, 0);
INSERT INTO click_dims (link_id, hour, dimension, value, node_id, count)
SELECT link_id, hour, 'traffic_minute', value, node_id, count FROM minute_automated WHERE true
ON CONFLICT (link_id, hour, dimension, value, node_id) DO UPDATE SET count = excluded.count;
INSERT INTO tenant_dims_hourly (tenant_id, dimension, hour, value, count)
SELECT l.tenant_id, 'traffic_minute', m.hour, m.value, SUM(m.delta) FROM minute_automated m JOIN links l ON l.id = m.link_id
WHERE true GROUP BY l.tenant_id, m.hour, m.value
ON CONFLICT (tenant_id, dimension, hour, value) DO UPDATE SET count = count + excluded.count;
INSERT INTO link_dims_daily (link_id, dimension, day, value, count)
SELECT m.link_id, 'traffic_minute', m.hour / 86400 * 86400, m.value, SUM(m.delta) FROM minute_automated m JOIN links l ON l.id = m.link_id
WHERE true GROUP BY m.link_id, m.hour / 86400, m.value
ON CONFLICT (link_id, dimension, day, value) DO UPDATE SET count = count + excluded.count;
INSERT INTO tenant_dims_daily (tenant_id, dimension, day, value, count)
SELECT l.tenant_id, 'traffic_minute', m.hour / 86400 * 86400, m.value, SUM(m.delta) FROM minute_automated m JOIN links l ON l.id = m.link_id
WHERE true GROUP BY l.tenant_id, m.hour / 86400, m.value
ON CONFLICT (tenant_id, dimension, day, value) DO UPDATE SET count = count + excluded.count;
DROP TABLE minute_automated;
ALTER TABLE click_rollup DROP COLUMN automated;
