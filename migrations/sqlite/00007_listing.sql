-- Listing, search and tags (docs/adr/012-listing-and-bulk.md), on embedded
-- SQLite: every order of GET /api/v1/links is an index range, so a page
-- costs the same on the first or the ten-thousandth page of a million links.

-- +goose Up

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

-- +goose Down
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
