-- The audit log: one row per write made by a user, a token or the CLI,
-- inserted in the transaction of the write itself, so that a committed
-- change always has its event and a rolled-back one never does. Newest
-- first per tenant is the only read (GET /api/v1/audit), by id.

-- +goose Up
CREATE TABLE audit_events (
    id         INTEGER PRIMARY KEY,
    tenant_id  INTEGER NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
    at         INTEGER NOT NULL, -- unix microseconds
    actor_type TEXT    NOT NULL CHECK (actor_type IN ('user', 'token', 'cli')),
    actor_id   INTEGER,          -- the user's or token's id; NULL for the CLI
    actor_name TEXT    NOT NULL DEFAULT '',
    action     TEXT    NOT NULL,
    target     TEXT    NOT NULL DEFAULT ''
);
CREATE INDEX audit_events_tenant ON audit_events (tenant_id, id);

-- +goose Down
DROP TABLE audit_events;
