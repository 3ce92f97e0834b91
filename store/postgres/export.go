package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/linkforge/linkforge"
)

// ExportLinks returns up to limit of the tenant's links with an id above
// afterID, oldest (lowest id) first, with their Clicks: one keyset page of
// an export (porting.Links). Each page is one short query on the
// (tenant_id, id) index, so an export of a million links holds neither a
// transaction nor a connection while the client reads.
func (db *DB) ExportLinks(ctx context.Context, tenantID, afterID int64, limit int) ([]linkforge.Link, error) {
	limit = linkforge.PageLimit(limit, defaultPageSize, maxPageSize)
	links, err := query(ctx, db.pool, linkScan(true),
		`SELECT `+linkColumns+`, `+clicksColumn+` FROM links l
		 WHERE l.tenant_id = $1 AND l.id > $2 ORDER BY l.id LIMIT $3`,
		tenantID, afterID, limit)
	if err != nil {
		return nil, fmt.Errorf("postgres: export links: %w", err)
	}
	return links, nil
}

// SlugTenants returns the tenant of each of slugs in use on the public
// host, in one query:
// the import looks up a batch of slugs before writing it.
func (db *DB) SlugTenants(ctx context.Context, slugs []string) (map[string]int64, error) {
	owners := make(map[string]int64, len(slugs))
	if len(slugs) == 0 {
		return owners, nil
	}
	rows, err := db.pool.Query(ctx, `SELECT slug, tenant_id FROM links WHERE domain_id = 0 AND slug = ANY($1)
		UNION ALL SELECT a.slug, l.tenant_id FROM link_aliases a JOIN links l ON l.id = a.link_id
		WHERE a.domain_id = 0 AND a.slug = ANY($1)`, slugs)
	if err != nil {
		return nil, fmt.Errorf("postgres: slug tenants: %w", err)
	}
	var (
		slug   string
		tenant int64
	)
	if _, err := pgx.ForEachRow(rows, []any{&slug, &tenant}, func() error {
		owners[slug] = tenant
		return nil
	}); err != nil {
		return nil, fmt.Errorf("postgres: slug tenants: %w", err)
	}
	return owners, nil
}
