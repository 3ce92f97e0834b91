-- Webhooks and their deliveries (docs/adr/015-webhooks.md), on PostgreSQL.
-- A delivery is a durable outbox row written in the transaction of the
-- change that caused it; nodes claim due deliveries with SELECT ... FOR
-- UPDATE SKIP LOCKED under a lease, as the alarms (00002).

-- +goose Up
CREATE TABLE webhooks (
    id         TEXT        PRIMARY KEY, -- wh_ + random
    tenant_id  BIGINT      NOT NULL REFERENCES tenants (id),
    url        TEXT        NOT NULL,
    events     TEXT[]      NOT NULL, -- subscribed event types
    -- the signing secret, sealed (webhook.Sealer) or plain: see ADR 015
    secret     TEXT        NOT NULL,
    created_at TIMESTAMPTZ NOT NULL
);
CREATE INDEX webhooks_tenant ON webhooks (tenant_id, created_at);

CREATE TABLE webhook_deliveries (
    id               BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    -- deleting a webhook cancels its deliveries with it
    webhook_id       TEXT        NOT NULL REFERENCES webhooks (id) ON DELETE CASCADE,
    tenant_id        BIGINT      NOT NULL,
    event_id         TEXT        NOT NULL, -- evt_..., the webhook-id header
    event_type       TEXT        NOT NULL,
    -- set for events sent once per subject (link.limit_reached)
    event_key        TEXT,
    body             TEXT        NOT NULL, -- the exact bytes POSTed and signed
    state            TEXT        NOT NULL DEFAULT 'pending'
                     CHECK (state IN ('pending', 'retrying', 'delivered', 'dead')),
    attempts         INTEGER     NOT NULL DEFAULT 0 CHECK (attempts >= 0),
    last_status      INTEGER     NOT NULL DEFAULT 0,
    last_error       TEXT        NOT NULL DEFAULT '',
    next_attempt_at  TIMESTAMPTZ NOT NULL,
    -- a claim: set while a node attempts it (state stays pending/retrying)
    lease_owner      TEXT,
    lease_expires_at TIMESTAMPTZ,
    lease_seq        BIGINT      NOT NULL DEFAULT 0, -- fencing token, never reset
    created_at       TIMESTAMPTZ NOT NULL,
    updated_at       TIMESTAMPTZ NOT NULL,
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
