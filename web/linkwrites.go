package web

import (
	"context"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/links"
)

// linkEffects is what the Server lends its links.Service: the password
// hash in the Server's password slots (shared with the unlocks), this
// node's link cache, and the dashboards' feed, which renders links as
// this server's API does. The other nodes' caches and the scheduler are
// Config's (Peers, Alarms), handed to the service as they are.
type linkEffects struct{ s *Server }

func (e linkEffects) HashPassword(ctx context.Context, pw string) (string, error) {
	return e.s.hashPassword(ctx, pw)
}

func (e linkEffects) Invalidate(slug string) { e.s.Invalidate(slug) }

func (e linkEffects) InvalidateLink(domainID int64, slug string) { e.s.InvalidateLink(domainID, slug) }

// peerEffects tells the other nodes of link writes: through Config.Peers,
// with the domain's host for a link on a domain when the bus carries it
// (DomainPeers).
type peerEffects struct{ s *Server }

func (p peerEffects) PublishInvalidate(slug string) { p.s.peers.PublishInvalidate(slug) }

func (p peerEffects) PublishInvalidateLink(domainID int64, slug string) {
	dp, ok := p.s.peers.(DomainPeers)
	if !ok {
		p.s.peers.PublishInvalidate(slug)
		return
	}
	host, ok := p.s.cache.HostName(context.Background(), domainID)
	if !ok {
		return // the domain is gone, and its links with it
	}
	dp.PublishInvalidateOn(host, slug)
}

func (e linkEffects) PublishLink(op linkforge.LinkOp, l linkforge.Link) { e.s.publishLink(op, l) }

func (e linkEffects) PublishImported(ctx context.Context, l linkforge.Link) {
	e.s.publishImported(ctx, l)
}

// newLinkService returns the service every link write of the API goes
// through (links.go, bulk.go, import.go).
func (s *Server) newLinkService(cfg Config) (*links.Service, error) {
	fx := linkEffects{s}
	c := links.Config{Store: cfg.Store, Hasher: fx, Cache: fx, Publisher: fx, SelfHosts: s.selfHosts, SelfHostsOf: s.cache.LoopHosts,
		ShortBase: s.shortBase, BaseOf: s.linkBase, Domain: s.importDomain}
	// A nil interface of web's stays a nil one of links': nobody to tell.
	if cfg.Peers != nil {
		c.Peers = peerEffects{s}
	}
	if cfg.Alarms != nil {
		c.Alarms = cfg.Alarms
	}
	return links.New(c)
}
