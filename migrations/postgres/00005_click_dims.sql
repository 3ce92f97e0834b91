-- Per-hour click counts by dimension (docs/adr/009-click-dimensions.md).
-- Each node writes absolute counts of its own clicks, as in click_rollup:
-- INSERT ... ON CONFLICT DO UPDATE SET count = GREATEST(count, excluded.count),
-- in the same transaction as that flush's click_rollup rows, so that for
-- every link, dimension and hour the values sum to the hour's click_rollup
-- total. dimension is the API name (linkforge.Dimension.String()): readable
-- in SQL, stable if the Go enum is reordered, and only a few bytes.
-- No foreign key to links, for the same reasons as click_rollup.

-- +goose Up
CREATE TABLE click_dims (
    link_id   BIGINT      NOT NULL,
    hour      TIMESTAMPTZ NOT NULL,
    dimension TEXT        NOT NULL,
    value     TEXT        NOT NULL,
    node_id   TEXT        NOT NULL,
    count     BIGINT      NOT NULL CHECK (count >= 0),
    PRIMARY KEY (link_id, hour, dimension, value, node_id)
);
-- A fresh journal seeds itself from its node's recent hours
-- (WHERE node_id = $1 AND hour >= $2), as click_rollup_bucket serves the
-- minute rows.
CREATE INDEX click_dims_hour ON click_dims (hour);

-- +goose Down
DROP TABLE click_dims;
