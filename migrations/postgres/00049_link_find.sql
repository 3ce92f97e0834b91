-- POST /api/v1/links with find_if_exists: the tenant's links of one URL on
-- one domain, read by links_tenant_url. The URL's first 64 characters keep
-- it small (and under a btree entry's limit); the query compares the whole
-- URL after (store/postgres/find.go).
--
-- A renamed link's old slugs (link_aliases) keep redirecting to it, so
-- that printed links never break: a new link may not take one (the
-- trigger skips its insert, which the stores answer as a taken slug).

-- +goose Up
CREATE INDEX links_tenant_url ON links (tenant_id, domain_id, left(url, 64));
CREATE TABLE link_aliases (
    domain_id  BIGINT      NOT NULL,
    slug       TEXT        NOT NULL,
    link_id    BIGINT      NOT NULL REFERENCES links (id) ON DELETE CASCADE,
    created_at TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (domain_id, slug)
);
CREATE INDEX link_aliases_link ON link_aliases (link_id);
-- +goose StatementBegin
CREATE FUNCTION links_alias_taken() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF EXISTS (SELECT 1 FROM link_aliases WHERE domain_id = NEW.domain_id AND slug = NEW.slug) THEN
        RETURN NULL;
    END IF;
    RETURN NEW;
END;
$$;
-- +goose StatementEnd
CREATE TRIGGER links_alias_taken BEFORE INSERT ON links
    FOR EACH ROW EXECUTE FUNCTION links_alias_taken();

-- +goose Down
DROP TRIGGER links_alias_taken ON links;
DROP FUNCTION links_alias_taken();
DROP TABLE link_aliases;
DROP INDEX links_tenant_url;
