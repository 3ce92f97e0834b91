-- Daily unique visitors (schema Stats, unique): one HyperLogLog sketch
-- per (link, UTC day, node) of that day's keyed visitor hashes
-- (docs/adr/024-visitor-hash.md). A node overwrites its own row with its
-- whole sketch of the day, as its rollup counts are absolute; the stats
-- read merges the nodes' sketches (a union). No foreign key to links, for
-- the same reasons as click_rollup.

-- +goose Up
CREATE TABLE click_uniques (
    link_id BIGINT NOT NULL,
    day     DATE   NOT NULL,
    node_id TEXT   NOT NULL,
    sketch  BYTEA  NOT NULL,
    PRIMARY KEY (link_id, day, node_id)
);

-- +goose Down
DROP TABLE click_uniques;
