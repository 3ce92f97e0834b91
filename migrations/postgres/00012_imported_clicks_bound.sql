-- Imported click counts are at most 10^15 (linkforge.MaxImportedClicks):
-- an import of an older version took any bigint, and a link at 2^63-1
-- overflowed the index over rollup_clicks + imported_clicks with its first
-- flushed click, so that its flush failed forever. Such counts are capped,
-- and a CHECK keeps every later one within the bound.

-- +goose Up
UPDATE links SET imported_clicks = 1000000000000000 WHERE imported_clicks > 1000000000000000;
ALTER TABLE links ADD CONSTRAINT links_imported_clicks_bound CHECK (imported_clicks <= 1000000000000000);

-- +goose Down
ALTER TABLE links DROP CONSTRAINT links_imported_clicks_bound;
