-- PostgreSQL's 00024 keeps links.rollup_clicks per statement instead of
-- per row, against the row versions its MVCC leaves; SQLite updates a row
-- in place, and its row trigger stays. A version for both dialects, so
-- that one schema version means one release (migrations.Latest).
-- +goose Up
SELECT 1;

-- +goose Down
SELECT 1;
