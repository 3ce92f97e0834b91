-- Domains: a tenant's own hosts (go.acme.com), and the domain of each link.
--
-- SQLite cannot drop the column constraint UNIQUE (slug), so links is
-- rebuilt with UNIQUE (domain_id, slug) instead, as SQLite's documentation
-- describes (create, copy, drop, rename), inside goose's transaction:
--   - foreign_keys is on (for the server's connections; a tool's may have
--     it off) and cannot change inside a transaction, so dropping links
--     would cascade to link_alarms and click_grants: their rows are kept
--     in temporary tables, deleted, and put back after the rename;
--   - legacy_alter_table lets the rename through although triggers of
--     other tables (click_rollup's) name links while it is missing;
--   - the AUTOINCREMENT counter is carried over, so that ids of deleted
--     links are never reused;
--   - the indexes and triggers of links go with the old table and are
--     created again, as migrations 00001 to 00012 left them.

-- +goose Up
CREATE TABLE domains (
    id              INTEGER PRIMARY KEY AUTOINCREMENT,
    tenant_id       INTEGER NOT NULL REFERENCES tenants (id),
    host            TEXT    NOT NULL UNIQUE, -- across tenants; the redirect lookup
    state           TEXT    NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'verified')),
    is_default      INTEGER NOT NULL DEFAULT 0 CHECK (is_default IN (0, 1)),
    root_url        TEXT    NOT NULL DEFAULT '', -- empty: --root-url
    not_found_url   TEXT    NOT NULL DEFAULT '', -- empty: --not-found-url
    created_at      INTEGER NOT NULL,
    verified_at     INTEGER,
    -- verification attempts of a pending domain, retried with the alarm
    -- backoff; verify_due_at is the next one (NULL: none planned)
    verify_attempts INTEGER NOT NULL DEFAULT 0 CHECK (verify_attempts >= 0),
    verify_due_at   INTEGER,
    verify_error    TEXT    NOT NULL DEFAULT '',
    -- what this deployment answers at the domain's verification URL: a
    -- random secret, the same on every node since it is read from here
    verify_token    TEXT    NOT NULL DEFAULT ''
);
-- at most one default domain per tenant
CREATE UNIQUE INDEX domains_tenant_default ON domains (tenant_id) WHERE is_default = 1;
CREATE INDEX domains_tenant ON domains (tenant_id, host);
CREATE INDEX domains_verify_due ON domains (verify_due_at) WHERE state = 'pending';

