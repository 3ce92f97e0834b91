package natstest

import (
	"errors"
	"io"
	"net"
	"sync"
	"testing"
)

// Proxy forwards loopback TCP connections to a Server and can freeze them:
// bytes stop flowing both ways while every connection stays open, as on a
// network that drops packets silently. Nothing then tells a client that
// its connection is dead; only its own liveness checks can.
type Proxy struct {
	ln     net.Listener
	target string

	mu     sync.Mutex
	cond   *sync.Cond // signalled when frozen or closed changes
	frozen bool
	closed bool
	conns  []net.Conn
	wg     sync.WaitGroup
}

// NewProxy starts a proxy to s for t, closed when t ends.
func (s *Server) NewProxy(t testing.TB) *Proxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("natstest: proxy: %v", err)
	}
	p := &Proxy{ln: ln, target: s.URL()[len("nats://"):]}
	p.cond = sync.NewCond(&p.mu)
	p.wg.Add(1)
	go p.accept()
	t.Cleanup(p.close)
	return p
}

// URL is the proxy's nats:// URL.
func (p *Proxy) URL() string { return "nats://" + p.ln.Addr().String() }

// Freeze holds every byte, of open connections and new ones, until Thaw.
func (p *Proxy) Freeze() { p.set(func() { p.frozen = true }) }

// Thaw lets the held bytes and the next ones through.
func (p *Proxy) Thaw() { p.set(func() { p.frozen = false }) }

func (p *Proxy) set(f func()) {
	p.mu.Lock()
	f()
	p.mu.Unlock()
	p.cond.Broadcast()
}

func (p *Proxy) accept() {
	defer p.wg.Done()
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		up, err := net.Dial("tcp", p.target)
		if err != nil {
			c.Close()
			continue
		}
		p.mu.Lock()
		if p.closed {
			p.mu.Unlock()
			c.Close()
			up.Close()
			return
		}
		p.conns = append(p.conns, c, up)
		p.wg.Add(2)
		p.mu.Unlock()
		go p.pipe(up, c)
		go p.pipe(c, up)
	}
}

// pipe copies src to dst, holding each read while frozen.
func (p *Proxy) pipe(dst, src net.Conn) {
	defer p.wg.Done()
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		p.mu.Lock()
		for p.frozen && !p.closed {
			p.cond.Wait()
		}
		closed := p.closed
		p.mu.Unlock()
		if closed {
			return
		}
		if n > 0 {
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			if !errors.Is(err, io.EOF) {
				src.Close()
			}
			dst.Close()
			return
		}
	}
}

func (p *Proxy) close() {
	p.ln.Close()
	p.mu.Lock()
	p.closed = true
	for _, c := range p.conns {
		c.Close()
	}
	p.mu.Unlock()
	p.cond.Broadcast()
	p.wg.Wait()
}
