package web

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/linkforge/linkforge"
)

// tagJSON is one element of GET /api/v1/tags.
type tagJSON struct {
	Tag   string `json:"tag"`
	Links int64  `json:"links"`
}

// listTags answers GET /api/v1/tags: every tag of the tenant's links with
// the number of links carrying it, most used first, ties by tag in byte
// order (the order a tag cloud or filter menu wants).
func (s *Server) listTags(c echo.Context) error {
	counts, err := s.store.TagCounts(c.Request().Context(), tenantID(c))
	if err != nil {
		return fmt.Errorf("list tags: %w", err)
	}
	out := make([]tagJSON, len(counts))
	for i, tc := range counts {
		out[i] = tagJSON{Tag: tc.Tag, Links: tc.Links}
	}
	return c.JSON(http.StatusOK, map[string][]tagJSON{"tags": out})
}

// tagParam is the {name} of a tag path, decoded once: echo leaves the
// escapes of a path that needed them (a tag holding "/"), and decodes
// the others.
func tagParam(c echo.Context) (string, error) {
	v := c.Param("name")
	if c.Request().URL.RawPath != "" {
		u, err := url.PathUnescape(v)
		if err != nil {
			return "", linkforge.InvalidField("name", "must be a tag, escaped as a path segment")
		}
		v = u
	}
	return linkforge.NormalizeTag(v), nil
}

// renameTag answers PATCH /api/v1/tags/{name} {"name":"new"}: the tag
// becomes new on every link of the tenant carrying it, merged into new
// where a link has both, in one transaction; 404 when no link carries it.
func (s *Server) renameTag(c echo.Context) error {
	from, err := tagParam(c)
	if err != nil {
		return err
	}
	members, err := readObject(c.Request().Body)
	if err != nil {
		return err
	}
	var (
		fe    fieldErrors
		to    string
		named bool
	)
	for _, m := range members {
		if m.name != "name" {
			fe.add(fieldName(m.name), `unknown field; the only field is "name"`)
			continue
		}
		named = true
		if fe.str(m, &to) {
			to = linkforge.NormalizeTag(to)
			var e *linkforge.Error
			if err := linkforge.ValidateTags([]string{to}); errors.As(err, &e) && len(e.Fields) > 0 {
				fe.add("name", strings.TrimPrefix(e.Fields[0].Detail, "tag 0 "))
			} else if to == from {
				fe.add("name", "is the tag's name already")
			}
		}
	}
	if !named {
		fe.add("name", "is required")
	}
	if err := linkforge.InvalidFields(fe); err != nil {
		return err
	}
	ctx := c.Request().Context()
	if _, err := s.store.RenameTag(ctx, tenantID(c), from, to); err != nil {
		return fmt.Errorf("rename tag: %w", err)
	}
	counts, err := s.store.TagCounts(ctx, tenantID(c))
	if err != nil {
		return fmt.Errorf("rename tag: %w", err)
	}
	out := tagJSON{Tag: to}
	for _, tc := range counts {
		if tc.Tag == to {
			out.Links = tc.Links
		}
	}
	return c.JSON(http.StatusOK, out)
}

// deleteTag answers DELETE /api/v1/tags/{name}: the tag leaves every
// link of the tenant, in one transaction; 404 when no link carries it.
func (s *Server) deleteTag(c echo.Context) error {
	tag, err := tagParam(c)
	if err != nil {
		return err
	}
	if _, err := s.store.DeleteTag(c.Request().Context(), tenantID(c), tag); err != nil {
		return fmt.Errorf("delete tag: %w", err)
	}
	return c.NoContent(http.StatusNoContent)
}
