package links

import (
	"context"
	"fmt"

	"github.com/linkforge/linkforge"
)

// Renamer is the store side of Rename and DeleteAlias
// (linkforge.AliasStore); both stores implement it.
type Renamer interface {
	RenameLink(ctx context.Context, tenantID, domainID int64, slug, to string) (linkforge.Link, error)
	DeleteAlias(ctx context.Context, tenantID, domainID int64, slug, alias string) error
}

// Rename gives the tenant's link slug the slug to; the old slug stays an
// alias of it. Both slugs leave every node's redirect cache: the old one
// may be cached as the link (it now resolves through the alias), the new
// one as unknown.
func (s *Service) Rename(ctx context.Context, tenantID, domainID int64, slug, to string) (linkforge.Link, error) {
	r, ok := s.store.(Renamer)
	if !ok {
		return linkforge.Link{}, fmt.Errorf("rename link: the store cannot rename links")
	}
	l, err := r.RenameLink(ctx, tenantID, domainID, slug, to)
	if err != nil {
		return linkforge.Link{}, fmt.Errorf("rename link: %w", err)
	}
	s.invalidate(domainID, slug)
	s.written(linkforge.LinkUpdated, l)
	return l, nil
}

// DeleteAlias removes alias from the tenant's link slug: from the moment
// it returns, the alias answers 404 on every node.
func (s *Service) DeleteAlias(ctx context.Context, tenantID, domainID int64, slug, alias string) error {
	r, ok := s.store.(Renamer)
	if !ok {
		return fmt.Errorf("delete alias: the store cannot rename links")
	}
	if err := r.DeleteAlias(ctx, tenantID, domainID, slug, alias); err != nil {
		return fmt.Errorf("delete alias: %w", err)
	}
	s.invalidate(domainID, alias)
	return nil
}

// invalidate drops one slug from this node's cache and the others'.
func (s *Service) invalidate(domainID int64, slug string) {
	if s.cache != nil {
		s.cache.Invalidate(domainID, slug)
	}
	if s.peers != nil {
		s.peers.Invalidate(domainID, slug)
	}
}
