-- A link's notes, archive flag and start date (docs/api.md, "Links"):
-- notes are searched by q with the slug, url and title, so the search
-- index is rebuilt with them; archived links are left out of the default
-- listing and of top links; before valid_since a link answers 404.

-- +goose Up
ALTER TABLE links ADD COLUMN notes TEXT NOT NULL DEFAULT '';
ALTER TABLE links ADD COLUMN archived INTEGER NOT NULL DEFAULT 0;
ALTER TABLE links ADD COLUMN valid_since INTEGER;
DROP TRIGGER links_search_insert;
DROP TRIGGER links_search_delete;
DROP TRIGGER links_search_update;
DROP TABLE links_search;
CREATE VIRTUAL TABLE links_search USING fts5(slug, url, title, notes, content='links', content_rowid='id', tokenize='trigram');
INSERT INTO links_search (links_search) VALUES ('rebuild');
-- +goose StatementBegin
CREATE TRIGGER links_search_insert AFTER INSERT ON links BEGIN
    INSERT INTO links_search (rowid, slug, url, title, notes) VALUES (new.id, new.slug, new.url, new.title, new.notes);
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER links_search_delete AFTER DELETE ON links BEGIN
    INSERT INTO links_search (links_search, rowid, slug, url, title, notes) VALUES ('delete', old.id, old.slug, old.url, old.title, old.notes);
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER links_search_update AFTER UPDATE OF slug, url, title, notes ON links BEGIN
    INSERT INTO links_search (links_search, rowid, slug, url, title, notes) VALUES ('delete', old.id, old.slug, old.url, old.title, old.notes);
    INSERT INTO links_search (rowid, slug, url, title, notes) VALUES (new.id, new.slug, new.url, new.title, new.notes);
END;
-- +goose StatementEnd

-- +goose Down
DROP TRIGGER links_search_insert;
DROP TRIGGER links_search_delete;
DROP TRIGGER links_search_update;
DROP TABLE links_search;
ALTER TABLE links DROP COLUMN notes;
ALTER TABLE links DROP COLUMN archived;
ALTER TABLE links DROP COLUMN valid_since;
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
