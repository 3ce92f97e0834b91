-- The link fields of Round 2 (schema Link in web/openapi.json;
-- docs/adr/011-link-fields.md). Device URLs are three plain columns rather
-- than one JSONB value: there are exactly three keys, both backends store
-- them the same way, and no query ever needs to look inside them.
-- Adding a column with a constant default rewrites no rows (PostgreSQL 11+).

-- +goose Up
ALTER TABLE links
    ADD COLUMN title           TEXT   NOT NULL DEFAULT '',
    -- PHC string of the password's argon2id hash; '' when not protected.
    ADD COLUMN password_hash   TEXT   NOT NULL DEFAULT '',
    ADD COLUMN device_ios      TEXT   NOT NULL DEFAULT '',
    ADD COLUMN device_android  TEXT   NOT NULL DEFAULT '',
    ADD COLUMN device_desktop  TEXT   NOT NULL DEFAULT '',
    -- Clicks counted by another shortener before an import: part of the
    -- link's clicks total, never invented as rollup buckets.
    ADD COLUMN imported_clicks BIGINT NOT NULL DEFAULT 0 CHECK (imported_clicks >= 0);

-- +goose Down
ALTER TABLE links
    DROP COLUMN imported_clicks,
    DROP COLUMN device_desktop,
    DROP COLUMN device_android,
    DROP COLUMN device_ios,
    DROP COLUMN password_hash,
    DROP COLUMN title;
