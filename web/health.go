package web

import (
	"net/http"

	"github.com/labstack/echo/v4"
)

// checkLink answers POST /api/v1/links/{slug}/check: the link's targets
// are checked now (package health: HEAD then GET, through the webhooks'
// address policy), the result stored (link.broken when it turns broken)
// and the link returned with its health.
func (s *Server) checkLink(c echo.Context) error {
	l, err := s.addressedLink(c)
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	h := s.health.Check(ctx, &l)
	if l, err = s.store.SetLinkHealth(ctx, l.ID, h); err != nil {
		return err
	}
	return c.JSON(http.StatusOK, s.linkJSON(l))
}
