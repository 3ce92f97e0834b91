-- SQLite's 00025 moves the click_dims aggregates from row triggers into
-- the flush (store/sqlite/dims.go, docs/performance.md).
-- PostgreSQL's triggers on click_dims already run once per statement over
-- its transition tables (00006) and sum by aggregate key there, which is
-- what SQLite's flush now does in Go; they stay. A version for both
-- dialects, so that one schema version means one release (migrations.Latest).
-- +goose Up
SELECT 1;

-- +goose Down
SELECT 1;
