-- Tenant quotas and max_clicks reservations (issue 13,
-- docs/adr/016-quotas-and-click-reservations.md), on PostgreSQL.

-- +goose Up

-- Quotas: NULL = no limit. link_count is the tenant's number of links, kept
-- by the statement triggers below in the transaction of the link write. The
-- insert trigger's UPDATE takes the tenant row's lock and, in READ
-- COMMITTED, re-reads the row as the previous holder committed it: two
-- creates on two nodes count one after the other, and the second sees the
-- first's link. A create past max_links then raises 'LF403' and rolls its
-- statement back. Named links_count_*, the triggers fire before
-- links_tag_counts_* (alphabetical order): every link write locks the
-- tenant row before tag rows, so quotas add no deadlock.
ALTER TABLE tenants ADD COLUMN max_links BIGINT CHECK (max_links IS NULL OR max_links >= 0);
ALTER TABLE tenants ADD COLUMN max_clicks_per_month BIGINT CHECK (max_clicks_per_month IS NULL OR max_clicks_per_month >= 0);
ALTER TABLE tenants ADD COLUMN link_count BIGINT NOT NULL DEFAULT 0;
UPDATE tenants t SET link_count = s.n
FROM (SELECT tenant_id, count(*) AS n FROM links GROUP BY tenant_id) s WHERE s.tenant_id = t.id;

-- +goose StatementBegin
CREATE FUNCTION links_count_insert() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    over TEXT;
BEGIN
    WITH n AS (SELECT tenant_id, count(*) AS c FROM new_links GROUP BY 1),
    u AS (
        UPDATE tenants t SET link_count = t.link_count + n.c FROM n WHERE t.id = n.tenant_id
        RETURNING t.name, t.link_count, t.max_links
    )
    SELECT name INTO over FROM u WHERE max_links IS NOT NULL AND link_count > max_links LIMIT 1;
    IF over IS NOT NULL THEN
        RAISE EXCEPTION 'linkforge: quota_exceeded: tenant % is at its max_links', over USING ERRCODE = 'LF403';
    END IF;
    RETURN NULL;
END;
$$;
-- +goose StatementEnd
CREATE TRIGGER links_count_insert AFTER INSERT ON links REFERENCING NEW TABLE AS new_links
    FOR EACH STATEMENT EXECUTE FUNCTION links_count_insert();

-- +goose StatementBegin
CREATE FUNCTION links_count_delete() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE tenants t SET link_count = t.link_count - o.c
    FROM (SELECT tenant_id, count(*) AS c FROM old_links GROUP BY 1) o WHERE t.id = o.tenant_id;
    RETURN NULL;
END;
$$;
-- +goose StatementEnd
CREATE TRIGGER links_count_delete AFTER DELETE ON links REFERENCING OLD TABLE AS old_links
    FOR EACH STATEMENT EXECUTE FUNCTION links_count_delete();

-- Click reservations of limited links: granted is the number of clicks the
-- database has let node_id serve, all-time (spent + unspent). The sum over
-- nodes never passes the link's max_clicks: ReserveClicks locks the link
-- row (FOR UPDATE) before it reads the sum. A restarted node recovers its
-- unspent grant as granted - its own clicks of the link.
CREATE TABLE click_grants (
    link_id BIGINT NOT NULL REFERENCES links (id) ON DELETE CASCADE,
    node_id TEXT   NOT NULL,
    granted BIGINT NOT NULL CHECK (granted >= 0),
    PRIMARY KEY (link_id, node_id)
);
-- Clicks counted before this migration have no grant: ReserveClicks
-- takes a node's share as the larger of its grant and its rollup total.

-- +goose Down
DROP TABLE click_grants;
DROP TRIGGER links_count_delete ON links;
DROP TRIGGER links_count_insert ON links;
DROP FUNCTION links_count_delete();
DROP FUNCTION links_count_insert();
ALTER TABLE tenants DROP COLUMN link_count;
ALTER TABLE tenants DROP COLUMN max_clicks_per_month;
ALTER TABLE tenants DROP COLUMN max_links;
