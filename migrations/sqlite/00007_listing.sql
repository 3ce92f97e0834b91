-- Listing, search and tags (docs/adr/012-listing-and-bulk.md), on embedded
-- SQLite: every order of GET /api/v1/links is an index range, so a page
-- costs the same on the first or the ten-thousandth page of a million links.

-- +goose Up

-- Tags are stored normalized from now on (trimmed, lower-cased:
-- linkforge.NormalizeTag); earlier links get the same treatment, keeping
-- the first of tags that become equal. SQLite's lower() folds ASCII only:
-- a tag stored before this migration with non-ASCII capitals keeps them
-- until the link is next written.
UPDATE links SET tags = (
    SELECT json_group_array(t) FROM (
        SELECT lower(trim(value)) AS t, min(key) AS k FROM json_each(links.tags) GROUP BY lower(trim(value)) ORDER BY k
    )
)
WHERE EXISTS (SELECT 1 FROM json_each(links.tags) WHERE value <> lower(trim(value)));


-- The flushed click total of each link, kept by the triggers below in the
-- transaction of the rollup write, so that sort=clicks and state=expired
-- read a column (and an index) instead of summing rollups per link. The
-- link's total (Link.Clicks) is rollup_clicks + imported_clicks.
ALTER TABLE links ADD COLUMN rollup_clicks INTEGER NOT NULL DEFAULT 0;
UPDATE links SET rollup_clicks = (SELECT COALESCE(SUM(r.count), 0) FROM click_rollup r WHERE r.link_id = links.id);

-- A flush may write rows of a link deleted meanwhile: the UPDATE then
-- matches nothing, as it should.
-- +goose StatementBegin
CREATE TRIGGER click_rollup_links_insert AFTER INSERT ON click_rollup BEGIN
    UPDATE links SET rollup_clicks = rollup_clicks + new.count WHERE id = new.link_id;
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER click_rollup_links_update AFTER UPDATE OF count ON click_rollup BEGIN
    UPDATE links SET rollup_clicks = rollup_clicks + new.count - old.count WHERE id = new.link_id;
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER click_rollup_links_delete AFTER DELETE ON click_rollup BEGIN
    UPDATE links SET rollup_clicks = rollup_clicks - old.count WHERE id = old.link_id;
END;
-- +goose StatementEnd

-- sort=-created / created (created_at is not id order: imports keep their
-- links' creation dates)
CREATE INDEX links_tenant_created ON links (tenant_id, created_at, id);
-- sort=-clicks / clicks
CREATE INDEX links_tenant_clicks ON links (tenant_id, (rollup_clicks + imported_clicks), id);
-- sort=slug (byte order: SQLite's default BINARY collation)
CREATE INDEX links_tenant_slug ON links (tenant_id, slug);

-- q: a trigram full-text index of slug, url and title, so that a search
-- of three characters or more reads the matching links, not all of them.
-- External content: the text stays in links only; the triggers keep the
-- index in step, and fire only when an indexed column changes (not on the
-- click triggers' writes above).
CREATE VIRTUAL TABLE links_search USING fts5(slug, url, title, content='links', content_rowid='id', tokenize='trigram');
INSERT INTO links_search (links_search) VALUES ('rebuild');
-- +goose StatementBegin
CREATE TRIGGER links_search_insert AFTER INSERT ON links BEGIN
    INSERT INTO links_search (rowid, slug, url, title) VALUES (new.id, new.slug, new.url, new.title);
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER links_search_delete AFTER DELETE ON links BEGIN
    INSERT INTO links_search (links_search, rowid, slug, url, title) VALUES ('delete', old.id, old.slug, old.url, old.title);
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER links_search_update AFTER UPDATE OF slug, url, title ON links BEGIN
    INSERT INTO links_search (links_search, rowid, slug, url, title) VALUES ('delete', old.id, old.slug, old.url, old.title);
    INSERT INTO links_search (rowid, slug, url, title) VALUES (new.id, new.slug, new.url, new.title);
END;
-- +goose StatementEnd

-- GET /api/v1/tags: the number of links per (tenant, tag), kept by the
-- triggers below in the transaction of the link write, so that the answer
-- reads a few rows rather than every link's tags (json_each over a million
-- links takes seconds). A tag's row stays at 0 when its last link goes.
CREATE TABLE link_tag_counts (
    tenant_id INTEGER NOT NULL,
    tag       TEXT    NOT NULL,
    links     INTEGER NOT NULL CHECK (links >= 0),
    PRIMARY KEY (tenant_id, tag)
) WITHOUT ROWID;
INSERT INTO link_tag_counts (tenant_id, tag, links)
SELECT l.tenant_id, j.value, count(*) FROM links l, json_each(l.tags) j GROUP BY l.tenant_id, j.value;
-- ("WHERE true": an upsert's SELECT needs a WHERE, or SQLite reads ON as
-- a join's.)
-- +goose StatementBegin
CREATE TRIGGER links_tags_insert AFTER INSERT ON links BEGIN
    INSERT INTO link_tag_counts (tenant_id, tag, links)
    SELECT new.tenant_id, value, 1 FROM json_each(new.tags) WHERE true
    ON CONFLICT (tenant_id, tag) DO UPDATE SET links = links + 1;
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER links_tags_delete AFTER DELETE ON links BEGIN
    UPDATE link_tag_counts SET links = links - 1
    WHERE tenant_id = old.tenant_id AND tag IN (SELECT value FROM json_each(old.tags));
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER links_tags_update AFTER UPDATE OF tags ON links WHEN old.tags <> new.tags BEGIN
    UPDATE link_tag_counts SET links = links - 1
    WHERE tenant_id = old.tenant_id AND tag IN (SELECT value FROM json_each(old.tags));
    INSERT INTO link_tag_counts (tenant_id, tag, links)
    SELECT new.tenant_id, value, 1 FROM json_each(new.tags) WHERE true
    ON CONFLICT (tenant_id, tag) DO UPDATE SET links = links + 1;
END;
-- +goose StatementEnd

-- +goose Down
DROP TRIGGER links_tags_update;
DROP TRIGGER links_tags_delete;
DROP TRIGGER links_tags_insert;
DROP TABLE link_tag_counts;
DROP TRIGGER links_search_update;
DROP TRIGGER links_search_delete;
DROP TRIGGER links_search_insert;
DROP TABLE links_search;
DROP INDEX links_tenant_slug;
DROP INDEX links_tenant_clicks;
DROP INDEX links_tenant_created;
DROP TRIGGER click_rollup_links_delete;
DROP TRIGGER click_rollup_links_update;
DROP TRIGGER click_rollup_links_insert;
ALTER TABLE links DROP COLUMN rollup_clicks;
