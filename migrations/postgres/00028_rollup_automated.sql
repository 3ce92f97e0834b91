-- A minute row carries its automated part (docs/adr/009-click-dimensions.md):
-- the minute series splits by traffic from click_rollup itself, as the
-- hourly aggregates already do (00022), rather than from the traffic_minute
-- dimension rows, which the flush no longer writes (linkforge.Dimension.Stored).
-- Existing rows take it from those rows. A Down writes them back from the
-- column (click_dims' statement triggers carry them into the aggregates)
-- before dropping it, so the release before reads the same split. Like
-- count, it only grows (the flush's GREATEST rule), and it is at most
-- count. Added to the partitioned parent, it reaches every
-- partition; the UPDATE leaves count alone, so the statement triggers on
-- count (00024) add nothing.
-- +goose Up
ALTER TABLE click_rollup ADD COLUMN automated BIGINT NOT NULL DEFAULT 0 CHECK (automated >= 0);
UPDATE click_rollup r SET automated = LEAST(r.count, d.count)
FROM click_dims d
WHERE d.link_id = r.link_id AND d.node_id = r.node_id
AND d.hour = date_trunc('hour', r.bucket, 'UTC') AND d.dimension = 'traffic_minute'
AND d.value = to_char(r.bucket AT TIME ZONE 'UTC', 'MI');

-- +goose Down
INSERT INTO click_dims (link_id, hour, dimension, value, node_id, count)
SELECT r.link_id, date_trunc('hour', r.bucket, 'UTC'), 'traffic_minute', to_char(r.bucket AT TIME ZONE 'UTC', 'MI'), r.node_id, r.automated
FROM click_rollup r WHERE r.automated > 0
ON CONFLICT (link_id, hour, dimension, value, node_id) DO UPDATE SET count = excluded.count
WHERE click_dims.count < excluded.count;
ALTER TABLE click_rollup DROP COLUMN automated;
