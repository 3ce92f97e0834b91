-- Per-hour click counts by dimension (docs/adr/009-click-dimensions.md).
-- hour is INTEGER unix seconds of the hour start, as click_rollup.bucket is
-- of the minute start. Each node writes absolute counts of its own clicks:
-- INSERT ... ON CONFLICT DO UPDATE SET count = max(count, excluded.count), in
-- the same transaction as that flush's click_rollup rows, so that for every
-- link, dimension and hour the values sum to the hour's click_rollup total.
-- dimension is the API name (linkforge.Dimension.String()).
-- No foreign key to links, for the same reasons as click_rollup.

-- +goose Up
CREATE TABLE click_dims (
    link_id   INTEGER NOT NULL,
    hour      INTEGER NOT NULL,
    dimension TEXT    NOT NULL,
    value     TEXT    NOT NULL,
    node_id   TEXT    NOT NULL,
    count     INTEGER NOT NULL CHECK (count >= 0),
    PRIMARY KEY (link_id, hour, dimension, value, node_id)
) WITHOUT ROWID;
-- A fresh journal seeds itself from its node's recent hours
-- (WHERE node_id = ? AND hour >= ?), as click_rollup_bucket serves the
-- minute rows.
CREATE INDEX click_dims_hour ON click_dims (hour);

-- +goose Down
DROP TABLE click_dims;
