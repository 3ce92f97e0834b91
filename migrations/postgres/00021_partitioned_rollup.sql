-- The minute rollup (click_rollup) and the hourly dimension rows
-- (click_dims), the two tables that grow with every active link, are
-- partitioned by UTC month of their time column (docs/adr/027-retention.md,
-- "Partitioned rollup"): retention then drops whole months instead of
-- deleting their rows one by one, and every query that names a time range
-- reads only its months. Each table's primary key already starts with the
-- link and includes the time, so it is a valid key of a partitioned table
-- and the flush's ON CONFLICT targets are unchanged.
--
-- Partitions are named <table>_YYYYMM and made ahead by the daily
-- retention job (linkforge_ensure_month, two months ahead); a DEFAULT
-- partition takes any row outside them, so a flush never fails for want
-- of a partition, and linkforge_ensure_month moves such rows into the
-- month's partition when it makes it.
--
-- The conversion runs in place: new partitioned table, a partition for each
-- month of the existing rows and the next two, rows copied, old table
-- dropped, triggers recreated. The rows are copied before the triggers
-- exist on the new table, so the aggregates are not counted twice.

-- +goose Up
-- +goose StatementBegin
CREATE FUNCTION linkforge_ensure_month(parent TEXT, col TEXT, at TIMESTAMPTZ) RETURNS BOOLEAN
LANGUAGE plpgsql AS $$
DECLARE
    lo   TIMESTAMPTZ := date_trunc('month', at AT TIME ZONE 'UTC') AT TIME ZONE 'UTC';
    hi   TIMESTAMPTZ := (date_trunc('month', at AT TIME ZONE 'UTC') + interval '1 month') AT TIME ZONE 'UTC';
    part TEXT := parent || '_' || to_char(at AT TIME ZONE 'UTC', 'YYYYMM');
BEGIN
    IF to_regclass(part) IS NOT NULL THEN
        RETURN false;
    END IF;
    EXECUTE format('CREATE TABLE %I (LIKE %I INCLUDING DEFAULTS INCLUDING CONSTRAINTS)', part, parent);
    IF to_regclass(parent || '_default') IS NOT NULL THEN
        EXECUTE format('WITH m AS (DELETE FROM %I WHERE %I >= $1 AND %I < $2 RETURNING *) INSERT INTO %I SELECT * FROM m',
            parent || '_default', col, col, part) USING lo, hi;
    END IF;
    EXECUTE format('ALTER TABLE %I ATTACH PARTITION %I FOR VALUES FROM (%L) TO (%L)', parent, part, lo, hi);
    RETURN true;
END $$;
-- +goose StatementEnd

ALTER TABLE click_rollup RENAME TO click_rollup_plain;
ALTER INDEX click_rollup_pkey RENAME TO click_rollup_plain_pkey;
ALTER INDEX click_rollup_bucket RENAME TO click_rollup_plain_bucket;
CREATE TABLE click_rollup (
    link_id BIGINT      NOT NULL,
    bucket  TIMESTAMPTZ NOT NULL,
    node_id TEXT        NOT NULL,
    count   BIGINT      NOT NULL CHECK (count >= 0),
    PRIMARY KEY (link_id, bucket, node_id)
) PARTITION BY RANGE (bucket);
CREATE INDEX click_rollup_bucket ON click_rollup (bucket);
CREATE TABLE click_rollup_default PARTITION OF click_rollup DEFAULT;
SELECT linkforge_ensure_month('click_rollup', 'bucket', m) FROM (
    SELECT DISTINCT date_trunc('month', bucket AT TIME ZONE 'UTC') AT TIME ZONE 'UTC' AS m FROM click_rollup_plain
    UNION SELECT (date_trunc('month', now() AT TIME ZONE 'UTC') + k * interval '1 month') AT TIME ZONE 'UTC'
    FROM generate_series(0, 2) AS k
) s ORDER BY m;
INSERT INTO click_rollup SELECT link_id, bucket, node_id, count FROM click_rollup_plain;
DROP TABLE click_rollup_plain;
CREATE TRIGGER click_rollup_agg_insert AFTER INSERT ON click_rollup
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION linkforge_rollup_agg();
CREATE TRIGGER click_rollup_agg_update AFTER UPDATE ON click_rollup
    REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION linkforge_rollup_agg();
CREATE TRIGGER click_rollup_links_clicks AFTER INSERT OR UPDATE OF count ON click_rollup
    FOR EACH ROW EXECUTE FUNCTION links_rollup_clicks();