PRAGMA legacy_alter_table = ON;
CREATE TEMP TABLE keep_alarms AS SELECT * FROM link_alarms;
CREATE TEMP TABLE keep_grants AS SELECT * FROM click_grants;
CREATE TEMP TABLE keep_seq AS SELECT seq FROM sqlite_sequence WHERE name = 'links';
DELETE FROM click_grants;
DELETE FROM link_alarms;
CREATE TABLE links_new (
    id              INTEGER PRIMARY KEY AUTOINCREMENT,
    tenant_id       INTEGER NOT NULL REFERENCES tenants (id),
    slug            TEXT    NOT NULL,
    url             TEXT    NOT NULL,
    expires_at      INTEGER,
    expired_at      INTEGER,
    max_clicks      INTEGER CHECK (max_clicks IS NULL OR max_clicks >= 0),
    fallback_url    TEXT    NOT NULL DEFAULT '',
    tags            TEXT    NOT NULL DEFAULT '[]',
    created_at      INTEGER NOT NULL,
    updated_at      INTEGER NOT NULL,
    title           TEXT    NOT NULL DEFAULT '',
    password_hash   TEXT    NOT NULL DEFAULT '',
    device_ios      TEXT    NOT NULL DEFAULT '',
    device_android  TEXT    NOT NULL DEFAULT '',
    device_desktop  TEXT    NOT NULL DEFAULT '',
    imported_clicks INTEGER NOT NULL DEFAULT 0 CHECK (imported_clicks >= 0),
    rollup_clicks   INTEGER NOT NULL DEFAULT 0,
    -- 0: the public URL's host, where every link made before domains
    -- existed stays; otherwise a row of domains (no foreign key, because 0
    -- is not one: DeleteDomain refuses a domain in use instead).
    domain_id       INTEGER NOT NULL DEFAULT 0,
    -- a slug is unique per domain; on the public host (0) that is across
    -- tenants, as before; the redirect lookup
    UNIQUE (domain_id, slug)
);
INSERT INTO links_new (id, tenant_id, slug, url, expires_at, expired_at, max_clicks, fallback_url, tags, created_at, updated_at, title, password_hash, device_ios, device_android, device_desktop, imported_clicks, rollup_clicks) SELECT id, tenant_id, slug, url, expires_at, expired_at, max_clicks, fallback_url, tags, created_at, updated_at, title, password_hash, device_ios, device_android, device_desktop, imported_clicks, rollup_clicks FROM links;
DROP TABLE links;
ALTER TABLE links_new RENAME TO links;
UPDATE sqlite_sequence SET seq = max(seq, coalesce((SELECT seq FROM keep_seq), 0)) WHERE name = 'links';
INSERT INTO link_alarms SELECT * FROM keep_alarms;
INSERT INTO click_grants SELECT * FROM keep_grants;
DROP TABLE keep_alarms;
DROP TABLE keep_grants;
DROP TABLE keep_seq;
PRAGMA legacy_alter_table = OFF;
CREATE INDEX links_tenant_id ON links (tenant_id, id DESC);
-- +goose StatementBegin
CREATE TRIGGER links_agg_delete AFTER DELETE ON links
BEGIN
    INSERT INTO tenant_hourly (tenant_id, hour, count)
    SELECT OLD.tenant_id, bucket / 3600 * 3600 AS h, -SUM(count) FROM click_rollup
    WHERE link_id = OLD.id GROUP BY h
    ON CONFLICT (tenant_id, hour) DO UPDATE SET count = count + excluded.count;
    DELETE FROM link_hourly WHERE tenant_id = OLD.tenant_id AND link_id = OLD.id
        AND hour IN (SELECT DISTINCT bucket / 3600 * 3600 FROM click_rollup WHERE link_id = OLD.id);
    DELETE FROM link_daily WHERE tenant_id = OLD.tenant_id AND link_id = OLD.id
        AND day IN (SELECT DISTINCT bucket / 86400 * 86400 FROM click_rollup WHERE link_id = OLD.id);
    INSERT INTO tenant_dims_hourly (tenant_id, dimension, hour, value, count)
    SELECT OLD.tenant_id, dimension, hour, value, -SUM(count) FROM click_dims
    WHERE link_id = OLD.id GROUP BY dimension, hour, value
    ON CONFLICT (tenant_id, dimension, hour, value) DO UPDATE SET count = count + excluded.count;
    DELETE FROM link_dims_daily WHERE link_id = OLD.id;
END;
-- +goose StatementEnd
CREATE INDEX links_tenant_created ON links (tenant_id, created_at, id);
CREATE INDEX links_tenant_clicks ON links (tenant_id, (rollup_clicks + imported_clicks), id);
CREATE INDEX links_tenant_slug ON links (tenant_id, slug);
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
-- +goose StatementBegin
CREATE TRIGGER links_agg_daily_delete AFTER DELETE ON links
BEGIN
    INSERT INTO tenant_dims_daily (tenant_id, dimension, day, value, count)
    SELECT OLD.tenant_id, dimension, hour / 86400 * 86400 AS d, value, -SUM(count) FROM click_dims
    WHERE link_id = OLD.id GROUP BY dimension, d, value
    ON CONFLICT (tenant_id, dimension, day, value) DO UPDATE SET count = count + excluded.count;
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER links_quota_insert AFTER INSERT ON links BEGIN
    UPDATE tenants SET link_count = link_count + 1 WHERE id = new.tenant_id;
    SELECT RAISE(ABORT, 'linkforge: quota_exceeded')
    FROM tenants WHERE id = new.tenant_id AND max_links IS NOT NULL AND link_count > max_links;
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER links_quota_delete AFTER DELETE ON links BEGIN
    UPDATE tenants SET link_count = link_count - 1 WHERE id = old.tenant_id;
END;
-- +goose StatementEnd

