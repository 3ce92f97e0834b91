package web

import (
	"context"
	"embed"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/linkforge/linkforge"
)

// openAPIDoc is the OpenAPI 3.1 description of every route, kept in the
// repository next to the code it describes; a test checks the two agree.
//
//go:embed openapi.json
var openAPIDoc []byte

//go:embed assets
var assets embed.FS

// readyTimeout bounds the readiness probe's ping: a load balancer must learn
// quickly that the database is gone.
const readyTimeout = 2 * time.Second

// healthz answers 200 as long as the process serves HTTP.
func (s *Server) healthz(c echo.Context) error {
	return c.String(http.StatusOK, "ok\n")
}

// readyz answers 200 while the database answers a ping, 503 otherwise.
func (s *Server) readyz(c echo.Context) error {
	ctx, cancel := context.WithTimeout(c.Request().Context(), readyTimeout)
	defer cancel()
	if err := s.store.Ping(ctx); err != nil {
		s.logger.Warn("readiness check failed", "error", err)
		return &linkforge.Error{Code: linkforge.EUnavailable, Message: "the database is unreachable", Err: err}
	}
	return c.String(http.StatusOK, "ready\n")
}

func (s *Server) openAPI(c echo.Context) error {
	return blob(c, echo.MIMEApplicationJSON, openAPIDoc)
}
