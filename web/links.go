package web

import (
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/links"
)

// linkJSON is the link body of API.md.
type linkJSON struct {
	ID          string     `json:"id"`
	ShortURL    string     `json:"short_url"`
	Slug        string     `json:"slug"`
	URL         string     `json:"url"`
	ExpiresAt   *time.Time `json:"expires_at"`
	MaxClicks   *int64     `json:"max_clicks"`
	FallbackURL *string    `json:"fallback_url"`
	Tags        []string   `json:"tags"`
	CreatedAt   time.Time  `json:"created_at"`
	UpdatedAt   time.Time  `json:"updated_at"`
	ExpiredAt   *time.Time `json:"expired_at"`
	Clicks      int64      `json:"clicks"`

	// The optional fields (API.md, "Links: new fields"). The password is
	// never returned, not even hashed: only whether there is one.
	Title             *string               `json:"title"`
	PasswordProtected bool                  `json:"password_protected"`
	DeviceURLs        *linkforge.DeviceURLs `json:"device_urls"`
	// ImportedClicks is the part of Clicks brought by an import.
	ImportedClicks int64 `json:"imported_clicks"`
}

func (s *Server) linkJSON(l linkforge.Link) linkJSON {
	j := linkJSON{
		ID:        strconv.FormatInt(l.ID, 10),
		ShortURL:  s.shortBase + "/" + l.Slug,
		Slug:      l.Slug,
		URL:       l.URL,
		ExpiresAt: utcPtr(l.ExpiresAt),
		MaxClicks: l.MaxClicks,
		Tags:      l.Tags,
		CreatedAt: l.CreatedAt.UTC(),
		UpdatedAt: l.UpdatedAt.UTC(),
		ExpiredAt: utcPtr(l.ExpiredAt),
		Clicks:    l.Clicks,

		PasswordProtected: l.PasswordHash != "",
		ImportedClicks:    l.ImportedClicks,
	}
	if l.FallbackURL != "" {
		j.FallbackURL = &l.FallbackURL
	}
	// Absent optional values are null, as fallback_url is.
	if l.Title != "" {
		j.Title = &l.Title
	}
	if !l.DeviceURLs.IsZero() {
		j.DeviceURLs = &l.DeviceURLs
	}
	if j.Tags == nil {
		j.Tags = []string{}
	}
	return j
}

func utcPtr(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	u := t.UTC()
	return &u
}

func (s *Server) createLink(c echo.Context) error {
	nl, err := decodeCreateLink(c.Request().Body, s.selfHosts)
	if err != nil {
		return err
	}
	nl.link.TenantID = tenantID(c)
	created, err := s.links.Create(c.Request().Context(), links.NewLink{Link: nl.link, Password: nl.password})
	if err != nil {
		return err
	}
	c.Response().Header().Set(echo.HeaderLocation, pathLinks+"/"+created.Slug)
	return c.JSON(http.StatusCreated, s.linkJSON(created))
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
	l, err := s.store.TenantLink(c.Request().Context(), tenantID(c), c.Param("slug"))
	if err != nil {
		return fmt.Errorf("get link: %w", err)
	}
	return c.JSON(http.StatusOK, s.linkJSON(l))
}

func (s *Server) patchLink(c echo.Context) error {
	p, err := decodePatchLink(c.Request().Body)
	if err != nil {
		return err
	}
	l, err := s.links.Update(c.Request().Context(), tenantID(c), c.Param("slug"),
		links.Patch{Apply: p.apply, SetPassword: p.setPassword, Password: p.password})
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, s.linkJSON(l))
}

func (s *Server) deleteLink(c echo.Context) error {
	if _, err := s.links.Delete(c.Request().Context(), tenantID(c), c.Param("slug")); err != nil {
		return err
	}
	return c.NoContent(http.StatusNoContent)
}
