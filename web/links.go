package web

import (
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/linkforge/linkforge"
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

// slugAttempts bounds the retries of a generated slug that collides: with
// 62^7 slugs, even one retry is rare.
const slugAttempts = 5

func (s *Server) createLink(c echo.Context) error {
	ctx := c.Request().Context()
	nl, err := decodeCreateLink(c.Request().Body, s.selfHosts)
	if err != nil {
		return err
	}
	l := nl.link
	if nl.password != "" {
		if l.PasswordHash, err = s.hashPassword(ctx, nl.password); err != nil {
			return fmt.Errorf("create link: %w", err)
		}
	}
	l.TenantID = tenantID(c)
	var created linkforge.Link
	if l.Slug != "" {
		created, err = s.store.CreateLink(ctx, l)
		if linkforge.ErrorCode(err) == linkforge.EConflict {
			return &linkforge.Error{
				Code:    linkforge.EConflict,
				Message: fmt.Sprintf("slug %q is already taken", l.Slug),
				Fields:  []linkforge.FieldError{{Field: "slug", Detail: "is already taken"}},
				Err:     err,
			}
		}
	} else {
		for range slugAttempts {
			l.Slug = linkforge.NewSlug()
			created, err = s.store.CreateLink(ctx, l)
			if linkforge.ErrorCode(err) != linkforge.EConflict {
				break
			}
		}
	}
	if err != nil {
		return fmt.Errorf("create link: %w", err)
	}
	// A redirect may have cached the slug as unknown a moment ago, here
	// or on another node.
	s.invalidateEverywhere(created.Slug)
	s.publishLink(linkforge.LinkCreated, created)
	s.rescheduleAlarm(created.ExpiresAt)
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
	if p.setPassword && p.password != "" {
		if p.passwordHash, err = s.hashPassword(c.Request().Context(), p.password); err != nil {
			return fmt.Errorf("update link: %w", err)
		}
	}
	slug := c.Param("slug")
	l, err := s.store.UpdateLink(c.Request().Context(), tenantID(c), slug, func(l *linkforge.Link) error {
		p.apply(l)
		// The merged link, inside the transaction: a partial update can
		// never leave an invalid combination behind.
		return linkforge.ValidateLink(l, s.selfHosts)
	})
	if err != nil {
		return fmt.Errorf("update link: %w", err)
	}
	s.invalidateEverywhere(slug)
	s.publishLink(linkforge.LinkUpdated, l)
	s.rescheduleAlarm(l.ExpiresAt)
	return c.JSON(http.StatusOK, s.linkJSON(l))
}

func (s *Server) deleteLink(c echo.Context) error {
	slug := c.Param("slug")
	// The link's alarm went with it, in the same transaction: nothing to
	// tell the scheduler, whose timer, if armed for it, finds nothing due.
	deleted, err := s.store.DeleteLink(c.Request().Context(), tenantID(c), slug)
	if err != nil {
		return fmt.Errorf("delete link: %w", err)
	}
	s.invalidateEverywhere(slug)
	s.publishLink(linkforge.LinkDeleted, deleted)
	return c.NoContent(http.StatusNoContent)
}
