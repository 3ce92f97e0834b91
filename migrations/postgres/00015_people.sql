-- People: tokens get a role in their tenant; users, who belong to tenants
-- with a role each, sign in with a password set through a one-time ticket
-- (an invite or a reset), and hold server-side sessions. Tokens made
-- before roles could do everything in their tenant: they are owners, so
-- that no deployment loses access by upgrading.

-- +goose Up
ALTER TABLE tokens ADD COLUMN role TEXT NOT NULL DEFAULT 'owner'
    CONSTRAINT tokens_role CHECK (role IN ('owner', 'editor', 'viewer'));

CREATE TABLE users (
    id              BIGINT      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    email           TEXT        NOT NULL UNIQUE, -- lowercased
    password_hash   TEXT        NOT NULL DEFAULT '', -- argon2id PHC string; empty until an invite is used
    created_at      TIMESTAMPTZ NOT NULL,
    last_sign_in_at TIMESTAMPTZ
);

CREATE TABLE memberships (
    user_id    BIGINT      NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    tenant_id  BIGINT      NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
    role       TEXT        NOT NULL CHECK (role IN ('owner', 'editor', 'viewer')),
    created_at TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (user_id, tenant_id)
);
-- a tenant's members
CREATE INDEX memberships_tenant ON memberships (tenant_id, user_id);

-- One-time tickets: an invite or a password reset, by the hash of the
-- secret in its URL.
CREATE TABLE user_tickets (
    hash       BYTEA       PRIMARY KEY,
    user_id    BIGINT      NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    kind       TEXT        NOT NULL CHECK (kind IN ('invite', 'reset')),
    created_at TIMESTAMPTZ NOT NULL,
    expires_at TIMESTAMPTZ NOT NULL,
    used_at    TIMESTAMPTZ
);

CREATE TABLE sessions (
    id           BIGINT      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    hash         BYTEA       NOT NULL UNIQUE, -- sha256 of the cookie's secret
    user_id      BIGINT      NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    csrf_token   TEXT        NOT NULL,
    user_agent   TEXT        NOT NULL DEFAULT '',
    created_at   TIMESTAMPTZ NOT NULL,
    last_seen_at TIMESTAMPTZ NOT NULL,
    ended_at     TIMESTAMPTZ
);
-- a user's sessions (sign out everywhere)
CREATE INDEX sessions_user ON sessions (user_id, id);

-- +goose Down
DROP TABLE sessions;
DROP TABLE user_tickets;
DROP TABLE memberships;
DROP TABLE users;
ALTER TABLE tokens DROP COLUMN role;
