package postgres

import (
	"context"
	"fmt"

	"github.com/linkforge/linkforge"
)

// LinksByURL returns the tenant's links of url on the domain, oldest
// first (linkforge.LinkFinder), through links_tenant_url (migration
// 00049).
func (db *DB) LinksByURL(ctx context.Context, tenantID, domainID int64, url string, limit int) ([]linkforge.Link, error) {
	links, err := query(ctx, db.pool, linkScan(true),
		`SELECT `+linkColumns+`, `+clicksColumn+` FROM links l
		 WHERE l.tenant_id = $1 AND l.domain_id = $2 AND left(l.url, 64) = left($3, 64) AND l.url = $3
		 ORDER BY l.id LIMIT $4`, tenantID, domainID, url, linkforge.PageLimit(limit, 1, linkforge.MaxFindCandidates))
	if err != nil {
		return nil, fmt.Errorf("postgres: links by url: %w", err)
	}
	return links, nil
}
