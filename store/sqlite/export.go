package sqlite

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/linkforge/linkforge"
)

// ExportLinks returns up to limit of the tenant's links with an id above
// afterID, oldest (lowest id) first, with their Clicks: one keyset page of
// an export (porting.Links). Each page is one short read, so a long export
// never holds a read transaction open while the client reads (which would
// keep the WAL from being checkpointed).
func (db *DB) ExportLinks(ctx context.Context, tenantID, afterID int64, limit int) ([]linkforge.Link, error) {
	limit = linkforge.PageLimit(limit, defaultPageSize, maxPageSize)
	links, err := query(ctx, db.reader, linkScan(true),
		`SELECT `+linkColumns+`, `+clicksColumn+` FROM links l
		 WHERE l.tenant_id = ? AND l.id > ? ORDER BY l.id LIMIT ?`,
		tenantID, afterID, limit)
	if err != nil {
		return nil, fmt.Errorf("sqlite: export links: %w", err)
	}
	return links, nil
}

// SlugTenants returns the tenant of each of slugs in use on the public
// host, in one query
// (the slugs travel as one JSON array): the import looks up a batch of
// slugs before writing it.
func (db *DB) SlugTenants(ctx context.Context, slugs []string) (map[string]int64, error) {
	owners := make(map[string]int64, len(slugs))
	if len(slugs) == 0 {
		return owners, nil
	}
	list, err := json.Marshal(slugs)
	if err != nil {
		return nil, fmt.Errorf("sqlite: slug tenants: %w", err)
	}
	rows, err := db.reader.QueryContext(ctx,
		`SELECT slug, tenant_id FROM links WHERE domain_id = 0 AND slug IN (SELECT value FROM json_each(?1))
		 UNION ALL SELECT a.slug, l.tenant_id FROM link_aliases a JOIN links l ON l.id = a.link_id
		 WHERE a.domain_id = 0 AND a.slug IN (SELECT value FROM json_each(?1))`, string(list))
	if err != nil {
		return nil, fmt.Errorf("sqlite: slug tenants: %w", err)
	}
	var (
		slug   string
		tenant int64
	)
	if err := forEach(rows, []any{&slug, &tenant}, func() error {
		owners[slug] = tenant
		return nil
	}); err != nil {
		return nil, fmt.Errorf("sqlite: slug tenants: %w", err)
	}
	return owners, nil
}
