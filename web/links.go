package web

import (
	"context"
	"fmt"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/links"
)

// linkJSON is the Link schema's body (links.JSON: the export writes it
// too).
type linkJSON = links.JSON

func (s *Server) linkJSON(l linkforge.Link) linkJSON { return links.RenderAt(l, s.linkBase(l)) }

func (s *Server) createLink(c echo.Context) error {
	schemes, err := s.store.TargetSchemes(c.Request().Context(), tenantID(c))
	if err != nil {
		return fmt.Errorf("create link: %w", err)
	}
	nl, err := decodeCreateLinkFor(c.Request().Body, s.cache.LoopHosts(c.Request().Context()), schemes)
	if err != nil {
		return err
	}
	nl.link.TenantID = tenantID(c)
	t, err := s.domains.Resolve(c.Request().Context(), nl.link.TenantID, "domain", nl.domain, true)
	if err != nil {
		return err
	}
	nl.link.DomainID = t.ID
	if nl.findIfExists {
		found, ok, err := s.findLink(c.Request().Context(), nl)
		if err != nil {
			return err
		}
		if ok {
			return c.JSON(http.StatusOK, s.linkJSON(found))
		}
	}
	created, err := s.links.Create(c.Request().Context(), links.NewLink{Link: nl.link, Password: nl.password})
	if err != nil {
		return err
	}
	c.Response().Header().Set(echo.HeaderLocation, s.linkLocation(created))
	return c.JSON(http.StatusCreated, s.linkJSON(created))
}

// findLink is find_if_exists: the oldest of the tenant's links of nl's
// URL on its domain that linkforge.FindMatch takes, if any. Two
// concurrent creates may both find none and both create.
func (s *Server) findLink(ctx context.Context, nl newLink) (linkforge.Link, bool, error) {
	cands, err := s.store.LinksByURL(ctx, nl.link.TenantID, nl.link.DomainID, nl.link.URL, linkforge.MaxFindCandidates)
	if err != nil {
		return linkforge.Link{}, false, fmt.Errorf("find link: %w", err)
	}
	for _, l := range cands {
		if linkforge.FindMatch(l, nl.link, nl.password) {
			return l, true, nil
		}
	}
	return linkforge.Link{}, false, nil
}

// listJSON is the body of GET /api/v1/links.
type listJSON struct {
	Links      []linkJSON `json:"links"`
	NextCursor string     `json:"next_cursor"`
}

// listLinks answers GET /api/v1/links: one page of the tenant's links,
// filtered by q, tag and state, in the order of sort (listquery.go).
func (s *Server) listLinks(c echo.Context) error {
	q, err := parseListQuery(c.QueryParams())
	if err != nil {
		return err
	}
	q.TenantID = tenantID(c)
	q.Now = s.now()
	if c.QueryParams().Has("domain") {
		t, err := s.linkDomain(c)
		if err != nil {
			return err
		}
		q.Domain = &t.ID
	}
	page, err := s.store.QueryLinks(c.Request().Context(), q)
	if err != nil {
		return fmt.Errorf("list links: %w", err)
	}
	out := listJSON{Links: make([]linkJSON, len(page.Links)), NextCursor: page.NextCursor}
	for i, l := range page.Links {
		out.Links[i] = s.linkJSON(l)
	}
	return c.JSON(http.StatusOK, out)
}

func (s *Server) getLink(c echo.Context) error {
	l, err := s.addressedLink(c)
	if err != nil {
		return fmt.Errorf("get link: %w", err)
	}
	return s.oneLink(c, http.StatusOK, l)
}

// oneLink answers the body of one link with its aliases (rename.go).
func (s *Server) oneLink(c echo.Context, status int, l linkforge.Link) error {
	j := s.linkJSON(l)
	aliases, err := s.store.LinkAliases(c.Request().Context(), l.ID)
	if err != nil {
		return fmt.Errorf("link aliases: %w", err)
	}
	j.Aliases = aliases
	return c.JSON(status, j)
}

func (s *Server) patchLink(c echo.Context) error {
	p, err := decodePatchLink(c.Request().Body)
	if err != nil {
		return err
	}
	t, err := s.linkDomain(c)
	if err != nil {
		return err
	}
	if p.setSlug {
		l, err := s.links.Rename(c.Request().Context(), tenantID(c), t.ID, c.Param("slug"), p.slug)
		if err != nil {
			return err
		}
		return s.oneLink(c, http.StatusOK, l)
	}
	l, err := s.links.Update(c.Request().Context(), tenantID(c), t.ID, c.Param("slug"),
		links.Patch{Apply: p.apply, SetPassword: p.setPassword, Password: p.password})
	if err != nil {
		return err
	}
	return s.oneLink(c, http.StatusOK, l)
}

// deleteAlias answers DELETE /api/v1/links/{slug}/aliases/{alias}: the
// old slug stops redirecting to the link, on every node.
func (s *Server) deleteAlias(c echo.Context) error {
	t, err := s.linkDomain(c)
	if err != nil {
		return err
	}
	if err := s.links.DeleteAlias(c.Request().Context(), tenantID(c), t.ID, c.Param("slug"), c.Param("alias")); err != nil {
		return err
	}
	return c.NoContent(http.StatusNoContent)
}

func (s *Server) deleteLink(c echo.Context) error {
	t, err := s.linkDomain(c)
	if err != nil {
		return err
	}
	if _, err := s.links.Delete(c.Request().Context(), tenantID(c), t.ID, c.Param("slug")); err != nil {
		return err
	}
	return c.NoContent(http.StatusNoContent)
}

// newLinkService returns the service every link write of the API goes
// through (links.go, bulk.go, import.go), when Config.Links is nil: on
// this Server's cache, passwords and domains, showing writes to
// Config.LinkFeed.
func (s *Server) newLinkService(cfg Config) (*links.Service, error) {
	c := links.Config{Store: cfg.Store, Hasher: s.passwords, Cache: s.cache,
		Publisher:   links.NewFeed(cfg.LinkFeed, cfg.Store, s.addresses.Base, s.logger),
		SelfHostsOf: s.cache.LoopHosts, ShortBase: s.shortBase, BaseOf: s.addresses.Base, Domain: s.domains.ResolveID,
		Targets: cfg.Targets, SchemesOf: cfg.Store.TargetSchemes}
	// A nil interface of web's stays a nil one of links': nobody to tell.
	if cfg.Peers != nil {
		c.Peers = cfg.Peers
	}
	if cfg.Alarms != nil {
		c.Alarms = cfg.Alarms
	}
	if cfg.Threats != nil {
		c.Threats = cfg.Threats
	}
	return links.New(c)
}
