-- Foundation schema on embedded SQLite.
-- Times are INTEGER unix microseconds (UTC), matching PostgreSQL's timestamptz
-- precision so both backends return the same values; rollup buckets are unix
-- seconds of the minute start.

-- +goose Up
CREATE TABLE tenants (
    id         INTEGER PRIMARY KEY,
    name       TEXT    NOT NULL UNIQUE,
    created_at INTEGER NOT NULL
);

CREATE TABLE tokens (
    id         INTEGER PRIMARY KEY,
    tenant_id  INTEGER NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
    name       TEXT    NOT NULL DEFAULT '',
    hash       BLOB    NOT NULL UNIQUE, -- sha256 of the token; the token itself is never stored
    display    TEXT    NOT NULL,
    created_at INTEGER NOT NULL,
    revoked_at INTEGER
);
-- token list by tenant
CREATE INDEX tokens_tenant_id ON tokens (tenant_id, id);

CREATE TABLE links (
    -- AUTOINCREMENT: an id is never reused, because rollup rows and node
    -- journals are keyed by it and may outlive a deleted link.
    id           INTEGER PRIMARY KEY AUTOINCREMENT,
    tenant_id    INTEGER NOT NULL REFERENCES tenants (id),
    slug         TEXT    NOT NULL UNIQUE, -- redirect lookup
    url          TEXT    NOT NULL,
    expires_at   INTEGER,
    expired_at   INTEGER,
    max_clicks   INTEGER CHECK (max_clicks IS NULL OR max_clicks >= 0),
    fallback_url TEXT    NOT NULL DEFAULT '',
    tags         TEXT    NOT NULL DEFAULT '[]', -- JSON array of strings
    created_at   INTEGER NOT NULL,
    updated_at   INTEGER NOT NULL
);
-- list a tenant's links newest first, with an id cursor
CREATE INDEX links_tenant_id ON links (tenant_id, id DESC);

-- No foreign key to links: a flush may race a link's delete, and a batch of
-- many links must not fail for one of them.
CREATE TABLE click_rollup (
    link_id INTEGER NOT NULL,
    bucket  INTEGER NOT NULL,
    node_id TEXT    NOT NULL,
    count   INTEGER NOT NULL CHECK (count >= 0),
    PRIMARY KEY (link_id, bucket, node_id)
) WITHOUT ROWID;

-- +goose Down
DROP TABLE click_rollup;
DROP TABLE links;
DROP TABLE tokens;
DROP TABLE tenants;
