package web

import (
	"github.com/linkforge/linkforge"
)

// domainChanged is told of every domain write through this node: the host
// table, and the other nodes.
func (s *Server) domainChanged(d linkforge.Domain) {
	s.cache.InvalidateHost(d.Host)
	if s.peers != nil {
		s.peers.InvalidateHost(d.Host)
	}
}
