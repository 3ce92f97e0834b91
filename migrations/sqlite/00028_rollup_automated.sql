-- A minute row carries its automated part (docs/adr/009-click-dimensions.md):
-- the minute series splits by traffic from click_rollup itself, as the
-- hourly aggregates already do (00022), rather than from the traffic_minute
-- dimension rows. Existing rows take it from those rows, which this
-- release still writes beside it; a Down drops the column and loses
-- nothing. Like count, it only grows (the flush's max rule), and it is at
-- most count.
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
ALTER TABLE click_rollup DROP COLUMN automated;
