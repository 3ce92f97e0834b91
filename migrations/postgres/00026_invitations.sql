-- Invitations of existing users (docs/adr/023-sessions.md):
-- a tenant's owner who invites an email that has an account already gets
-- no credential for it; the membership waits here until that user accepts
-- it while signed in, or declines it. A new email still gets a user, a
-- membership and a one-time URL at once (00015).

-- +goose Up
CREATE TABLE invitations (
    tenant_id  BIGINT      NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
    user_id    BIGINT      NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    role       TEXT        NOT NULL CHECK (role IN ('owner', 'editor', 'viewer')),
    created_at TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (tenant_id, user_id)
);
-- a user's pending invitations (GET /api/v1/me)
CREATE INDEX invitations_user ON invitations (user_id);

-- +goose Down
DROP TABLE invitations;
