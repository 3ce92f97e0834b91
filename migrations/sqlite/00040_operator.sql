-- The operator, the role above tenants (docs/operations.md, "The
-- operator"): its tokens, its users (users.operator), its audit log; a
-- tenant it suspended (tenants.suspended_at); a link's states: disabled
-- by its tenant (links.disabled), blocked by the operator with a reason
-- (links.blocked_reason, NULL: not blocked). A later state (unsafe) gets a
-- column of its own. audit_events admits the operator token as an actor:
-- SQLite changes a CHECK only by copying the table.

-- +goose Up
ALTER TABLE links ADD COLUMN disabled INTEGER NOT NULL DEFAULT 0 CHECK (disabled IN (0, 1));
ALTER TABLE links ADD COLUMN blocked_reason TEXT;
-- the operator's list of blocked links
CREATE INDEX links_blocked ON links (id) WHERE blocked_reason IS NOT NULL;
ALTER TABLE tenants ADD COLUMN suspended_at INTEGER;
ALTER TABLE users ADD COLUMN operator INTEGER NOT NULL DEFAULT 0 CHECK (operator IN (0, 1));

CREATE TABLE operator_tokens (
    id         INTEGER PRIMARY KEY,
    name       TEXT    NOT NULL DEFAULT '',
    hash       BLOB    NOT NULL UNIQUE, -- sha256 of the token
    display    TEXT    NOT NULL,
    created_at INTEGER NOT NULL,
    revoked_at INTEGER
);

-- The operator's log: tenant_name names the tenant an action concerned
-- (a name, not a key: the log outlives the tenant).
CREATE TABLE operator_audit (
    id          INTEGER PRIMARY KEY,
    at          INTEGER NOT NULL,
    actor_type  TEXT    NOT NULL,
    actor_id    INTEGER,
    actor_name  TEXT    NOT NULL DEFAULT '',
    action      TEXT    NOT NULL,
    target      TEXT    NOT NULL DEFAULT '',
    tenant_name TEXT    NOT NULL DEFAULT ''
);

CREATE TABLE audit_events_new (
    id         INTEGER PRIMARY KEY,
    tenant_id  INTEGER NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
    at         INTEGER NOT NULL,
    actor_type TEXT    NOT NULL CHECK (actor_type IN ('user', 'token', 'cli', 'operator')),
    actor_id   INTEGER,
    actor_name TEXT    NOT NULL DEFAULT '',
    action     TEXT    NOT NULL,
    target     TEXT    NOT NULL DEFAULT ''
);
INSERT INTO audit_events_new SELECT id, tenant_id, at, actor_type, actor_id, actor_name, action, target FROM audit_events;
DROP TABLE audit_events;
ALTER TABLE audit_events_new RENAME TO audit_events;
CREATE INDEX audit_events_tenant ON audit_events (tenant_id, id);
CREATE INDEX audit_events_at ON audit_events (at);

-- +goose Down
-- An operator token's events become the token events they were not
-- (no id: none of the tenant's), named so that they stay readable.
CREATE TABLE audit_events_old (
    id         INTEGER PRIMARY KEY,
    tenant_id  INTEGER NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
    at         INTEGER NOT NULL,
    actor_type TEXT    NOT NULL CHECK (actor_type IN ('user', 'token', 'cli')),
    actor_id   INTEGER,
    actor_name TEXT    NOT NULL DEFAULT '',
    action     TEXT    NOT NULL,
    target     TEXT    NOT NULL DEFAULT ''
);
INSERT INTO audit_events_old
    SELECT id, tenant_id, at,
        CASE actor_type WHEN 'operator' THEN 'token' ELSE actor_type END,
        CASE actor_type WHEN 'operator' THEN NULL ELSE actor_id END,
        CASE actor_type WHEN 'operator' THEN 'operator: ' || actor_name ELSE actor_name END,
        action, target
    FROM audit_events;
DROP TABLE audit_events;
ALTER TABLE audit_events_old RENAME TO audit_events;
CREATE INDEX audit_events_tenant ON audit_events (tenant_id, id);
CREATE INDEX audit_events_at ON audit_events (at);

DROP TABLE operator_audit;
DROP TABLE operator_tokens;
ALTER TABLE users DROP COLUMN operator;
ALTER TABLE tenants DROP COLUMN suspended_at;
DROP INDEX links_blocked;
ALTER TABLE links DROP COLUMN blocked_reason;
ALTER TABLE links DROP COLUMN disabled;
