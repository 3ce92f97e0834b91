-- The audit log: one row per write made by a user, a token or the CLI,
-- inserted in the transaction of the write itself, so that a committed
-- change always has its event and a rolled-back one never does. Newest
-- first per tenant is the only read (GET /api/v1/audit), by id.

-- +goose Up
CREATE TABLE audit_events (
    id         BIGINT      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    tenant_id  BIGINT      NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
    at         TIMESTAMPTZ NOT NULL,
    actor_type TEXT        NOT NULL CHECK (actor_type IN ('user', 'token', 'cli')),
    actor_id   BIGINT,     -- the user's or token's id; NULL for the CLI
    actor_name TEXT        NOT NULL DEFAULT '',
    action     TEXT        NOT NULL,
    target     TEXT        NOT NULL DEFAULT ''
);
CREATE INDEX audit_events_tenant ON audit_events (tenant_id, id);

-- +goose Down
DROP TABLE audit_events;
