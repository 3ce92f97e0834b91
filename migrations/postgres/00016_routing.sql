-- Routing fields of a link (schemas Rules, Variants and OG) and the
-- day keys of the visitor hash (docs/adr/024-visitor-hash.md).
-- redirect_status and forward_query are columns of their own, so that the
-- schema constrains them; rules, variants and og are one JSON document in
-- routing ('' when none is set), read whole by the redirect cache and never
-- searched. Constant defaults rewrite no rows (PostgreSQL 11+).

-- +goose Up
ALTER TABLE links
    ADD COLUMN redirect_status SMALLINT NOT NULL DEFAULT 302
        CHECK (redirect_status IN (301, 302, 307, 308)),
    ADD COLUMN forward_query   BOOLEAN  NOT NULL DEFAULT false,
    ADD COLUMN routing         TEXT     NOT NULL DEFAULT '';

-- One row per UTC day whose visitors may still be hashed: the first node
-- to need a day's key inserts it, the others read it; it is deleted once
-- the day is over.
CREATE TABLE visitor_keys (
    day DATE PRIMARY KEY,
    key BYTEA NOT NULL CHECK (octet_length(key) = 32)
);

-- +goose Down
DROP TABLE visitor_keys;
ALTER TABLE links
    DROP COLUMN routing,
    DROP COLUMN forward_query,
    DROP COLUMN redirect_status;
