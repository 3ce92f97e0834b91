package dashboard

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"go.uber.org/goleak"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/internal/testenv"
)

// TestMessages: the feed's two messages, byte for byte as operation liveFeed of
// web/openapi.json writes them, reach the tenant's clients and nobody else's.
func TestMessages(t *testing.T) {
	bucket := time.Date(2026, 11, 30, 8, 1, 0, 0, time.UTC)
	expiresAt := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	alarmRan := expiresAt.Add(3 * time.Second)
	tests := []struct {
		name string
		send func(h *Hub)
		want string
	}{
		{
			name: "clicks",
			send: func(h *Hub) {
				h.ClicksChanged(linkforge.BucketCount{TenantID: 1, LinkID: 9, Slug: "abc1234", Bucket: bucket,
					Count: 42, Total: 1234, TotalKnown: true})
			},
			want: `{"type":"clicks","link":"abc1234","bucket":"2026-11-30T08:01:00Z","count":42,"total":1234}`,
		},
		{
			name: "clicks with their human part",
			send: func(h *Hub) {
				h.ClicksChanged(linkforge.BucketCount{TenantID: 1, LinkID: 9, Slug: "abc1234", Bucket: bucket,
					Count: 42, Human: 40, HumanKnown: true, Total: 1234, TotalKnown: true})
			},
			want: `{"type":"clicks","link":"abc1234","bucket":"2026-11-30T08:01:00Z","count":42,"human":40,"total":1234}`,
		},
		{
			name: "clicks all automated",
			send: func(h *Hub) {
				h.ClicksChanged(linkforge.BucketCount{TenantID: 1, LinkID: 9, Slug: "abc1234", Bucket: bucket,
					Count: 2, HumanKnown: true})
			},
			want: `{"type":"clicks","link":"abc1234","bucket":"2026-11-30T08:01:00Z","count":2,"human":0}`,
		},
		{
			name: "clicks with the total unknown",
			send: func(h *Hub) {
				h.ClicksChanged(linkforge.BucketCount{TenantID: 1, LinkID: 9, Slug: "abc1234", Bucket: bucket, Count: 3})
			},
			want: `{"type":"clicks","link":"abc1234","bucket":"2026-11-30T08:01:00Z","count":3}`,
		},
		{
			name: "clicks with a bucket in another zone",
			send: func(h *Hub) {
				h.ClicksChanged(linkforge.BucketCount{TenantID: 1, Slug: "x", Bucket: bucket.In(time.FixedZone("CET", 3600)),
					Count: 1, Total: 1, TotalKnown: true})
			},
			want: `{"type":"clicks","link":"x","bucket":"2026-11-30T08:01:00Z","count":1,"total":1}`,
		},
		{
			name: "expired",
			send: func(h *Hub) {
				if err := h.Expired(context.Background(), linkforge.Link{TenantID: 1, Slug: "abc1234",
					ExpiresAt: &expiresAt, ExpiredAt: &alarmRan}); err != nil {
					t.Errorf("Expired: %v", err)
				}
			},
			want: `{"type":"expired","link":"abc1234","at":"2026-12-01T00:00:00Z"}`,
		},
		{
			name: "expired without expires_at",
			send: func(h *Hub) {
				h.Expired(context.Background(), linkforge.Link{TenantID: 1, Slug: "s", ExpiredAt: &alarmRan}) //nolint:errcheck // the feed the call makes is what is asserted
			},
			want: `{"type":"expired","link":"s","at":"2026-12-01T00:00:03Z"}`,
		},
		{
			name: "link updated",
			send: func(h *Hub) {
				h.LinkChanged(1, linkforge.LinkUpdated, []byte(`{"id":"7","slug":"abc1234","url":"https://example.com/?a=1&b=<2>"}`))
			},
			want: `{"type":"link","op":"updated","link":{"id":"7","slug":"abc1234","url":"https://example.com/?a=1\u0026b=\u003c2\u003e"}}`,
		},
		{
			name: "link deleted",
			send: func(h *Hub) {
				h.LinkChanged(1, linkforge.LinkDeleted, []byte(`{"id":"7", "slug":"abc1234"}`+"\n"))
			},
			want: `{"type":"link","op":"deleted","link":{"id":"7","slug":"abc1234"}}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			th := mustHub(t)
			mine := []*websocket.Conn{th.mustDial(t, 1), th.mustDial(t, 1)}
			other := th.mustDial(t, 2)
			th.waitRegistered(t, 3)

			tt.send(th.Hub)
			for i, c := range mine {
				c.SetReadDeadline(time.Now().Add(waitGuard))
				_, got, err := c.ReadMessage()
				if err != nil {
					t.Fatalf("client %d: %v", i, err)
				}
				if string(got) != tt.want {
					t.Errorf("client %d got %s\nwant %s", i, got, tt.want)
				}
			}
			// Tenant 2's first message is its own: tenant 1's never
			// reached it.
			th.ClicksChanged(linkforge.BucketCount{TenantID: 2, Slug: "theirs", Bucket: bucket, Count: 1})
			var m ClicksMessage
			mustReadJSON(t, other, &m)
			if m.Link != "theirs" {
				t.Errorf("tenant 2 received %+v, want only its own link", m)
			}
		})
	}
}

// TestNoViewersCostsNothing: an event of a tenant nobody watches allocates
// nothing and creates no dashboard.
func TestNoViewersCostsNothing(t *testing.T) {
	th := mustHub(t)
	th.mustDial(t, 1)
	th.waitRegistered(t, 1)
	d := linkforge.BucketCount{TenantID: 2, Slug: "abc", Bucket: time.Now(), Count: 1, Total: 1, TotalKnown: true}
	if allocs := testing.AllocsPerRun(1000, func() { th.ClicksChanged(d) }); allocs != 0 {
		t.Errorf("ClicksChanged for a tenant without viewers: %v allocations, want 0", allocs)
	}
	l := linkforge.Link{TenantID: 2, Slug: "abc"}
	if allocs := testing.AllocsPerRun(1000, func() { th.Expired(context.Background(), l) }); allocs != 0 { //nolint:errcheck // only its allocations are measured
		t.Errorf("Expired for a tenant without viewers: %v allocations, want 0", allocs)
	}
	link := []byte(`{"slug":"abc"}`)
	if allocs := testing.AllocsPerRun(1000, func() { th.LinkChanged(2, linkforge.LinkCreated, link) }); allocs != 0 {
		t.Errorf("LinkChanged for a tenant without viewers: %v allocations, want 0", allocs)
	}
	if th.Watched(2) || !th.Watched(1) {
		t.Errorf("Watched(2) = %v, Watched(1) = %v; want false, true", th.Watched(2), th.Watched(1))
	}
	if n := th.tenantCount(); n != 1 {
		t.Errorf("%d dashboards, want 1 (tenant 1's only)", n)
	}
}

// TestLinkMessageRefusesBadInput: a link message with an unknown op, or
// whose link is not one JSON value, is a caller's bug: it is dropped,
// rather than sent to break the clients' parsers, and the feed goes on.
func TestLinkMessageRefusesBadInput(t *testing.T) {
	th := mustHub(t)
	c := th.mustDial(t, 1)
	th.waitRegistered(t, 1)
	th.LinkChanged(1, linkforge.LinkOp("renamed"), []byte(`{"slug":"a"}`))
	th.LinkChanged(1, linkforge.LinkCreated, []byte(`{"slug":"a"`))
	th.LinkChanged(1, linkforge.LinkCreated, []byte(`{"slug":"a"} {"slug":"b"}`))
	th.LinkChanged(1, linkforge.LinkCreated, []byte(`{"slug":"ok"}`))
	var m LinkMessage
	mustReadJSON(t, c, &m)
	if m.Type != TypeLink || m.Op != "created" || string(m.Link) != `{"slug":"ok"}` {
		t.Errorf("first message %+v (link %s), want the valid one", m, m.Link)
	}
}

// TestFanOut: 1,000 clients of one tenant, over real connections, each
// receive a click's update; clients of another tenant receive nothing of
// it. The counter is the real one, so the delay includes its live
// coalescing interval (250 ms).
//
// The bounds are generous, about ten times a healthy run's under -race on a
// loaded machine (click -> update max ~0.4 s, of which the hub's fan-out
// ~0.1 s), so that only a defect crosses them: every viewer within 2 s of
// the click, and within fanOutBound of the delta reaching the hub (a 1.5 s
// stall before each broadcast would pass the first bound alone). The
// precise figures are logged here and measured by `linkforge-bench fanout`.
func TestFanOut(t *testing.T) {
	const clickBound, fanOutBound = 2 * time.Second, time.Second
	const viewers, others = 1000, 20
	raiseFileLimit(t, 2*(viewers+others)+256)
	th := mustHub(t)
	st := mustStore(t)
	linkA, linkB := mustLink(t, st, "acme"), mustLink(t, st, "globex")
	stamp := &stampingSubscriber{Hub: th.Hub}
	counter := mustCounter(t, st, stamp)

	conns := mustDialMany(t, th, linkA.TenantID, viewers)
	otherConns := mustDialMany(t, th, linkB.TenantID, others)
	th.waitRegistered(t, viewers+others)
	if g := th.clientsGauge(); g != viewers+others {
		t.Fatalf("linkforge_dashboard_clients = %v, want %d", g, viewers+others)
	}

	type receipt struct {
		at  time.Time
		msg ClicksMessage
		err error
	}
	got := make([]receipt, viewers)
	var readers sync.WaitGroup
	for i, c := range conns {
		readers.Add(1)
		go func() {
			defer readers.Done()
			c.SetReadDeadline(time.Now().Add(waitGuard))
			_, data, err := c.ReadMessage()
			got[i].at = time.Now()
			if err == nil {
				err = json.Unmarshal(data, &got[i].msg)
			}
			got[i].err = err
		}()
	}

	clickAt := time.Now()
	if err := counter.Record(context.Background(), &linkA, clickAt, nil); err != nil {
		t.Fatalf("record click: %v", err)
	}
	readers.Wait()

	latencies := make([]time.Duration, 0, viewers)
	want := ClicksMessage{Type: TypeClicks, Link: linkA.Slug, Bucket: clickAt.UTC().Truncate(time.Minute).Format(time.RFC3339), Count: 1}
	for i, r := range got {
		if r.err != nil {
			t.Fatalf("client %d: %v", i, r.err)
		}
		m := r.msg
		if m.Type != want.Type || m.Link != want.Link || m.Bucket != want.Bucket || m.Count != want.Count ||
			m.Total == nil || *m.Total != 1 {
			t.Fatalf("client %d got %+v (total %v), want %+v with total 1", i, m, m.Total, want)
		}
		latencies = append(latencies, r.at.Sub(clickAt))
	}
	p := percentiles(latencies, 50, 99, 100)
	within := 0
	fanOut := make([]time.Duration, 0, viewers)
	handed := stamp.first()
	for i, l := range latencies {
		if l <= time.Second {
			within++
		}
		fanOut = append(fanOut, got[i].at.Sub(handed))
	}
	f := percentiles(fanOut, 50, 99, 100)
	ms := func(d time.Duration) time.Duration { return d.Round(time.Millisecond) }
	t.Logf("click -> update at %d clients: p50 %v, p99 %v, max %v; %d/%d within 1 s", viewers, ms(p[0]), ms(p[1]), ms(p[2]), within, viewers)
	t.Logf("of which the hub's fan-out (delta handed over -> received): p50 %v, p99 %v, max %v; the rest is the counter's journal commit and 250 ms live coalescing",
		ms(f[0]), ms(f[1]), ms(f[2]))
	if p[2] > clickBound {
		t.Errorf("the slowest of %d viewers got the update %v after the click, want within %v", viewers, ms(p[2]), clickBound)
	}
	if f[2] > fanOutBound {
		t.Errorf("the slowest of %d viewers got the update %v after the hub did, want within %v", viewers, ms(f[2]), fanOutBound)
	}

	// Tenant B: its first message is its own click; A's never reached it.
	if err := counter.Record(context.Background(), &linkB, time.Now(), nil); err != nil {
		t.Fatalf("record click: %v", err)
	}
	for i, c := range otherConns {
		var m ClicksMessage
		mustReadJSON(t, c, &m)
		if m.Link != linkB.Slug {
			t.Fatalf("tenant B client %d received %+v, want only %s", i, m, linkB.Slug)
		}
	}

	for _, c := range append(conns, otherConns...) {
		c.Close()
	}
	th.waitLeft(t, viewers+others)
	if g := th.clientsGauge(); g != 0 {
		t.Errorf("linkforge_dashboard_clients = %v after every client left, want 0", g)
	}
	if n := th.tenantCount(); n != 0 {
		t.Errorf("%d dashboards after every client left, want 0", n)
	}
}

// TestSlowClientDropped: a client that never reads fills its queue and is
// disconnected (metric, closed connection), while a reading client of the
// same tenant receives every message, in order, and stays.
func TestSlowClientDropped(t *testing.T) {
	// The reader is sent a quarter of a queue at a time and read before
	// more come, so only a writer stuck for several rounds (on a client
	// that does not read) can overflow.
	const queue, batch = 64, 16
	th := mustHub(t, withQueueSize(queue))
	reader := th.mustDial(t, 1)
	slow := mustDialTinyBuffer(t, th, 1) // never read until the end
	th.waitRegistered(t, 2)

	bucket := time.Date(2026, 11, 30, 8, 1, 0, 0, time.UTC)
	// Long slugs fill the slow client's buffers sooner.
	slug := strings.Repeat("s", 64)
	count := int64(0)
	const maxMessages = 500_000
	for th.dropped(reasonSlow) == 0 {
		if count >= maxMessages {
			t.Fatalf("no client dropped after %d messages", count)
		}
		first := count + 1
		for range batch {
			count++
			th.ClicksChanged(linkforge.BucketCount{TenantID: 1, Slug: slug, Bucket: bucket, Count: count, Total: count, TotalKnown: true})
		}
		for want := first; want <= count; want++ {
			var m ClicksMessage
			mustReadJSON(t, reader, &m)
			if m.Count != want {
				t.Fatalf("reading client got count %d, want %d: a message was lost or reordered", m.Count, want)
			}
		}
	}
	t.Logf("the client that never reads was dropped after %d messages (queue %d)", count, queue)

	if g := th.clientsGauge(); g != 1 {
		t.Errorf("linkforge_dashboard_clients = %v after the drop, want 1", g)
	}
	mustClosed(t, slow)

	// The reading client is still served.
	th.ClicksChanged(linkforge.BucketCount{TenantID: 1, Slug: "after", Bucket: bucket, Count: 1})
	var m ClicksMessage
	mustReadJSON(t, reader, &m)
	if m.Link != "after" {
		t.Errorf("after the drop the reader got %+v", m)
	}
	if d := th.dropped(reasonSlow); d != 1 {
		t.Errorf("dropped{reason=slow} = %v, want 1", d)
	}
	if d := th.dropped(reasonStale); d != 0 {
		t.Errorf("dropped{reason=stale} = %v, want 0", d)
	}
}

// TestBurst: one live interval of a tenant with thousands of busy links
// reaches the hub as one burst of deltas; clients that read receive all of
// it, in order, and none is taken for slow.
func TestBurst(t *testing.T) {
	const links = 3000
	th := mustHub(t)
	conns := []*websocket.Conn{th.mustDial(t, 1), th.mustDial(t, 1)}
	th.waitRegistered(t, 2)
	bucket := time.Date(2026, 11, 30, 8, 1, 0, 0, time.UTC)
	for i := range links {
		th.ClicksChanged(linkforge.BucketCount{TenantID: 1, Slug: "link-" + strconv.Itoa(i), Bucket: bucket, Count: 1, Total: int64(i), TotalKnown: true})
	}
	for ci, c := range conns {
		for i := range links {
			var m ClicksMessage
			mustReadJSON(t, c, &m)
			if want := "link-" + strconv.Itoa(i); m.Link != want {
				t.Fatalf("client %d, message %d: link %q, want %q", ci, i, m.Link, want)
			}
		}
	}
	if d := th.dropped(reasonSlow); d != 0 {
		t.Errorf("dropped{reason=slow} = %v after a burst, want 0", d)
	}
}

// TestPruneClosesSilentClients: at the prune alarm, a client that has not
// answered a ping within the window is closed; one that answers stays, and
// the alarm re-arms for it. Virtual time: the 54 s ping and the 60 s alarm
// take no wall time.
func TestPruneClosesSilentClients(t *testing.T) {
	th := mustHub(t, withFakeClock())
	alive := th.mustDial(t, 1)
	silent := th.mustDial(t, 1)
	// gorilla answers pings while the application reads; a no-op handler
	// makes a client that reads but never answers.
	silent.SetPingHandler(func(string) error { return nil })
	th.waitRegistered(t, 2)
	aliveDone, silentDone := readUntilClosed(alive), readUntilClosed(silent)

	if n := th.clock.alarms(); n != 1 {
		t.Fatalf("%d alarms armed with two clients, want 1 (one per dashboard)", n)
	}
	th.clock.Advance(DefaultPongWait * 9 / 10) // the ping period: both are pinged
	th.waitPongs(t, 1)                         // the alive client's pong
	th.clock.Advance(DefaultPruneInterval - DefaultPongWait*9/10)

	if err := waitErr(t, silentDone); err == nil {
		t.Fatal("the silent client's connection is still open after the prune alarm")
	}
	if d := th.dropped(reasonStale); d != 1 {
		t.Errorf("dropped{reason=stale} = %v, want 1", d)
	}
	if g := th.clientsGauge(); g != 1 {
		t.Errorf("linkforge_dashboard_clients = %v, want 1", g)
	}
	if n := th.clock.alarms(); n != 1 {
		t.Errorf("%d alarms after the prune with a client left, want 1 (re-armed)", n)
	}
	select {
	case err := <-aliveDone:
		t.Fatalf("the client that answers pings was closed: %v", err)
	default:
	}

	// The next rounds keep the answering client.
	for round := 2; round <= 3; round++ {
		th.clock.Advance(DefaultPongWait * 9 / 10)
		th.waitPongs(t, round)
		th.clock.Advance(DefaultPruneInterval - DefaultPongWait*9/10)
	}
	if d := th.dropped(reasonStale); d != 1 {
		t.Errorf("dropped{reason=stale} = %v after more rounds, want still 1", d)
	}
	th.ClicksChanged(linkforge.BucketCount{TenantID: 1, Slug: "still-here", Count: 1})
	select {
	case err := <-aliveDone:
		t.Fatalf("the client that answers pings was closed: %v", err)
	default:
	}
}

// TestPruneNotRearmedWithoutClients: when the prune alarm closes the last
// client, the dashboard is gone and holds no alarm; time passing does
// nothing more.
func TestPruneNotRearmedWithoutClients(t *testing.T) {
	th := mustHub(t, withFakeClock())
	silent := th.mustDial(t, 7)
	silent.SetPingHandler(func(string) error { return nil })
	th.waitRegistered(t, 1)
	done := readUntilClosed(silent)

	th.clock.Advance(DefaultPruneInterval)
	if err := waitErr(t, done); err == nil {
		t.Fatal("the silent client's connection is still open after the prune alarm")
	}
	if n := th.clock.alarms(); n != 0 {
		t.Errorf("%d alarms armed with no client left, want 0", n)
	}
	if n := th.tenantCount(); n != 0 {
		t.Errorf("%d dashboards with no client left, want 0", n)
	}
	th.clock.Advance(time.Hour)
	if d := th.dropped(reasonStale); d != 1 {
		t.Errorf("dropped{reason=stale} = %v, want 1", d)
	}
	th.waitLeft(t, 1)
}

// TestLastClientLeaving: a dashboard's alarm and the dashboard itself go
// with its last client; a new viewer creates them again; once every client
// has gone, no goroutine of theirs is left.
func TestLastClientLeaving(t *testing.T) {
	th := mustHub(t, withFakeClock())
	before := goleak.IgnoreCurrent()

	var conns []*websocket.Conn
	for i := range 10 {
		conns = append(conns, th.mustDial(t, int64(1+i%2)))
	}
	th.waitRegistered(t, 10)
	if n, a := th.tenantCount(), th.clock.alarms(); n != 2 || a != 2 {
		t.Fatalf("%d dashboards and %d alarms, want 2 and 2", n, a)
	}
	for _, c := range conns {
		c.Close()
	}
	th.waitLeft(t, 10)
	if n, a := th.tenantCount(), th.clock.alarms(); n != 0 || a != 0 {
		t.Errorf("%d dashboards and %d alarms after every client left, want 0 and 0", n, a)
	}
	if err := goleak.Find(before); err != nil {
		t.Errorf("goroutines left after every client left: %v", err)
	}

	again := th.mustDial(t, 1)
	th.waitRegistered(t, 11)
	if n, a := th.tenantCount(), th.clock.alarms(); n != 1 || a != 1 {
		t.Errorf("%d dashboards and %d alarms for a new viewer, want 1 and 1", n, a)
	}
	again.Close()
	th.waitLeft(t, 11)
}

// TestStop: Stop says goodbye to every client (close 1001), counts every
// message written, refuses new clients with 503, and is safe twice.
func TestStop(t *testing.T) {
	th := mustHub(t)
	conns := []*websocket.Conn{th.mustDial(t, 1), th.mustDial(t, 1), th.mustDial(t, 2)}
	th.waitRegistered(t, 3)
	th.ClicksChanged(linkforge.BucketCount{TenantID: 1, Slug: "a", Count: 1})
	th.ClicksChanged(linkforge.BucketCount{TenantID: 2, Slug: "b", Count: 1})
	for _, c := range conns {
		var m ClicksMessage
		mustReadJSON(t, c, &m)
	}

	mustStopHub(t, th.Hub)
	for i, c := range conns {
		c.SetReadDeadline(time.Now().Add(waitGuard))
		_, _, err := c.ReadMessage()
		if !websocket.IsCloseError(err, websocket.CloseGoingAway) {
			t.Errorf("client %d after Stop: %v, want close 1001 (going away)", i, err)
		}
	}
	if g := th.clientsGauge(); g != 0 {
		t.Errorf("linkforge_dashboard_clients = %v after Stop, want 0", g)
	}
	if s := th.sentTotal(); s != 3 {
		t.Errorf("linkforge_dashboard_messages_sent_total = %v, want 3", s)
	}
	mustStopHub(t, th.Hub) // twice

	_, err := th.dial(1)
	if !errors.Is(err, websocket.ErrBadHandshake) {
		t.Errorf("dial after Stop: %v, want a refused handshake", err)
	}
	w := &statusRecorder{header: http.Header{}}
	r, _ := http.NewRequest("GET", "/", nil)
	if err := th.ServeLive(w, r, 1, 0); linkforge.ErrorCode(err) != linkforge.EUnavailable || w.status != 0 {
		t.Errorf("ServeLive after Stop = %v (wrote %d), want EUnavailable with nothing written", err, w.status)
	}
}

// TestStopNeverStarted: Stop works on a Hub that never started.
func TestStopNeverStarted(t *testing.T) {
	h, err := New(Config{})
	if err != nil {
		t.Fatal(err)
	}
	mustStopHub(t, h)
	mustStopHub(t, h)
	if err := h.Start(context.Background()); err == nil {
		t.Error("Start after Stop succeeded")
	}
}

// TestHandshake: the subprotocol a browser offers is selected; a client
// that offers none gets none; a client that sends more than the read limit
// is disconnected.
func TestHandshake(t *testing.T) {
	th := mustHub(t)
	tests := []struct {
		name  string
		offer []string
		want  string
	}{
		{"browser", []string{Subprotocol, "bearer.lf_x"}, Subprotocol},
		{"browser, other order", []string{"bearer.lf_x", Subprotocol}, Subprotocol},
		{"header only", nil, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := websocket.Dialer{Subprotocols: tt.offer, HandshakeTimeout: waitGuard}
			conn, resp, err := d.Dial(th.wsURL(), http.Header{"Authorization": {"Bearer tenant-1"}})
			if err != nil {
				t.Fatalf("dial: %v", err)
			}
			defer conn.Close()
			resp.Body.Close()
			if conn.Subprotocol() != tt.want {
				t.Errorf("selected %q, want %q", conn.Subprotocol(), tt.want)
			}
		})
	}

	t.Run("read limit", func(t *testing.T) {
		conn := th.mustDial(t, 1)
		if err := conn.WriteMessage(websocket.TextMessage, make([]byte, DefaultReadLimit+1)); err != nil {
			t.Fatalf("write: %v", err)
		}
		conn.SetReadDeadline(time.Now().Add(waitGuard))
		_, _, err := conn.ReadMessage()
		if !websocket.IsCloseError(err, websocket.CloseMessageTooBig) {
			t.Errorf("after an oversized message: %v, want close 1009", err)
		}
	})
}

func TestNewRejectsNegativeDurations(t *testing.T) {
	tests := []struct {
		name string
		cfg  Config
	}{
		{"pong wait", Config{PongWait: -time.Second}},
		{"write wait", Config{WriteWait: -time.Second}},
		{"prune interval", Config{PruneInterval: -time.Second}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := New(tt.cfg); err == nil {
				t.Error("New accepted a negative duration")
			}
		})
	}
}

// statusRecorder is an http.ResponseWriter that records the status.
type statusRecorder struct {
	header http.Header
	status int
}

func (r *statusRecorder) Header() http.Header         { return r.header }
func (r *statusRecorder) Write(b []byte) (int, error) { return len(b), nil }
func (r *statusRecorder) WriteHeader(s int)           { r.status = s }

// readUntilClosed reads conn in the background and delivers the error that
// ended it.
func readUntilClosed(conn *websocket.Conn) <-chan error {
	done := make(chan error, 1)
	go func() {
		for {
			if _, _, err := conn.ReadMessage(); err != nil {
				done <- err
				return
			}
		}
	}()
	return done
}

// waitErr waits for a reader's end; nil means it did not end in time.
func waitErr(t *testing.T, done <-chan error) error {
	t.Helper()
	select {
	case err := <-done:
		return err
	case <-time.After(waitGuard):
		return nil
	}
}

// mustDialMany connects n clients of tenant, a few at a time.
func mustDialMany(t *testing.T, th *testHub, tenant int64, n int) []*websocket.Conn {
	t.Helper()
	conns := make([]*websocket.Conn, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	next := make(chan int)
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				conns[i], errs[i] = th.dial(tenant)
			}
		}()
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
	t.Cleanup(func() {
		for _, c := range conns {
			if c != nil {
				c.Close()
			}
		}
	})
	if err := errors.Join(errs...); err != nil {
		t.Fatalf("dial %d clients: %v", n, err)
	}
	return conns
}

// mustDialTinyBuffer connects a client whose socket receive buffer is as
// small as the kernel allows, so that a client that does not read stops the
// server's writes after little data.
func mustDialTinyBuffer(t *testing.T, th *testHub, tenant int64) *websocket.Conn {
	t.Helper()
	nd := net.Dialer{Control: func(_, _ string, rc syscall.RawConn) error {
		var serr error
		err := rc.Control(func(fd uintptr) {
			serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 1024)
		})
		return errors.Join(err, serr)
	}}
	d := websocket.Dialer{NetDialContext: nd.DialContext, HandshakeTimeout: waitGuard}
	conn, resp, err := d.Dial(th.wsURL(), http.Header{"Authorization": {"Bearer tenant-" + strconv.FormatInt(tenant, 10)}})
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	resp.Body.Close()
	t.Cleanup(func() { conn.Close() })
	return conn
}

// envRequireFileLimit makes a file limit too low for the fan-out tests a
// failure rather than a skip (.ci/run sets it), as testenv does for a
// missing PostgreSQL or browser.
const envRequireFileLimit = "LINKFORGE_REQUIRE_FILE_LIMIT"

// raiseFileLimit lifts the soft limit on open files to at least n: each
// client costs two descriptors in this process. Past the hard limit it
// raises that too, which root (as in CI) may do; otherwise the test is
// skipped, or fails under LINKFORGE_REQUIRE_FILE_LIMIT.
func raiseFileLimit(t *testing.T, n uint64) {
	t.Helper()
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		t.Fatalf("getrlimit: %v", err)
	}
	if lim.Cur >= n {
		return
	}
	hard := lim.Max
	lim.Cur, lim.Max = n, max(lim.Max, n)
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		testenv.Unavailable(t, envRequireFileLimit,
			fmt.Sprintf("open files limit: need %d, hard limit %d cannot be raised (%v); raise it (ulimit -Hn)", n, hard, err))
	}
}

// stampingSubscriber notes when the counter first hands a delta over.
type stampingSubscriber struct {
	*Hub
	mu sync.Mutex
	at time.Time
}

func (s *stampingSubscriber) ClicksChanged(d linkforge.BucketCount) {
	s.mu.Lock()
	if s.at.IsZero() {
		s.at = time.Now()
	}
	s.mu.Unlock()
	s.Hub.ClicksChanged(d)
}

func (s *stampingSubscriber) first() time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.at
}
