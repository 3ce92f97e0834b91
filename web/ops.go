package web

import (
	"context"
	"embed"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/linkforge/linkforge/linkcache"
)

// openAPIDoc is the OpenAPI 3.1 description of every route, kept in the
// repository next to the code it describes; a test checks the two agree.
//
//go:embed openapi.json
var openAPIDoc []byte

//go:embed assets
var assets embed.FS

// readyTimeout bounds each check of the readiness probe: a load balancer
// must get its answer quickly.
const readyTimeout = 2 * time.Second

// ReadinessChecker tells whether clicks can be counted now
// (*linkcounter.Counter: running, its journal writable). /readyz fails when
// they cannot.
type ReadinessChecker interface {
	Ready(ctx context.Context) error
}

// readyState is what /readyz reports besides the database, and the
// domains' tls field (domains.go).
type readyState struct {
	journal ReadinessChecker // nil: /readyz reports no journal
	// tls is the certificates' state; nil: none (--tls off). tlsHost is
	// Config.TLSHostState; nil: every host's is off.
	tls     func() TLSReadiness
	tlsHost func(host string) string
	// bus is the cluster bus's health; nil: a single node.
	bus linkcache.PeerHealth
	// dbDown is the database's state as /readyz last saw it.
	dbDown atomic.Bool
}

// readiness is the body of /readyz.
type readiness struct {
	Status   string `json:"status"`   // ready or unavailable
	Journal  string `json:"journal"`  // ok, unwritable, or none (clicks are not counted)
	Database string `json:"database"` // ok or unavailable
	// Bus is whether this node hears the other nodes (Config.PeerHealth):
	// ok or unavailable; absent on a single node.
	Bus string `json:"bus,omitempty"`
	// TLS is shown with --tls auto or manual. It does not fail the
	// probe: a node whose certificate is still being obtained serves
	// HTTP, and the others serve HTTPS meanwhile.
	TLS *TLSReadiness `json:"tls,omitempty"`
}

// TLSReadiness is the certificates' state on this node.
type TLSReadiness struct {
	Mode       string `json:"mode"`        // auto or manual
	PublicHost string `json:"public_host"` // the public URL's host: pending, ready, failed or off
	Ready      int    `json:"ready"`       // hosts with a certificate valid now
	Pending    int    `json:"pending"`     // hosts whose certificate is being obtained
	Failed     int    `json:"failed"`      // hosts whose last attempt failed, without a valid certificate
}

// healthz answers 200 as long as the process serves HTTP.
func (s *Server) healthz(c echo.Context) error {
	return c.String(http.StatusOK, "ok\n")
}

// readyz answers 200 while this node can answer redirects and count clicks:
// its click journal takes writes. The database's state (and on a cluster
// the bus's) is reported in the body but does not fail it: the cached links keep redirecting through a
// database outage (stale-if-error) and their clicks wait in the journal, and
// failing every node's probe at once would take the whole cluster out of the
// load balancer. The causes are logged, not shown.
func (s *Server) readyz(c echo.Context) error {
	ctx, cancel := context.WithTimeout(c.Request().Context(), readyTimeout)
	defer cancel()
	body := readiness{Status: "ready", Journal: "none", Database: "ok"}
	status := http.StatusOK
	if s.ready.journal != nil {
		body.Journal = "ok"
		if err := s.ready.journal.Ready(ctx); err != nil {
			s.logger.Warn("readiness check failed: clicks cannot be counted", "error", err)
			body.Status, body.Journal, status = "unavailable", "unwritable", http.StatusServiceUnavailable
		}
	}
	if s.ready.tls != nil {
		t := s.ready.tls()
		body.TLS = &t
	}
	err := s.store.Ping(ctx)
	if err != nil {
		body.Database = "unavailable"
	}
	// Logged when the state changes, not on every probe of an outage.
	if down := err != nil; s.ready.dbDown.Swap(down) != down {
		if down {
			s.logger.Warn("database unreachable; serving cached links", "error", err)
		} else {
			s.logger.Info("database reachable again")
		}
	}
	// Reported, not failed on: the bus is best effort (its outage only
	// shortens the link cache's TTLs), and failing every node's probe at
	// once would take the whole cluster out of the load balancer.
	if s.ready.bus != nil {
		body.Bus = "ok"
		if !s.ready.bus.Healthy() {
			body.Bus = "unavailable"
		}
	}
	c.Response().Header().Set(echo.HeaderCacheControl, "no-store")
	return c.JSON(status, body)
}

func (s *Server) openAPI(c echo.Context) error {
	return blob(c, echo.MIMEApplicationJSON, openAPIDoc)
}
