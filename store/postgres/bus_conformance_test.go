package postgres_test

import (
	"testing"
	"time"

	"github.com/linkforge/linkforge/internal/bustest"
	"github.com/linkforge/linkforge/internal/pgtest"
	"github.com/linkforge/linkforge/store/postgres"
)

// busTransport is the conformance suite's PostgreSQL: a fresh database on
// the shared server, or on a private one that an outage can stop.
type busTransport struct {
	db  *postgres.DB
	srv *pgtest.Server // nil on the shared server
}

func newBusTransport(t *testing.T, outage bool) bustest.Transport {
	if !outage {
		return &busTransport{db: mustOpen(t)}
	}
	srv := pgtest.NewServer(t)
	return &busTransport{db: mustOpenURL(t, srv.NewDatabase(t)), srv: srv}
}

func (tr *busTransport) NewNode(t *testing.T, cfg bustest.NodeConfig) bustest.Node {
	return mustBus(t, tr.db, postgres.BusConfig{Node: cfg.Node, Handler: cfg.Handler, Window: cfg.Window,
		MaxPending: cfg.MaxPending, Registerer: cfg.Registerer,
		ReconnectMin: 20 * time.Millisecond, ReconnectMax: 200 * time.Millisecond}, false)
}

func (tr *busTransport) Cut(*testing.T)     { tr.srv.Stop() }
func (tr *busTransport) Restore(*testing.T) { tr.srv.Start() }

func TestBusConformance(t *testing.T) {
	t.Parallel()
	bustest.Run(t, newBusTransport)
}
