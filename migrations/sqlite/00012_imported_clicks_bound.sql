-- Imported click counts are at most 10^15 (linkforge.MaxImportedClicks):
-- an import of an older version took any int64, and a link at 2^63-1
-- overflowed rollup_clicks + imported_clicks with its first flushed click,
-- failing every read of it. Such counts are capped; the link writes
-- refuse larger ones from now on.

-- +goose Up
UPDATE links SET imported_clicks = 1000000000000000 WHERE imported_clicks > 1000000000000000;

-- +goose Down
SELECT 1;
