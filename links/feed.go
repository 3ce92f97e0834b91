package links

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/url"
	"strconv"

	"github.com/linkforge/linkforge"
)

// Viewers are this node's open dashboards of each tenant (package
// dashboard's Hub), which show link writes as the admin API renders them.
type Viewers interface {
	// Watched reports whether the tenant has a viewer on this node; a
	// link is rendered only then.
	Watched(tenantID int64) bool
	// LinkChanged hands the viewers the link's JSON. It must not block:
	// it is called on the request path, after the write.
	LinkChanged(tenantID int64, op linkforge.LinkOp, link []byte)
}

// HostNames gives the host of a domain id (*linkcache.Cache does).
type HostNames interface {
	HostName(ctx context.Context, id int64) (string, bool)
}

// Addresses says where a link's short URL starts: the public URL for the
// public host, the public URL's scheme on a domain's host.
type Addresses struct {
	Public *url.URL
	Hosts  HostNames
}

// Base is the Base of l's short URL.
func (a Addresses) Base(l linkforge.Link) Base {
	if l.DomainID == linkforge.PublicDomainID {
		return Base{URL: ShortBase(a.Public), Host: a.Public.Hostname()}
	}
	host, ok := a.Hosts.HostName(context.Background(), l.DomainID)
	if !ok {
		// A domain deleted under the link's feet (it cannot have links,
		// so this is a write racing the delete): say which id it was.
		host = "domain-" + strconv.FormatInt(l.DomainID, 10) + ".invalid"
	}
	return Base{URL: a.Public.Scheme + "://" + host, Host: host}
}

// LinkReader reads a link back for the viewers.
type LinkReader interface {
	TenantLink(ctx context.Context, tenantID, domainID int64, slug string) (linkforge.Link, error)
}

// Feed shows link writes on this node's dashboards (the feed's link
// messages): the Publisher of a Service, and what shows the other nodes'
// writes (ShowPeerLink) when the cluster bus tells of them.
type Feed struct {
	viewers Viewers
	store   LinkReader
	base    func(linkforge.Link) Base
	logger  *slog.Logger
}

// NewFeed returns the Feed showing links to viewers, read from store and
// rendered at base. logger nil: discard.
func NewFeed(viewers Viewers, store LinkReader, base func(linkforge.Link) Base, logger *slog.Logger) *Feed {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return &Feed{viewers: viewers, store: store, base: base, logger: logger}
}

// deletedJSON is the link of a deleted message: the link is gone, so only
// what names it. The id tells a deleted link from a new one that has
// taken its slug since.
type deletedJSON struct {
	ID   string `json:"id"`
	Slug string `json:"slug"`
}

// PublishLink shows l, created, updated or deleted through this node, to
// its tenant's viewers here, rendered once and only if there are any.
func (f *Feed) PublishLink(op linkforge.LinkOp, l linkforge.Link) {
	if f == nil || f.viewers == nil || !f.viewers.Watched(l.TenantID) {
		return
	}
	var v any = RenderAt(l, f.base(l))
	if op == linkforge.LinkDeleted {
		v = deletedJSON{ID: strconv.FormatInt(l.ID, 10), Slug: l.Slug}
	}
	body, err := json.Marshal(v)
	if err != nil { // cannot happen for these field types; never silently
		f.logger.Error("live: encode link", "tenant_id", l.TenantID, "slug", l.Slug, "error", err)
		return
	}
	f.viewers.LinkChanged(l.TenantID, op, body)
}

// PublishImported is PublishLink for a link an import created: the
// importer does not learn the new links' ids, nor what the store filled
// in (timestamps), so the link is read back, if anyone here watches.
func (f *Feed) PublishImported(ctx context.Context, l linkforge.Link) {
	e := linkforge.LinkEvent{Op: linkforge.LinkCreated, TenantID: l.TenantID, Slug: l.Slug, DomainID: l.DomainID}
	// A client that went away mid-import cancels the reads: not worth a
	// log line per link.
	if err := f.ShowPeerLink(ctx, e); err != nil && ctx.Err() == nil {
		// The import itself succeeded; a viewer sees the link on reload.
		f.logger.Warn("live: cannot show an imported link", "tenant_id", l.TenantID, "slug", l.Slug, "error", err)
	}
}

// ShowPeerLink shows on this node's dashboards a link write made
// elsewhere (another node's API, through the cluster bus; an import). A
// created or updated link is read from the store, as it is now; one that
// is gone, or whose slug now names another link, is skipped: the deletion
// that explains it is on its way, or came already. (An event without a
// LinkID, an import's, is shown whatever the id.) A deleted link needs no
// read. Nothing is read for a tenant without viewers here.
func (f *Feed) ShowPeerLink(ctx context.Context, e linkforge.LinkEvent) error {
	if f == nil || f.viewers == nil || !f.viewers.Watched(e.TenantID) {
		return nil
	}
	if e.Op == linkforge.LinkDeleted {
		f.PublishLink(e.Op, linkforge.Link{ID: e.LinkID, TenantID: e.TenantID, Slug: e.Slug})
		return nil
	}
	l, err := f.store.TenantLink(ctx, e.TenantID, e.DomainID, e.Slug)
	switch {
	case linkforge.ErrorCode(err) == linkforge.ENotFound:
		return nil
	case err != nil:
		return fmt.Errorf("show a link write: read %q: %w", e.Slug, err)
	case e.LinkID != 0 && l.ID != e.LinkID:
		return nil
	}
	f.PublishLink(e.Op, l)
	return nil
}
