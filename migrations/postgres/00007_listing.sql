-- Listing, search and tags (docs/adr/012-listing-and-bulk.md), on
-- PostgreSQL: every order of GET /api/v1/links is an index range, so a page
-- costs the same on the first or the ten-thousandth page of a million links.

-- +goose Up

-- Tags are stored normalized from now on (trimmed, lower-cased:
-- linkforge.NormalizeTag); earlier links get the same treatment, keeping
-- the first of tags that become equal. lower() folds as the database's
-- locale does (ASCII only under the C locale).
UPDATE links SET tags = ARRAY(
    SELECT t FROM (
        SELECT lower(btrim(x)) AS t, min(i) AS i FROM unnest(links.tags) WITH ORDINALITY AS u (x, i) GROUP BY 1
    ) s ORDER BY i
)
WHERE EXISTS (SELECT 1 FROM unnest(links.tags) AS x WHERE x <> lower(btrim(x)));


-- The flushed click total of each link, kept by the trigger below in the
-- transaction of the rollup write, so that sort=clicks and state=expired
-- read a column (and an index) instead of summing rollups per link. The
-- link's total (Link.Clicks) is rollup_clicks + imported_clicks.
ALTER TABLE links ADD COLUMN rollup_clicks BIGINT NOT NULL DEFAULT 0;
UPDATE links l SET rollup_clicks = s.total
FROM (SELECT link_id, SUM(count)::bigint AS total FROM click_rollup GROUP BY link_id) s
WHERE s.link_id = l.id;

-- A flush may write rows of a link deleted meanwhile: the UPDATE then
-- matches nothing, as it should. A flush sorts its rows by link id
-- (UpsertRollup), so two flushes lock link rows in one order.
-- +goose StatementBegin
CREATE FUNCTION links_rollup_clicks() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        UPDATE links SET rollup_clicks = rollup_clicks + NEW.count WHERE id = NEW.link_id;
    ELSIF TG_OP = 'UPDATE' THEN
        IF NEW.count <> OLD.count THEN
            UPDATE links SET rollup_clicks = rollup_clicks + NEW.count - OLD.count WHERE id = NEW.link_id;
        END IF;
    ELSE
        UPDATE links SET rollup_clicks = rollup_clicks - OLD.count WHERE id = OLD.link_id;
    END IF;
    RETURN NULL;
END;
$$;
-- +goose StatementEnd
CREATE TRIGGER click_rollup_links_clicks AFTER INSERT OR UPDATE OF count OR DELETE ON click_rollup
    FOR EACH ROW EXECUTE FUNCTION links_rollup_clicks();

-- sort=-created / created (created_at is not id order: imports keep their
-- links' creation dates)
CREATE INDEX links_tenant_created ON links (tenant_id, created_at, id);
-- sort=-clicks / clicks
CREATE INDEX links_tenant_clicks ON links (tenant_id, (rollup_clicks + imported_clicks), id);
-- sort=slug, in byte order whatever the database's collation, as on SQLite
CREATE INDEX links_tenant_slug ON links (tenant_id, slug COLLATE "C");
-- tag=: links carrying every tag (tags @> ARRAY[...])
CREATE INDEX links_tags ON links USING gin (tags);

-- q: a trigram index (pg_trgm) of slug, url and title, so that a search of
-- three characters or more reads the matching links, not all of them. The
-- expression must be the one the store's query uses (searchText in
-- store/postgres/list.go). pg_trgm ships in PostgreSQL's contrib (part of
-- Debian's postgresql package) and is a trusted extension: a database owner
-- may create it. Where it cannot be created, search still works, by
-- scanning the tenant's links; the notice says so.
-- +goose StatementBegin
DO $$
BEGIN
    CREATE EXTENSION IF NOT EXISTS pg_trgm;
    CREATE INDEX links_search ON links USING gin ((slug || E'\n' || url || E'\n' || title) gin_trgm_ops);
EXCEPTION WHEN OTHERS THEN
    RAISE NOTICE 'pg_trgm unavailable (%): link search scans instead of using a trigram index', SQLERRM;
END;
$$;
-- +goose StatementEnd

