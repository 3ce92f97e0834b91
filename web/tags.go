package web

import (
	"fmt"
	"net/http"

	"github.com/labstack/echo/v4"
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
