package web

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/linkforge/linkforge"
)

// LinkFeed shows the admin API's link writes on the tenant's open dashboards
// (the feed's link messages, operation liveFeed). Package dashboard's Hub
// implements it next to LiveFeed (Config.LinkFeed).
type LinkFeed interface {
	// Watched reports whether the tenant has a viewer on this node; the
	// Server renders a link only then.
	Watched(tenantID int64) bool
	// LinkChanged hands the viewers the link's JSON as the API renders it.
	// It must not block: it is called on the request path, after the write.
	LinkChanged(tenantID int64, op linkforge.LinkOp, link []byte)
}

// LinkAnnouncer tells the other nodes of a link write, for their
// dashboards. linkforge.Bus implements it (Config.Announcer). It must not
// block.
type LinkAnnouncer interface {
	PublishLink(e linkforge.LinkEvent)
}

// deletedLinkJSON is the link of a deleted message: the link is gone, so
// only what names it. The id tells a deleted link from a new one that has
// taken its slug since.
type deletedLinkJSON struct {
	ID   string `json:"id"`
	Slug string `json:"slug"`
}

// publishLink tells the dashboards, this node's and the other nodes', that
// l was created, updated or deleted through the API: links.Service calls
// it (as its Publisher, linkwrites.go) after each successful write. It
// never blocks and never fails the request. An import's links go to
// publishImported instead.
func (s *Server) publishLink(op linkforge.LinkOp, l linkforge.Link) {
	s.showLink(op, l)
	if s.announcer != nil {
		s.announcer.PublishLink(linkforge.LinkEvent{Op: op, TenantID: l.TenantID, LinkID: l.ID, Slug: l.Slug, DomainID: l.DomainID})
	}
}

// showLink hands l to this node's viewers of its tenant, rendered once, and
// only if there are any.
func (s *Server) showLink(op linkforge.LinkOp, l linkforge.Link) {
	if s.linkFeed == nil || !s.linkFeed.Watched(l.TenantID) {
		return
	}
	var v any = s.linkJSON(l)
	if op == linkforge.LinkDeleted {
		v = deletedLinkJSON{ID: strconv.FormatInt(l.ID, 10), Slug: l.Slug}
	}
	body, err := json.Marshal(v)
	if err != nil { // cannot happen for these field types; never silently
		s.logger.Error("live: encode link", "tenant_id", l.TenantID, "slug", l.Slug, "error", err)
		return
	}
	s.linkFeed.LinkChanged(l.TenantID, op, body)
}

// publishImported is publishLink for a link an import created: the
// importer does not learn the new links' ids, nor what the store filled in
// (timestamps), so the link is read back for this node's viewers, if any,
// and announced to the other nodes without its id (LinkEvent.LinkID 0).
func (s *Server) publishImported(ctx context.Context, l linkforge.Link) {
	e := linkforge.LinkEvent{Op: linkforge.LinkCreated, TenantID: l.TenantID, Slug: l.Slug, DomainID: l.DomainID}
	if s.announcer != nil {
		s.announcer.PublishLink(e)
	}
	// A client that went away mid-import cancels the reads: not worth a
	// log line per link.
	if err := s.ShowPeerLink(ctx, e); err != nil && ctx.Err() == nil {
		// The import itself succeeded; a viewer sees the link on reload.
		s.logger.Warn("live: cannot show an imported link", "tenant_id", l.TenantID, "slug", l.Slug, "error", err)
	}
}

// ShowPeerLink shows on this node's dashboards a link write made through
// another node's API (the cluster bus's link event). A created or updated
// link is read from the store, as it is now, and rendered as this node's
// API renders it; one that is gone, or whose slug now names another link,
// is skipped: the deletion that explains it is on its way, or came already.
// (An event without a LinkID, an import's, is shown whatever the id.) A
// deleted link needs no read. Nothing is read for a tenant without
// viewers here, and nothing is told to the other nodes.
func (s *Server) ShowPeerLink(ctx context.Context, e linkforge.LinkEvent) error {
	if s.linkFeed == nil || !s.linkFeed.Watched(e.TenantID) {
		return nil
	}
	if e.Op == linkforge.LinkDeleted {
		s.showLink(e.Op, linkforge.Link{ID: e.LinkID, TenantID: e.TenantID, Slug: e.Slug})
		return nil
	}
	l, err := s.store.TenantLink(ctx, e.TenantID, e.DomainID, e.Slug)
	switch {
	case linkforge.ErrorCode(err) == linkforge.ENotFound:
		return nil
	case err != nil:
		return fmt.Errorf("show another node's link write: read %q: %w", e.Slug, err)
	case e.LinkID != 0 && l.ID != e.LinkID:
		return nil
	}
	s.showLink(e.Op, l)
	return nil
}
