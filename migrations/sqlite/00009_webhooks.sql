-- Webhooks and their deliveries (docs/adr/015-webhooks.md), on embedded
-- SQLite. A delivery is a durable outbox row written in the transaction of
-- the change that caused it, claimed under a lease like an alarm (00002).
-- Times are INTEGER unix microseconds UTC.

-- +goose Up
CREATE TABLE webhooks (
    id         TEXT    PRIMARY KEY, -- wh_ + random
    tenant_id  INTEGER NOT NULL REFERENCES tenants (id),
    url        TEXT    NOT NULL,
    -- subscribed event types: ["link.created", ...]
    events     TEXT    NOT NULL CHECK (json_valid(events) AND json_type(events) = 'array'),
    -- the signing secret, sealed (webhook.Sealer) or plain: see ADR 015
    secret     TEXT    NOT NULL,
    created_at INTEGER NOT NULL
);
CREATE INDEX webhooks_tenant ON webhooks (tenant_id, created_at);

CREATE TABLE webhook_deliveries (
    -- AUTOINCREMENT: ids are replayed by the API; a reused id could replay
    -- another delivery.
    id               INTEGER PRIMARY KEY AUTOINCREMENT,
    -- deleting a webhook cancels its deliveries with it
    webhook_id       TEXT    NOT NULL REFERENCES webhooks (id) ON DELETE CASCADE,
    tenant_id        INTEGER NOT NULL,
    event_id         TEXT    NOT NULL, -- evt_..., the webhook-id header
    event_type       TEXT    NOT NULL,
    -- set for events sent once per subject (link.limit_reached)
    event_key        TEXT,
    body             TEXT    NOT NULL, -- the exact bytes POSTed and signed
    state            TEXT    NOT NULL DEFAULT 'pending'
                     CHECK (state IN ('pending', 'retrying', 'delivered', 'dead')),
    attempts         INTEGER NOT NULL DEFAULT 0 CHECK (attempts >= 0),
    last_status      INTEGER NOT NULL DEFAULT 0,
    last_error       TEXT    NOT NULL DEFAULT '',
    next_attempt_at  INTEGER NOT NULL,
    -- a claim: set while a node attempts it (state stays pending/retrying)
    lease_owner      TEXT,
    lease_expires_at INTEGER,
    lease_seq        INTEGER NOT NULL DEFAULT 0, -- fencing token, never reset
    created_at       INTEGER NOT NULL,
    updated_at       INTEGER NOT NULL,
    CHECK ((lease_owner IS NULL) = (lease_expires_at IS NULL)),
    CHECK (lease_owner IS NULL OR state IN ('pending', 'retrying'))
);
-- the claim and NextDeliveryDue: unclaimed due deliveries, earliest first ...
CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_at)
    WHERE state IN ('pending', 'retrying') AND lease_owner IS NULL;
-- ... and claims whose lease expired (their node died mid-delivery)
CREATE INDEX webhook_deliveries_lease ON webhook_deliveries (lease_expires_at)
    WHERE lease_owner IS NOT NULL;
-- a webhook's delivery log (GET /api/v1/webhooks/{id}/deliveries?state=)
CREATE INDEX webhook_deliveries_webhook ON webhook_deliveries (webhook_id, state, id);
-- link.limit_reached once per link and webhook
CREATE UNIQUE INDEX webhook_deliveries_key ON webhook_deliveries (webhook_id, event_key)
    WHERE event_key IS NOT NULL;

-- +goose Down
DROP TABLE webhook_deliveries;
DROP TABLE webhooks;
