package web

import (
	"testing"

	"github.com/labstack/echo/v4"

	"github.com/linkforge/linkforge/access"
)

// TestEveryRouteHasARole: package access names every route the router
// registers. An unnamed one would need an owner (closed by default), but a
// new route is to be given its role on purpose, not by that default.
func TestEveryRouteHasARole(t *testing.T) {
	s := mustRoutesServer(t)
	n := 0
	for _, r := range s.echo.Routes() {
		if r.Method == echo.RouteNotFound {
			continue
		}
		n++
		if _, ok := access.Of(r.Method, r.Path); !ok {
			t.Errorf("%s %s has no role in package access's table", r.Method, r.Path)
		}
	}
	if n < 40 {
		t.Errorf("only %d routes", n)
	}
}
