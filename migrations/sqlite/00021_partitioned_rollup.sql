-- PostgreSQL partitions click_rollup and click_dims by month in this
-- version (migrations/postgres/00021_partitioned_rollup.sql); SQLite has
-- no declarative partitioning and keeps its tables. The file keeps both
-- dialects at one schema version.

-- +goose Up
SELECT 1;

-- +goose Down
SELECT 1;
