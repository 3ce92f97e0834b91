-- Routing fields of a link (schemas Rules, Variants and OG) and the
-- day keys of the visitor hash (docs/adr/024-visitor-hash.md).
-- redirect_status and forward_query are columns of their own, so that the
-- schema constrains them; rules, variants and og are one JSON document in
-- routing ('' when none is set), read whole by the redirect cache and never
-- searched.

-- +goose Up
ALTER TABLE links ADD COLUMN redirect_status INTEGER NOT NULL DEFAULT 302
    CHECK (redirect_status IN (301, 302, 307, 308));
ALTER TABLE links ADD COLUMN forward_query INTEGER NOT NULL DEFAULT 0 CHECK (forward_query IN (0, 1));
ALTER TABLE links ADD COLUMN routing TEXT NOT NULL DEFAULT '';

-- One row per UTC day whose visitors may still be hashed: the first node
-- to need a day's key inserts it, the others read it; it is deleted once
-- the day is over.
CREATE TABLE visitor_keys (
    day INTEGER PRIMARY KEY, -- unix seconds of the UTC midnight
    key BLOB NOT NULL CHECK (length(key) = 32)
);

-- +goose Down
DROP TABLE visitor_keys;
ALTER TABLE links DROP COLUMN routing;
ALTER TABLE links DROP COLUMN forward_query;
ALTER TABLE links DROP COLUMN redirect_status;
