// Package natstest gives tests a real NATS server, embedded in the test
// process (github.com/nats-io/nats-server/v2) on a loopback port of its
// own, that a test can stop and start again on the same port to cut the
// cluster bus.
package natstest

import (
	"fmt"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
)

// readyWait bounds a server's start.
const readyWait = 10 * time.Second

// Server is one embedded NATS server.
type Server struct {
	mu   sync.Mutex
	port int
	srv  *server.Server // nil while stopped
	// configure adjusts the options of each start (authentication,
	// TLS); nil: none.
	configure func(*server.Options)
}

// New starts a server for t, shut down when t ends.
func New(t testing.TB) *Server { return NewWith(t, nil) }

// NewWith is New with configure applied to the server's options before
// each start: a server that requires credentials or TLS. The host and
// port are New's.
func NewWith(t testing.TB, configure func(*server.Options)) *Server {
	t.Helper()
	s := &Server{port: -1, configure: configure}
	if err := s.start(); err != nil {
		t.Fatalf("natstest: %v", err)
	}
	t.Cleanup(s.Stop)
	return s
}

// URL is the server's nats:// URL; it stays the same across Stop and
// Start.
func (s *Server) URL() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return fmt.Sprintf("nats://127.0.0.1:%d", s.port)
}

// Stop shuts the server down: its clients are disconnected and new
// connections refused. Stopping a stopped server does nothing.
func (s *Server) Stop() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.srv == nil {
		return
	}
	s.srv.Shutdown()
	s.srv.WaitForShutdown()
	s.srv = nil
}

// Start starts a stopped server again, on the same port.
func (s *Server) Start(t testing.TB) {
	t.Helper()
	if err := s.start(); err != nil {
		t.Fatalf("natstest: restart: %v", err)
	}
}

func (s *Server) start() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.srv != nil {
		return nil
	}
	opts := &server.Options{Host: "127.0.0.1", Port: s.port, NoLog: true, NoSigs: true}
	if s.configure != nil {
		s.configure(opts)
	}
	srv, err := server.NewServer(opts)
	if err != nil {
		return fmt.Errorf("new server: %w", err)
	}
	go srv.Start()
	if !srv.ReadyForConnections(readyWait) {
		srv.Shutdown()
		return fmt.Errorf("server on port %d not ready within %s", s.port, readyWait)
	}
	s.srv = srv
	if s.port == -1 {
		addr, ok := srv.Addr().(*net.TCPAddr)
		if !ok {
			srv.Shutdown()
			return fmt.Errorf("server address %v is not TCP", srv.Addr())
		}
		s.port = addr.Port
	}
	return nil
}
