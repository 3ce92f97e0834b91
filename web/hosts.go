package web

import (
	"context"

	"github.com/linkforge/linkforge"
)

// domainChanged is told of every domain write through this node: the host
// table, and the other nodes.
func (s *Server) domainChanged(d linkforge.Domain) {
	s.cache.InvalidateHost(d.Host)
	if p, ok := s.peers.(DomainPeers); ok {
		p.PublishDomain(d.Host)
	}
}

// DomainPeers is implemented by cluster buses that tell the other nodes
// of domain writes and of link writes on a domain.
type DomainPeers interface {
	// PublishDomain tells the others to reload their host tables.
	PublishDomain(host string)
	// PublishInvalidateOn tells the others to drop slug on host from
	// their link caches.
	PublishInvalidateOn(host, slug string)
}

// PeerDomain is another node's write of the domain host.
func (s *Server) PeerDomain(host string) { s.cache.InvalidateHost(host) }

// InvalidateOn drops slug on host from this node's link cache: another
// node's write of a link on a domain.
func (s *Server) InvalidateOn(host, slug string) {
	if host == "" {
		s.cache.Invalidate(linkforge.PublicDomainID, slug)
		return
	}
	if d := s.cache.Host(context.Background(), host, s.now()); d != nil {
		s.cache.Invalidate(d.ID, slug)
	}
}
