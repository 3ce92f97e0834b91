-- The click's source dimension (docs/adr/009-click-dimensions.md): every
-- click counted before it came by its link, so each traffic row (one per
-- link, hour, traffic and node; and each aggregate's, including the hours
-- and days whose raw rows retention removed) gets a source row of value
-- "link" with its count. Every dimension then sums to the clicks, and
-- the journal's replay of older frames (which gives their traffic cells'
-- counts to "link") lines up with the stored rows. Down drops the source
-- rows: QR scans are counted as clicks, no longer apart.
-- +goose Up
INSERT INTO click_dims (link_id, hour, node_id, dimension, automated, value, count)
SELECT link_id, hour, node_id, 'source', automated, 'link', SUM(count) FROM click_dims
WHERE dimension = 'traffic' GROUP BY link_id, hour, node_id, automated;
INSERT INTO tenant_dims_hourly (tenant_id, hour, dimension, automated, value, count)
SELECT tenant_id, hour, 'source', automated, 'link', SUM(count) FROM tenant_dims_hourly
WHERE dimension = 'traffic' GROUP BY tenant_id, hour, automated;
INSERT INTO link_dims_daily (link_id, day, dimension, automated, value, count)
SELECT link_id, day, 'source', automated, 'link', SUM(count) FROM link_dims_daily
WHERE dimension = 'traffic' GROUP BY link_id, day, automated;
INSERT INTO tenant_dims_daily (tenant_id, day, dimension, automated, value, count)
SELECT tenant_id, day, 'source', automated, 'link', SUM(count) FROM tenant_dims_daily
WHERE dimension = 'traffic' GROUP BY tenant_id, day, automated;

-- +goose Down
DELETE FROM click_dims WHERE dimension = 'source';
DELETE FROM tenant_dims_hourly WHERE dimension = 'source';
DELETE FROM link_dims_daily WHERE dimension = 'source';
DELETE FROM tenant_dims_daily WHERE dimension = 'source';