-- +goose Down
-- Refused (a UNIQUE violation) while two links of different domains share
-- a slug: delete the links of the custom domains first.
PRAGMA legacy_alter_table = ON;
CREATE TEMP TABLE keep_alarms AS SELECT * FROM link_alarms;
CREATE TEMP TABLE keep_grants AS SELECT * FROM click_grants;
CREATE TEMP TABLE keep_seq AS SELECT seq FROM sqlite_sequence WHERE name = 'links';
DELETE FROM click_grants;
DELETE FROM link_alarms;
CREATE TABLE links_new (
    id              INTEGER PRIMARY KEY AUTOINCREMENT,
    tenant_id       INTEGER NOT NULL REFERENCES tenants (id),
    slug            TEXT    NOT NULL UNIQUE,
    url             TEXT    NOT NULL,
    expires_at      INTEGER,
    expired_at      INTEGER,
    max_clicks      INTEGER CHECK (max_clicks IS NULL OR max_clicks >= 0),
    fallback_url    TEXT    NOT NULL DEFAULT '',
    tags            TEXT    NOT NULL DEFAULT '[]',
    created_at      INTEGER NOT NULL,
    updated_at      INTEGER NOT NULL,
    title           TEXT    NOT NULL DEFAULT '',
    password_hash   TEXT    NOT NULL DEFAULT '',
    device_ios      TEXT    NOT NULL DEFAULT '',
    device_android  TEXT    NOT NULL DEFAULT '',
    device_desktop  TEXT    NOT NULL DEFAULT '',
    imported_clicks INTEGER NOT NULL DEFAULT 0 CHECK (imported_clicks >= 0),
    rollup_clicks   INTEGER NOT NULL DEFAULT 0
);
INSERT INTO links_new (id, tenant_id, slug, url, expires_at, expired_at, max_clicks, fallback_url, tags, created_at, updated_at, title, password_hash, device_ios, device_android, device_desktop, imported_clicks, rollup_clicks) SELECT id, tenant_id, slug, url, expires_at, expired_at, max_clicks, fallback_url, tags, created_at, updated_at, title, password_hash, device_ios, device_android, device_desktop, imported_clicks, rollup_clicks FROM links;
DROP TABLE links;
ALTER TABLE links_new RENAME TO links;
UPDATE sqlite_sequence SET seq = max(seq, coalesce((SELECT seq FROM keep_seq), 0)) WHERE name = 'links';
INSERT INTO link_alarms SELECT * FROM keep_alarms;
INSERT INTO click_grants SELECT * FROM keep_grants;
DROP TABLE keep_alarms;
DROP TABLE keep_grants;
DROP TABLE keep_seq;
PRAGMA legacy_alter_table = OFF;
CREATE INDEX links_tenant_id ON links (tenant_id, id DESC);
-- +goose StatementBegin
CREATE TRIGGER links_agg_delete AFTER DELETE ON links
BEGIN
    INSERT INTO tenant_hourly (tenant_id, hour, count)
    SELECT OLD.tenant_id, bucket / 3600 * 3600 AS h, -SUM(count) FROM click_rollup
    WHERE link_id = OLD.id GROUP BY h
    ON CONFLICT (tenant_id, hour) DO UPDATE SET count = count + excluded.count;
    DELETE FROM link_hourly WHERE tenant_id = OLD.tenant_id AND link_id = OLD.id
        AND hour IN (SELECT DISTINCT bucket / 3600 * 3600 FROM click_rollup WHERE link_id = OLD.id);
    DELETE FROM link_daily WHERE tenant_id = OLD.tenant_id AND link_id = OLD.id
        AND day IN (SELECT DISTINCT bucket / 86400 * 86400 FROM click_rollup WHERE link_id = OLD.id);
    INSERT INTO tenant_dims_hourly (tenant_id, dimension, hour, value, count)
    SELECT OLD.tenant_id, dimension, hour, value, -SUM(count) FROM click_dims
    WHERE link_id = OLD.id GROUP BY dimension, hour, value
    ON CONFLICT (tenant_id, dimension, hour, value) DO UPDATE SET count = count + excluded.count;
    DELETE FROM link_dims_daily WHERE link_id = OLD.id;
END;
-- +goose StatementEnd
CREATE INDEX links_tenant_created ON links (tenant_id, created_at, id);
CREATE INDEX links_tenant_clicks ON links (tenant_id, (rollup_clicks + imported_clicks), id);
CREATE INDEX links_tenant_slug ON links (tenant_id, slug);
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
-- +goose StatementBegin
CREATE TRIGGER links_agg_daily_delete AFTER DELETE ON links
BEGIN
    INSERT INTO tenant_dims_daily (tenant_id, dimension, day, value, count)
    SELECT OLD.tenant_id, dimension, hour / 86400 * 86400 AS d, value, -SUM(count) FROM click_dims
    WHERE link_id = OLD.id GROUP BY dimension, d, value
    ON CONFLICT (tenant_id, dimension, day, value) DO UPDATE SET count = count + excluded.count;
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER links_quota_insert AFTER INSERT ON links BEGIN
    UPDATE tenants SET link_count = link_count + 1 WHERE id = new.tenant_id;
    SELECT RAISE(ABORT, 'linkforge: quota_exceeded')
    FROM tenants WHERE id = new.tenant_id AND max_links IS NOT NULL AND link_count > max_links;
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER links_quota_delete AFTER DELETE ON links BEGIN
    UPDATE tenants SET link_count = link_count - 1 WHERE id = old.tenant_id;
END;
-- +goose StatementEnd
DROP TABLE domains;
