-- Durable per-link expiry alarms (docs/adr/003-alarms.md), on embedded SQLite.
-- Times are INTEGER unix microseconds UTC, as in 00001. SQLite has one
-- writer, so claiming needs no row locks: one UPDATE ... RETURNING in the
-- writer's immediate transaction is atomic.

-- +goose Up
CREATE TABLE link_alarms (
    -- AUTOINCREMENT: ids are shown by the admin API and replayed by id; a
    -- reused id could replay another link's alarm.
    id               INTEGER PRIMARY KEY AUTOINCREMENT,
    -- At most one alarm per link, deleted with it in the same transaction
    -- (foreign_keys is on for every connection).
    link_id          INTEGER NOT NULL UNIQUE REFERENCES links (id) ON DELETE CASCADE,
    tenant_id        INTEGER NOT NULL REFERENCES tenants (id),
    due_at           INTEGER NOT NULL,
    state            TEXT    NOT NULL DEFAULT 'scheduled'
                     CHECK (state IN ('scheduled', 'running', 'retrying', 'dead', 'done')),
    -- runs started since the alarm was last scheduled
    attempt          INTEGER NOT NULL DEFAULT 0 CHECK (attempt >= 0),
    -- every failed attempt: [{"attempt":1,"at":"RFC 3339","error":"..."}]
    errors           TEXT    NOT NULL DEFAULT '[]' CHECK (json_valid(errors) AND json_type(errors) = 'array'),
    lease_owner      TEXT,
    lease_expires_at INTEGER,
    -- numbers the claims; never reset (fencing token, with lease_owner)
    lease_seq        INTEGER NOT NULL DEFAULT 0,
    created_at       INTEGER NOT NULL,
    updated_at       INTEGER NOT NULL,
    -- a lease exactly while running
    CHECK ((state = 'running' AND lease_owner IS NOT NULL AND lease_expires_at IS NOT NULL)
        OR (state <> 'running' AND lease_owner IS NULL AND lease_expires_at IS NULL))
);
-- the claim and NextAlarmDue: due alarms, earliest first ...
CREATE INDEX link_alarms_due ON link_alarms (due_at) WHERE state IN ('scheduled', 'retrying');
-- ... and running alarms whose lease expired (their node died)
CREATE INDEX link_alarms_lease ON link_alarms (lease_expires_at) WHERE state = 'running';
-- a tenant's alarms by state (GET /api/v1/alarms?state=)
CREATE INDEX link_alarms_tenant_state ON link_alarms (tenant_id, state, due_at);

-- Links that already have an expiry get their alarm: start-up then finds
-- them in stored state, like any other.
INSERT INTO link_alarms (link_id, tenant_id, due_at, state, created_at, updated_at)
SELECT id, tenant_id, expires_at,
       CASE WHEN expired_at IS NOT NULL AND expired_at >= expires_at THEN 'done' ELSE 'scheduled' END,
       CAST(unixepoch('subsec') * 1000000 AS INTEGER), CAST(unixepoch('subsec') * 1000000 AS INTEGER)
FROM links WHERE expires_at IS NOT NULL;

-- +goose Down
DROP TABLE link_alarms;
