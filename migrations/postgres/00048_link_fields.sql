-- A link's notes, archive flag and start date (docs/api.md, "Links"):
-- notes are searched by q with the slug, url and title, so the trigram
-- index's expression (searchText in store/postgres/list.go) takes them;
-- archived links are left out of the default listing and of top links;
-- before valid_since a link answers 404.

-- +goose Up
ALTER TABLE links ADD COLUMN notes TEXT NOT NULL DEFAULT '',
    ADD COLUMN archived BOOLEAN NOT NULL DEFAULT false,
    ADD COLUMN valid_since TIMESTAMPTZ;
DROP INDEX IF EXISTS links_search;
-- +goose StatementBegin
DO $$
BEGIN
    CREATE INDEX links_search ON links USING gin ((slug || E'\n' || url || E'\n' || title || E'\n' || notes) gin_trgm_ops);
EXCEPTION WHEN OTHERS THEN
    RAISE NOTICE 'pg_trgm unavailable (%): link search scans instead of using a trigram index', SQLERRM;
END;
$$;
-- +goose StatementEnd

-- +goose Down
DROP INDEX IF EXISTS links_search;
ALTER TABLE links DROP COLUMN notes, DROP COLUMN archived, DROP COLUMN valid_since;
-- +goose StatementBegin
DO $$
BEGIN
    CREATE INDEX links_search ON links USING gin ((slug || E'\n' || url || E'\n' || title) gin_trgm_ops);
EXCEPTION WHEN OTHERS THEN
    RAISE NOTICE 'pg_trgm unavailable (%): link search scans instead of using a trigram index', SQLERRM;
END;
$$;
-- +goose StatementEnd