ALTER TABLE click_dims RENAME TO click_dims_plain;
ALTER INDEX click_dims_pkey RENAME TO click_dims_plain_pkey;
ALTER INDEX click_dims_hour RENAME TO click_dims_plain_hour;
ALTER INDEX click_dims_link_dimension RENAME TO click_dims_plain_link_dimension;
CREATE TABLE click_dims (
    link_id   BIGINT      NOT NULL,
    hour      TIMESTAMPTZ NOT NULL,
    dimension TEXT        NOT NULL,
    value     TEXT        NOT NULL,
    node_id   TEXT        NOT NULL,
    count     BIGINT      NOT NULL CHECK (count >= 0),
    PRIMARY KEY (link_id, hour, dimension, value, node_id)
) PARTITION BY RANGE (hour);
CREATE INDEX click_dims_hour ON click_dims (hour);
CREATE INDEX click_dims_link_dimension ON click_dims (link_id, dimension, hour);
CREATE TABLE click_dims_default PARTITION OF click_dims DEFAULT;
SELECT linkforge_ensure_month('click_dims', 'hour', m) FROM (
    SELECT DISTINCT date_trunc('month', hour AT TIME ZONE 'UTC') AT TIME ZONE 'UTC' AS m FROM click_dims_plain
    UNION SELECT (date_trunc('month', now() AT TIME ZONE 'UTC') + k * interval '1 month') AT TIME ZONE 'UTC'
    FROM generate_series(0, 2) AS k
) s ORDER BY m;
INSERT INTO click_dims SELECT link_id, hour, dimension, value, node_id, count FROM click_dims_plain;
DROP TABLE click_dims_plain;
CREATE TRIGGER click_dims_agg_insert AFTER INSERT ON click_dims
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION linkforge_dims_agg();
CREATE TRIGGER click_dims_agg_update AFTER UPDATE ON click_dims
    REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION linkforge_dims_agg();

-- +goose Down
-- Back to plain tables, rows copied before the triggers exist again.
ALTER TABLE click_rollup RENAME TO click_rollup_parted;
ALTER INDEX click_rollup_pkey RENAME TO click_rollup_parted_pkey;
ALTER INDEX click_rollup_bucket RENAME TO click_rollup_parted_bucket;
CREATE TABLE click_rollup (
    link_id BIGINT      NOT NULL,
    bucket  TIMESTAMPTZ NOT NULL,
    node_id TEXT        NOT NULL,
    count   BIGINT      NOT NULL CHECK (count >= 0),
    PRIMARY KEY (link_id, bucket, node_id)
);
INSERT INTO click_rollup SELECT link_id, bucket, node_id, count FROM click_rollup_parted;
DROP TABLE click_rollup_parted;
CREATE INDEX click_rollup_bucket ON click_rollup (bucket);
CREATE TRIGGER click_rollup_agg_insert AFTER INSERT ON click_rollup
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION linkforge_rollup_agg();
CREATE TRIGGER click_rollup_agg_update AFTER UPDATE ON click_rollup
    REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION linkforge_rollup_agg();
CREATE TRIGGER click_rollup_links_clicks AFTER INSERT OR UPDATE OF count ON click_rollup
    FOR EACH ROW EXECUTE FUNCTION links_rollup_clicks();

ALTER TABLE click_dims RENAME TO click_dims_parted;
ALTER INDEX click_dims_pkey RENAME TO click_dims_parted_pkey;
ALTER INDEX click_dims_hour RENAME TO click_dims_parted_hour;
ALTER INDEX click_dims_link_dimension RENAME TO click_dims_parted_link_dimension;
CREATE TABLE click_dims (
    link_id   BIGINT      NOT NULL,
    hour      TIMESTAMPTZ NOT NULL,
    dimension TEXT        NOT NULL,
    value     TEXT        NOT NULL,
    node_id   TEXT        NOT NULL,
    count     BIGINT      NOT NULL CHECK (count >= 0),
    PRIMARY KEY (link_id, hour, dimension, value, node_id)
);
INSERT INTO click_dims SELECT link_id, hour, dimension, value, node_id, count FROM click_dims_parted;
DROP TABLE click_dims_parted;
CREATE INDEX click_dims_hour ON click_dims (hour);
CREATE INDEX click_dims_link_dimension ON click_dims (link_id, dimension, hour);
CREATE TRIGGER click_dims_agg_insert AFTER INSERT ON click_dims
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION linkforge_dims_agg();
CREATE TRIGGER click_dims_agg_update AFTER UPDATE ON click_dims
    REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION linkforge_dims_agg();

DROP FUNCTION linkforge_ensure_month(TEXT, TEXT, TIMESTAMPTZ);
