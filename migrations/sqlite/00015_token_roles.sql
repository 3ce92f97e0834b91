-- Tokens get a role in their tenant. Tokens made before roles could do
-- everything in their tenant: they are owners, so that no deployment loses
-- access by upgrading.

-- +goose Up
ALTER TABLE tokens ADD COLUMN role TEXT NOT NULL DEFAULT 'owner'
    CHECK (role IN ('owner', 'editor', 'viewer'));

-- +goose Down
ALTER TABLE tokens DROP COLUMN role;
