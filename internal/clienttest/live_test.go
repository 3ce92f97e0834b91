package clienttest_test

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/linkforge/linkforge/client"
	"github.com/linkforge/linkforge/dashboard"
)

// proxy is a TCP relay in front of a server whose connections the test
// can cut, as a network failure or a restarting load balancer would.
type proxy struct {
	ln     net.Listener
	target string
	mu     sync.Mutex
	conns  []net.Conn
	wg     sync.WaitGroup
}

func newProxy(t *testing.T, target string) *proxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &proxy{ln: ln, target: target}
	p.wg.Add(1)
	go p.serve()
	t.Cleanup(func() {
		ln.Close()
		p.cut()
		p.wg.Wait()
	})
	return p
}

func (p *proxy) URL() string { return "http://" + p.ln.Addr().String() }

func (p *proxy) serve() {
	defer p.wg.Done()
	for {
		in, err := p.ln.Accept()
		if err != nil {
			return
		}
		out, err := net.Dial("tcp", p.target)
		if err != nil {
			in.Close()
			continue
		}
		p.mu.Lock()
		p.conns = append(p.conns, in, out)
		p.mu.Unlock()
		p.wg.Add(2)
		go func() { defer p.wg.Done(); io.Copy(out, in); out.Close() }()
		go func() { defer p.wg.Done(); io.Copy(in, out); in.Close() }()
	}
}

// cut closes every relayed connection.
func (p *proxy) cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range p.conns {
		c.Close()
	}
	p.conns = nil
}

// subscription runs Subscribe in the background.
type subscription struct {
	events chan client.LiveEvent
	done   chan error
}

func subscribe(t *testing.T, c *client.Client) (*subscription, context.CancelFunc) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	sub := &subscription{events: make(chan client.LiveEvent, 1024), done: make(chan error, 1)}
	go func() { sub.done <- c.Subscribe(ctx, func(ev client.LiveEvent) { sub.events <- ev }) }()
	t.Cleanup(func() {
		cancel()
		select {
		case <-sub.done: //nolint:errcheck // the subscription ends on the cancel; its error is not the point
		case <-time.After(guard):
			t.Error("Subscribe did not return after its context ended")
		}
	})
	return sub, cancel
}

// next returns the next event, failing t after guard.
func (sub *subscription) next(t *testing.T) client.LiveEvent {
	t.Helper()
	select {
	case ev := <-sub.events:
		return ev
	case err := <-sub.done:
		t.Fatalf("Subscribe returned %v while an event was awaited", err)
	case <-time.After(guard):
		t.Fatal("no live event")
	}
	return client.LiveEvent{}
}

// clicksUntil clicks slug until the feed carries a clicks event of it
// with the total clicked so far (the hub registers a socket shortly after
// the handshake answers, so the first clicks may go unseen), and returns
// that total.
func (s *server) clicksUntil(t *testing.T, sub *subscription, slug string, clicked *int64) {
	t.Helper()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	s.click(slug, "")
	*clicked++
	deadline := time.After(guard)
	for {
		select {
		case ev := <-sub.events:
			if ev.Type == client.LiveClicks && ev.Slug == slug && ev.Total != nil && *ev.Total == *clicked {
				if ev.Count < 1 || ev.Bucket.IsZero() || ev.Bucket.Second() != 0 {
					t.Errorf("clicks event %+v: want a count and a minute bucket", ev)
				}
				return
			}
			if ev.Type == client.LiveConnected {
				t.Fatalf("reconnected while clicking")
			}
		case <-tick.C:
			s.click(slug, "")
			*clicked++
		case err := <-sub.done:
			t.Fatalf("Subscribe returned %v", err)
		case <-deadline:
			t.Fatalf("no clicks event of %s with total %d", slug, *clicked)
		}
	}
}

