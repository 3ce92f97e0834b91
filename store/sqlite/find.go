package sqlite

import (
	"context"
	"fmt"

	"github.com/linkforge/linkforge"
)

// LinksByURL returns the tenant's links of url on the domain, oldest
// first (linkforge.LinkFinder), through links_tenant_url (migration
// 00049).
func (db *DB) LinksByURL(ctx context.Context, tenantID, domainID int64, url string, limit int) ([]linkforge.Link, error) {
	links, err := query(ctx, db.reader, linkScan(true),
		`SELECT `+linkColumns+`, `+clicksColumn+` FROM links l
		 WHERE l.tenant_id = ? AND l.domain_id = ? AND substr(l.url, 1, 64) = substr(?3, 1, 64) AND l.url = ?3
		 ORDER BY l.id LIMIT ?`, tenantID, domainID, url, linkforge.PageLimit(limit, 1, linkforge.MaxFindCandidates))
	if err != nil {
		return nil, fmt.Errorf("sqlite: links by url: %w", err)
	}
	return links, nil
}
