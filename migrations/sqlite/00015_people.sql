-- People: tokens get a role in their tenant; users, who belong to tenants
-- with a role each, sign in with a password set through a one-time ticket
-- (an invite or a reset), and hold server-side sessions. Tokens made
-- before roles could do everything in their tenant: they are owners, so
-- that no deployment loses access by upgrading.

-- +goose Up
ALTER TABLE tokens ADD COLUMN role TEXT NOT NULL DEFAULT 'owner'
    CHECK (role IN ('owner', 'editor', 'viewer'));

CREATE TABLE users (
    id              INTEGER PRIMARY KEY,
    email           TEXT    NOT NULL UNIQUE, -- lowercased
    password_hash   TEXT    NOT NULL DEFAULT '', -- argon2id PHC string; empty until an invite is used
    created_at      INTEGER NOT NULL,
    last_sign_in_at INTEGER
);

CREATE TABLE memberships (
    user_id    INTEGER NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    tenant_id  INTEGER NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
    role       TEXT    NOT NULL CHECK (role IN ('owner', 'editor', 'viewer')),
    created_at INTEGER NOT NULL,
    PRIMARY KEY (user_id, tenant_id)
);
-- a tenant's members
CREATE INDEX memberships_tenant ON memberships (tenant_id, user_id);

-- One-time tickets: an invite or a password reset, by the hash of the
-- secret in its URL.
CREATE TABLE user_tickets (
    hash       BLOB    PRIMARY KEY,
    user_id    INTEGER NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    kind       TEXT    NOT NULL CHECK (kind IN ('invite', 'reset')),
    created_at INTEGER NOT NULL,
    expires_at INTEGER NOT NULL,
    used_at    INTEGER
);

CREATE TABLE sessions (
    id           INTEGER PRIMARY KEY,
    hash         BLOB    NOT NULL UNIQUE, -- sha256 of the cookie's secret
    user_id      INTEGER NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    csrf_token   TEXT    NOT NULL,
    user_agent   TEXT    NOT NULL DEFAULT '',
    created_at   INTEGER NOT NULL,
    last_seen_at INTEGER NOT NULL,
    ended_at     INTEGER
);
-- a user's sessions (sign out everywhere)
CREATE INDEX sessions_user ON sessions (user_id, id);

-- +goose Down
DROP TABLE sessions;
DROP TABLE user_tickets;
DROP TABLE memberships;
DROP TABLE users;
ALTER TABLE tokens DROP COLUMN role;
