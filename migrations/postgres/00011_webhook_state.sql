-- A webhook's state (docs/adr/015-webhooks.md): a receiver answering 410
-- Gone disables its webhook; the API enables it again.

-- +goose Up
ALTER TABLE webhooks ADD COLUMN state TEXT NOT NULL DEFAULT 'active' CHECK (state IN ('active', 'disabled'));

-- +goose Down
ALTER TABLE webhooks DROP COLUMN state;
