-- Daily unique visitors (schema Stats, unique): one HyperLogLog sketch
-- per (link, UTC day, node) of that day's keyed visitor hashes
-- (docs/adr/024-visitor-hash.md). A node overwrites its own row with its
-- whole sketch of the day, as its rollup counts are absolute; the stats
-- read merges the nodes' sketches (a union). day is the unix second of the
-- UTC midnight.

-- +goose Up
CREATE TABLE click_uniques (
    link_id INTEGER NOT NULL,
    day     INTEGER NOT NULL,
    node_id TEXT    NOT NULL,
    sketch  BLOB    NOT NULL,
    PRIMARY KEY (link_id, day, node_id)
) WITHOUT ROWID;

-- +goose Down
DROP TABLE click_uniques;
