-- links.rollup_clicks (00007) was kept by a row trigger: one UPDATE of the
-- link's row per click_rollup row written. A flush writes a link's minutes
-- in one statement, and a backlog (a node back from a database outage, a
-- bulk load) writes many minutes of the same hot links: each a new version
-- of the link's row (never HOT: rollup_clicks is in links_tenant_clicks),
-- with an entry in every index of links, the trigram GIN ones included,
-- and, within one transaction, each update walking the versions the ones
-- before it left. A 100,000-row COPY of 10,000 Zipf-clicked links took
-- minutes and slowed as it went. Per statement instead: one UPDATE per link
-- with the sum of its rows' deltas, its rows locked in id order first so
-- that flushes of several nodes take them in one order. The triggers' names
-- sort before click_rollup_agg_*, so that, as the row trigger did, they
-- take the links rows before the aggregates' locks (same-event triggers
-- fire in name order). Deletes (retention) keep not touching the totals.
-- +goose Up
-- +goose StatementBegin
CREATE FUNCTION links_rollup_clicks_stmt() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM 1 FROM links l WHERE l.id IN (
        SELECT link_id FROM new_rows
    ) ORDER BY l.id FOR NO KEY UPDATE;
    IF TG_OP = 'INSERT' THEN
        UPDATE links l SET rollup_clicks = l.rollup_clicks + d.n
        FROM (SELECT link_id, SUM(count) AS n FROM new_rows GROUP BY link_id HAVING SUM(count) <> 0) d
        WHERE l.id = d.link_id;
    ELSE
        UPDATE links l SET rollup_clicks = l.rollup_clicks + d.n
        FROM (
            SELECT link_id, SUM(c) AS n FROM (
                SELECT link_id, count AS c FROM new_rows
                UNION ALL SELECT link_id, -count FROM old_rows
            ) u GROUP BY link_id HAVING SUM(c) <> 0
        ) d
        WHERE l.id = d.link_id;
    END IF;
    RETURN NULL;
END;
$$;
-- +goose StatementEnd
DROP TRIGGER click_rollup_links_clicks ON click_rollup;
CREATE TRIGGER click_rollup_0_links_clicks_insert AFTER INSERT ON click_rollup
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION links_rollup_clicks_stmt();
CREATE TRIGGER click_rollup_0_links_clicks_update AFTER UPDATE ON click_rollup
    REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION links_rollup_clicks_stmt();

-- +goose Down
DROP TRIGGER click_rollup_0_links_clicks_update ON click_rollup;
DROP TRIGGER click_rollup_0_links_clicks_insert ON click_rollup;
DROP FUNCTION links_rollup_clicks_stmt();
CREATE TRIGGER click_rollup_links_clicks AFTER INSERT OR UPDATE OF count ON click_rollup
    FOR EACH ROW EXECUTE FUNCTION links_rollup_clicks();
