-- A journal that starts a fresh count for a node id seeds itself from that
-- node's recent rollup rows (docs/adr/014-click-log.md, "A fresh journal
-- continues from the rollup"): SELECT ... WHERE node_id = ? AND bucket >= ?.
-- The primary key (link_id, bucket, node_id) cannot serve it; this index
-- reads the last few minutes of rows instead of the whole table.

-- +goose Up
CREATE INDEX click_rollup_bucket ON click_rollup (bucket);

-- +goose Down
DROP INDEX click_rollup_bucket;
