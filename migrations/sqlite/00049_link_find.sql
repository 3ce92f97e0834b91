-- POST /api/v1/links with find_if_exists: the tenant's links of one URL on
-- one domain, read by links_tenant_url. The URL's first 64 characters keep
-- it small; the query compares the whole URL after (store/sqlite/find.go).
--
-- A renamed link's old slugs (link_aliases) keep redirecting to it, so
-- that printed links never break: a new link may not take one (the
-- trigger skips its insert, which the stores answer as a taken slug).

-- +goose Up
CREATE INDEX links_tenant_url ON links (tenant_id, domain_id, substr(url, 1, 64));
CREATE TABLE link_aliases (
    domain_id  INTEGER NOT NULL,
    slug       TEXT    NOT NULL,
    link_id    INTEGER NOT NULL REFERENCES links (id) ON DELETE CASCADE,
    created_at INTEGER NOT NULL,
    PRIMARY KEY (domain_id, slug)
) WITHOUT ROWID;
CREATE INDEX link_aliases_link ON link_aliases (link_id);
-- +goose StatementBegin
CREATE TRIGGER links_alias_taken BEFORE INSERT ON links
WHEN EXISTS (SELECT 1 FROM link_aliases WHERE domain_id = new.domain_id AND slug = new.slug)
BEGIN
    SELECT RAISE(IGNORE);
END;
-- +goose StatementEnd

-- +goose Down
DROP TRIGGER links_alias_taken;
DROP TABLE link_aliases;
DROP INDEX links_tenant_url;
