-- The operator, the role above tenants (docs/operations.md, "The
-- operator"): its tokens, its users (users.operator), its audit log; a
-- tenant it suspended (tenants.suspended_at); a link's states: disabled
-- by its tenant (links.disabled), blocked by the operator with a reason
-- (links.blocked_reason, NULL: not blocked). A later state (unsafe) gets a
-- column of its own. audit_events admits the operator token as an actor.

-- +goose Up
ALTER TABLE links ADD COLUMN disabled BOOLEAN NOT NULL DEFAULT false;
ALTER TABLE links ADD COLUMN blocked_reason TEXT;
-- the operator's list of blocked links
CREATE INDEX links_blocked ON links (id) WHERE blocked_reason IS NOT NULL;
ALTER TABLE tenants ADD COLUMN suspended_at TIMESTAMPTZ;
ALTER TABLE users ADD COLUMN operator BOOLEAN NOT NULL DEFAULT false;

CREATE TABLE operator_tokens (
    id         BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    name       TEXT        NOT NULL DEFAULT '',
    hash       BYTEA       NOT NULL UNIQUE, -- sha256 of the token
    display    TEXT        NOT NULL,
    created_at TIMESTAMPTZ NOT NULL,
    revoked_at TIMESTAMPTZ
);

-- The operator's log: tenant_name names the tenant an action concerned
-- (a name, not a key: the log outlives the tenant).
CREATE TABLE operator_audit (
    id          BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    at          TIMESTAMPTZ NOT NULL,
    actor_type  TEXT        NOT NULL,
    actor_id    BIGINT,
    actor_name  TEXT        NOT NULL DEFAULT '',
    action      TEXT        NOT NULL,
    target      TEXT        NOT NULL DEFAULT '',
    tenant_name TEXT        NOT NULL DEFAULT ''
);

ALTER TABLE audit_events DROP CONSTRAINT audit_events_actor_type_check;
ALTER TABLE audit_events ADD CONSTRAINT audit_events_actor_type_check
    CHECK (actor_type IN ('user', 'token', 'cli', 'operator'));

-- +goose Down
-- An operator token's events become the token events they were not
-- (no id: none of the tenant's), named so that they stay readable.
UPDATE audit_events SET actor_type = 'token', actor_id = NULL, actor_name = 'operator: ' || actor_name
    WHERE actor_type = 'operator';
ALTER TABLE audit_events DROP CONSTRAINT audit_events_actor_type_check;
ALTER TABLE audit_events ADD CONSTRAINT audit_events_actor_type_check
    CHECK (actor_type IN ('user', 'token', 'cli'));
DROP TABLE operator_audit;
DROP TABLE operator_tokens;
ALTER TABLE users DROP COLUMN operator;
ALTER TABLE tenants DROP COLUMN suspended_at;
DROP INDEX links_blocked;
ALTER TABLE links DROP COLUMN blocked_reason;
ALTER TABLE links DROP COLUMN disabled;
