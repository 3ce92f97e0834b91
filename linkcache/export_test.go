package linkcache

import (
	"context"
	"time"

	"github.com/linkforge/linkforge"
)

// get is Get for slug on the public host.
func (c *Cache) get(ctx context.Context, slug string, now time.Time) (*Entry, error) {
	return c.Get(ctx, Key{linkforge.PublicDomainID, slug}, now)
}
