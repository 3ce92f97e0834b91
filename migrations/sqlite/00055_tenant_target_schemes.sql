-- A tenant's allowlist of extra target schemes (docs/routing.md, "Other
-- schemes"): space-separated lowercase schemes its links may point at
-- besides http and https (mailto tel myapp); '': none. The API bounds it
-- to 20 schemes of 32 bytes.
-- +goose Up
ALTER TABLE tenants ADD COLUMN target_schemes TEXT NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE tenants DROP COLUMN target_schemes;
