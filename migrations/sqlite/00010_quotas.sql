-- Tenant quotas and max_clicks reservations (issue 13,
-- docs/adr/016-quotas-and-click-reservations.md), on embedded SQLite.

-- +goose Up

-- Quotas: NULL = no limit. link_count is the tenant's number of links, kept
-- by the triggers below in the transaction of the link write; the insert
-- trigger refuses a link past max_links (RAISE(ABORT) undoes the statement
-- only, so a bulk create goes on with its other items). SQLite has one
-- writer: the check and the insert cannot interleave with another create.
ALTER TABLE tenants ADD COLUMN max_links INTEGER CHECK (max_links IS NULL OR max_links >= 0);
ALTER TABLE tenants ADD COLUMN max_clicks_per_month INTEGER CHECK (max_clicks_per_month IS NULL OR max_clicks_per_month >= 0);
ALTER TABLE tenants ADD COLUMN link_count INTEGER NOT NULL DEFAULT 0;
UPDATE tenants SET link_count = (SELECT count(*) FROM links l WHERE l.tenant_id = tenants.id);

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

-- Click reservations of limited links: granted is the number of clicks the
-- database has let node_id serve, all-time (spent + unspent). The sum over
-- nodes never passes the link's max_clicks (ReserveClicks). A restarted
-- node recovers its unspent grant as granted - its own clicks of the link.
CREATE TABLE click_grants (
    link_id INTEGER NOT NULL REFERENCES links (id) ON DELETE CASCADE,
    node_id TEXT    NOT NULL,
    granted INTEGER NOT NULL CHECK (granted >= 0),
    PRIMARY KEY (link_id, node_id)
) WITHOUT ROWID;
-- Clicks counted before this migration have no grant: ReserveClicks
-- takes a node's share as the larger of its grant and its rollup total.

-- +goose Down
DROP TABLE click_grants;
DROP TRIGGER links_quota_delete;
DROP TRIGGER links_quota_insert;
ALTER TABLE tenants DROP COLUMN link_count;
ALTER TABLE tenants DROP COLUMN max_clicks_per_month;
ALTER TABLE tenants DROP COLUMN max_links;
