-- Shared stats pages (docs/analytics.md, "Shared stats"): a link's or a tag's read-only
-- stats at /share/{token}. Only the token's SHA-256 is kept, so a copy of
-- the database opens no page; prefix, its first characters, names the
-- share in the API. A link's shares go with the link.
-- +goose Up
CREATE TABLE stat_shares (
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    tenant_id     INTEGER NOT NULL REFERENCES tenants (id),
    link_id       INTEGER REFERENCES links (id) ON DELETE CASCADE,
    tag           TEXT    NOT NULL DEFAULT '',
    prefix        TEXT    NOT NULL UNIQUE,
    token_hash    BLOB    NOT NULL UNIQUE,
    password_hash TEXT    NOT NULL DEFAULT '',
    expires_at    INTEGER,
    created_at    INTEGER NOT NULL,
    -- a link's share or a tag's, never both
    CHECK ((link_id IS NULL) = (tag <> ''))
);
CREATE INDEX stat_shares_link ON stat_shares (link_id) WHERE link_id IS NOT NULL;
CREATE INDEX stat_shares_tag ON stat_shares (tenant_id, tag) WHERE tag <> '';

-- +goose Down
DROP TABLE stat_shares;