-- GET /api/v1/tags: the number of links per (tenant, tag), kept by the
-- triggers below in the transaction of the link write, so that the answer
-- reads a few rows rather than every link's tags (a second for a million
-- links). Each trigger changes the rows of one statement's tags in one
-- INSERT ... ON CONFLICT, in (tenant, tag) order: two statements lock
-- shared tags in the same order and cannot deadlock each other. A tag's
-- row stays, at 0, when its last link goes.
CREATE TABLE link_tag_counts (
    tenant_id BIGINT NOT NULL,
    tag       TEXT   NOT NULL,
    links     BIGINT NOT NULL,
    PRIMARY KEY (tenant_id, tag)
);
INSERT INTO link_tag_counts (tenant_id, tag, links)
SELECT l.tenant_id, t, count(*) FROM links l, unnest(l.tags) AS t GROUP BY 1, 2;

-- +goose StatementBegin
CREATE FUNCTION links_tag_counts_insert() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO link_tag_counts (tenant_id, tag, links)
    SELECT n.tenant_id, t, count(*) FROM new_links n, unnest(n.tags) AS t GROUP BY 1, 2 ORDER BY 1, 2
    ON CONFLICT (tenant_id, tag) DO UPDATE SET links = link_tag_counts.links + excluded.links;
    RETURN NULL;
END;
$$;
-- +goose StatementEnd
CREATE TRIGGER links_tag_counts_insert AFTER INSERT ON links REFERENCING NEW TABLE AS new_links
    FOR EACH STATEMENT EXECUTE FUNCTION links_tag_counts_insert();

-- +goose StatementBegin
CREATE FUNCTION links_tag_counts_delete() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO link_tag_counts (tenant_id, tag, links)
    SELECT o.tenant_id, t, -count(*) FROM old_links o, unnest(o.tags) AS t GROUP BY 1, 2 ORDER BY 1, 2
    ON CONFLICT (tenant_id, tag) DO UPDATE SET links = link_tag_counts.links + excluded.links;
    RETURN NULL;
END;
$$;
-- +goose StatementEnd
CREATE TRIGGER links_tag_counts_delete AFTER DELETE ON links REFERENCING OLD TABLE AS old_links
    FOR EACH STATEMENT EXECUTE FUNCTION links_tag_counts_delete();

-- An update changes one link (UpdateLink): a row trigger, only when the
-- tags changed (not on the click totals' updates).
-- +goose StatementBegin
CREATE FUNCTION links_tag_counts_update() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO link_tag_counts (tenant_id, tag, links)
    SELECT NEW.tenant_id, tag, sum(d) FROM (
        SELECT t AS tag, 1 AS d FROM unnest(NEW.tags) AS t
        UNION ALL
        SELECT t, -1 FROM unnest(OLD.tags) AS t
    ) x GROUP BY tag HAVING sum(d) <> 0 ORDER BY tag
    ON CONFLICT (tenant_id, tag) DO UPDATE SET links = link_tag_counts.links + excluded.links;
    RETURN NULL;
END;
$$;
-- +goose StatementEnd
CREATE TRIGGER links_tag_counts_update AFTER UPDATE OF tags ON links
    FOR EACH ROW WHEN (OLD.tags IS DISTINCT FROM NEW.tags) EXECUTE FUNCTION links_tag_counts_update();

-- +goose Down
DROP TRIGGER links_tag_counts_update ON links;
DROP TRIGGER links_tag_counts_delete ON links;
DROP TRIGGER links_tag_counts_insert ON links;
DROP FUNCTION links_tag_counts_update();
DROP FUNCTION links_tag_counts_delete();
DROP FUNCTION links_tag_counts_insert();
DROP TABLE link_tag_counts;
DROP INDEX IF EXISTS links_search;
DROP INDEX links_tags;
DROP INDEX links_tenant_slug;
DROP INDEX links_tenant_clicks;
DROP INDEX links_tenant_created;
DROP TRIGGER click_rollup_links_clicks ON click_rollup;
DROP FUNCTION links_rollup_clicks();
ALTER TABLE links DROP COLUMN rollup_clicks;
