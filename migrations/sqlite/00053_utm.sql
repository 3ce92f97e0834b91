-- A link's UTM parameters and the tenant's UTM templates (docs/api.md,
-- "UTM"). Five columns rather than one JSON document: the campaigns
-- report groups by utm_campaign, utm_source and utm_medium in plain SQL
-- on both dialects, and the partial index finds a tenant's campaign links
-- without reading the others. Empty: unset.

-- +goose Up
ALTER TABLE links ADD COLUMN utm_source TEXT NOT NULL DEFAULT '';
ALTER TABLE links ADD COLUMN utm_medium TEXT NOT NULL DEFAULT '';
ALTER TABLE links ADD COLUMN utm_campaign TEXT NOT NULL DEFAULT '';
ALTER TABLE links ADD COLUMN utm_term TEXT NOT NULL DEFAULT '';
ALTER TABLE links ADD COLUMN utm_content TEXT NOT NULL DEFAULT '';
CREATE INDEX links_utm_campaign ON links (tenant_id, utm_campaign) WHERE utm_campaign <> '';
CREATE TABLE utm_templates (
    id           INTEGER PRIMARY KEY,
    tenant_id    INTEGER NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
    name         TEXT    NOT NULL,
    utm_source   TEXT    NOT NULL DEFAULT '',
    utm_medium   TEXT    NOT NULL DEFAULT '',
    utm_campaign TEXT    NOT NULL DEFAULT '',
    utm_term     TEXT    NOT NULL DEFAULT '',
    utm_content  TEXT    NOT NULL DEFAULT '',
    created_at   INTEGER NOT NULL,
    UNIQUE (tenant_id, name)
);

-- +goose Down
DROP TABLE utm_templates;
DROP INDEX links_utm_campaign;
ALTER TABLE links DROP COLUMN utm_content;
ALTER TABLE links DROP COLUMN utm_term;
ALTER TABLE links DROP COLUMN utm_campaign;
ALTER TABLE links DROP COLUMN utm_medium;
ALTER TABLE links DROP COLUMN utm_source;