// TestClientLive: the subscriber gets the tenant's clicks and link
// events, reconnects with backoff when the connection is cut, and stops
// with ErrTokenRevoked when the server closes the feed with 4001; a
// refused token stops it at once.
func TestClientLive(t *testing.T) {
	s := newServer(t, serverOpts{live: true, hub: func(c *dashboard.Config) { c.RevokeCheckInterval = 50 * time.Millisecond }})
	p := newProxy(t, strings.TrimPrefix(s.URL, "http://"))
	var (
		mu    sync.Mutex
		waits []time.Duration
	)
	// Reconnections do not wait: the waits are recorded.
	c, err := client.New(p.URL(), s.Token, client.WithLive(client.LiveOptions{MinBackoff: 100 * time.Millisecond, MaxBackoff: time.Second, StaleAfter: time.Minute}),
		client.WithSleep(func(ctx context.Context, d time.Duration) error {
			mu.Lock()
			defer mu.Unlock()
			waits = append(waits, d)
			return ctx.Err()
		}))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := c.CreateLink(ctx, client.NewLink{URL: "https://example.com/", Slug: "live"}); err != nil {
		t.Fatal(err)
	}
	// A refused token ends Subscribe at once with the 401.
	bad, _ := client.New(s.URL, "lf_nope")
	err = bad.Subscribe(ctx, func(client.LiveEvent) {})
	if e := mustAPIError(t, err, http.StatusUnauthorized, client.CodeUnauthorized); e.Path != "/api/v1/live" {
		t.Errorf("refused: %+v", e)
	}

	sub, _ := subscribe(t, c)
	if ev := sub.next(t); ev.Type != client.LiveConnected {
		t.Fatalf("first event %+v, want connected", ev)
	}
	var clicked int64
	s.clicksUntil(t, sub, "live", &clicked)

	// Link events carry the link.
	if _, err := c.UpdateLink(ctx, "live", client.LinkUpdate{Title: client.Ptr("Live!")}); err != nil {
		t.Fatal(err)
	}
	for {
		ev := sub.next(t)
		if ev.Type == client.LiveLink {
			if ev.Op != "updated" || ev.Slug != "live" || ev.Link == nil || ev.Link.Title == nil || *ev.Link.Title != "Live!" {
				t.Errorf("link event %+v", ev)
			}
			break
		}
	}

	// Cut: the subscriber reconnects, after the first backoff, and the
	// feed carries on.
	p.cut()
	for {
		ev := sub.next(t)
		if ev.Type == client.LiveConnected {
			break
		}
	}
	mu.Lock()
	if len(waits) != 1 || waits[0] < 80*time.Millisecond || waits[0] > 120*time.Millisecond {
		t.Errorf("waits before reconnecting: %v, want one of 100 ms ± 20%%", waits)
	}
	mu.Unlock()
	s.clicksUntil(t, sub, "live", &clicked)

	// Revoked: the server closes with 4001 and the subscriber gives up.
	if err := s.store.RevokeToken(ctx, s.tokenIDs[s.Token]); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-sub.done:
		if !errors.Is(err, client.ErrTokenRevoked) {
			t.Errorf("Subscribe returned %v, want ErrTokenRevoked", err)
		}
		sub.done <- err // for the cleanup
	case <-time.After(guard):
		t.Fatal("Subscribe did not stop after the token was revoked")
	}
}

// TestClientLiveBackoff: while the server cannot serve the feed (503), the
// waits double from MinBackoff up to MaxBackoff.
func TestClientLiveBackoff(t *testing.T) {
	s := newServer(t, serverOpts{}) // no hub: the feed answers 503
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var waits []time.Duration
	c, err := client.New(s.URL, s.Token, client.WithLive(client.LiveOptions{MinBackoff: 100 * time.Millisecond, MaxBackoff: 400 * time.Millisecond}),
		client.WithSleep(func(ctx context.Context, d time.Duration) error {
			waits = append(waits, d)
			if len(waits) == 5 {
				cancel()
			}
			return ctx.Err()
		}))
	if err != nil {
		t.Fatal(err)
	}
	err = c.Subscribe(ctx, func(ev client.LiveEvent) { t.Errorf("event %+v from a server without a feed", ev) })
	if !errors.Is(err, context.Canceled) {
		t.Errorf("Subscribe = %v, want context.Canceled", err)
	}
	want := []time.Duration{100, 200, 400, 400, 400}
	if len(waits) != len(want) {
		t.Fatalf("waits %v, want %d", waits, len(want))
	}
	for i, w := range want {
		w *= time.Millisecond
		if waits[i] < w*8/10 || waits[i] > w*12/10 {
			t.Errorf("wait %d = %v, want %v ± 20%%", i, waits[i], w)
		}
	}

}
