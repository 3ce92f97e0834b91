-- Durable per-link expiry alarms (docs/adr/003-alarms.md), on PostgreSQL.
-- Several nodes claim due alarms with SELECT ... FOR UPDATE SKIP LOCKED and
-- hold them with a lease (lease_owner, lease_expires_at).

-- +goose Up
CREATE TABLE link_alarms (
    -- identity values are never reused: ids are shown by the admin API and
    -- replayed by id.
    id               BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    -- At most one alarm per link, deleted with it in the same transaction.
    link_id          BIGINT      NOT NULL UNIQUE REFERENCES links (id) ON DELETE CASCADE,
    tenant_id        BIGINT      NOT NULL REFERENCES tenants (id),
    due_at           TIMESTAMPTZ NOT NULL,
    state            TEXT        NOT NULL DEFAULT 'scheduled'
                     CHECK (state IN ('scheduled', 'running', 'retrying', 'dead', 'done')),
    -- runs started since the alarm was last scheduled
    attempt          INTEGER     NOT NULL DEFAULT 0 CHECK (attempt >= 0),
    -- every failed attempt: [{"attempt":1,"at":"RFC 3339","error":"..."}]
    errors           JSONB       NOT NULL DEFAULT '[]' CHECK (jsonb_typeof(errors) = 'array'),
    lease_owner      TEXT,
    lease_expires_at TIMESTAMPTZ,
    -- numbers the claims; never reset (fencing token, with lease_owner)
    lease_seq        BIGINT      NOT NULL DEFAULT 0,
    created_at       TIMESTAMPTZ NOT NULL,
    updated_at       TIMESTAMPTZ NOT NULL,
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
       now(), now()
FROM links WHERE expires_at IS NOT NULL;

-- +goose Down
DROP TABLE link_alarms;
