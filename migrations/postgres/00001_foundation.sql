-- Foundation schema on PostgreSQL.

-- +goose Up
CREATE TABLE tenants (
    id         BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    name       TEXT        NOT NULL UNIQUE,
    created_at TIMESTAMPTZ NOT NULL DEFAULT now()
);

CREATE TABLE tokens (
    id         BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    tenant_id  BIGINT      NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
    name       TEXT        NOT NULL DEFAULT '',
    hash       BYTEA       NOT NULL UNIQUE, -- sha256 of the token; the token itself is never stored
    display    TEXT        NOT NULL,
    created_at TIMESTAMPTZ NOT NULL DEFAULT now(),
    revoked_at TIMESTAMPTZ
);
-- token list by tenant
CREATE INDEX tokens_tenant_id ON tokens (tenant_id, id);

CREATE TABLE links (
    -- identity values are never reused: rollup rows and node journals are
    -- keyed by id and may outlive a deleted link.
    id           BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    tenant_id    BIGINT      NOT NULL REFERENCES tenants (id),
    slug         TEXT        NOT NULL UNIQUE, -- redirect lookup
    url          TEXT        NOT NULL,
    expires_at   TIMESTAMPTZ,
    expired_at   TIMESTAMPTZ,
    max_clicks   BIGINT CHECK (max_clicks IS NULL OR max_clicks >= 0),
    fallback_url TEXT        NOT NULL DEFAULT '',
    tags         TEXT[]      NOT NULL DEFAULT '{}',
    created_at   TIMESTAMPTZ NOT NULL,
    updated_at   TIMESTAMPTZ NOT NULL
);
-- list a tenant's links newest first, with an id cursor
CREATE INDEX links_tenant_id ON links (tenant_id, id DESC);

-- No foreign key to links: a flush may race a link's delete, and a batch of
-- many links must not fail for one of them.
CREATE TABLE click_rollup (
    link_id BIGINT      NOT NULL,
    bucket  TIMESTAMPTZ NOT NULL,
    node_id TEXT        NOT NULL,
    count   BIGINT      NOT NULL CHECK (count >= 0),
    PRIMARY KEY (link_id, bucket, node_id)
);

-- +goose Down
DROP TABLE click_rollup;
DROP TABLE links;
DROP TABLE tokens;
DROP TABLE tenants;
