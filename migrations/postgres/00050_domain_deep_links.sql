-- A domain's app-link documents (docs/domains.md, "Deep links"): the
-- JSON served at /.well-known/apple-app-site-association and
-- /.well-known/assetlinks.json on its host, as the owner gave it. Empty:
-- unset (404). The API bounds each to 64 KiB.
-- +goose Up
ALTER TABLE domains ADD COLUMN apple_app_site_association TEXT NOT NULL DEFAULT '';
ALTER TABLE domains ADD COLUMN asset_links TEXT NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE domains DROP COLUMN asset_links;
ALTER TABLE domains DROP COLUMN apple_app_site_association;
