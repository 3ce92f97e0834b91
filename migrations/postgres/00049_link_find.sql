-- POST /api/v1/links with find_if_exists: the tenant's links of one URL on
-- one domain, read by this index. The URL's first 64 characters keep it
-- small (and under a btree entry's limit); the query compares the whole
-- URL after (store/postgres/find.go).

-- +goose Up
CREATE INDEX links_tenant_url ON links (tenant_id, domain_id, left(url, 64));

-- +goose Down
DROP INDEX links_tenant_url;
