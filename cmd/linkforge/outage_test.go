package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/linkforge/linkforge/internal/pgtest"
)

// pgProxy is a TCP proxy in front of PostgreSQL, for the outage tests. cut
// closes its listener and every connection, so that the server sees a
// database that refuses connections; restore listens again on the same
// address. freezeListeners black-holes the sessions that sent LISTEN (the
// cluster bus's listener), now and later, while their TCP connections stay
// open: the silently dead listener of issue 10, item 4.
type pgProxy struct {
	t      *testing.T
	target string // host:port of the real server
	addr   string // host:port clients connect to
	url    string // the database URL through the proxy

	mu     sync.Mutex
	ln     net.Listener // nil while cut
	conns  map[*proxyConn]struct{}
	frozen bool
	wg     sync.WaitGroup
}

type proxyConn struct {
	in, out net.Conn
	listens atomic.Bool // the client sent a LISTEN on it
}

func newPGProxy(t *testing.T, dbURL string) *pgProxy {
	t.Helper()
	u, err := url.Parse(dbURL)
	if err != nil {
		t.Fatalf("parse database URL: %v", err)
	}
	p := &pgProxy{t: t, target: u.Host, conns: map[*proxyConn]struct{}{}}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("proxy listen: %v", err)
	}
	p.addr = ln.Addr().String()
	u.Host = p.addr
	p.url = u.String()
	p.serve(ln)
	t.Cleanup(func() {
		p.cut()
		p.wg.Wait()
	})
	return p
}

func (p *pgProxy) serve(ln net.Listener) {
	p.mu.Lock()
	p.ln = ln
	p.mu.Unlock()
	p.wg.Go(func() {
		for {
			in, err := ln.Accept()
			if err != nil {
				return // closed by cut
			}
			out, err := net.Dial("tcp", p.target)
			if err != nil {
				in.Close()
				continue
			}
			c := &proxyConn{in: in, out: out}
			p.mu.Lock()
			if p.ln != ln { // cut meanwhile
				p.mu.Unlock()
				in.Close()
				out.Close()
				continue
			}
			p.conns[c] = struct{}{}
			p.mu.Unlock()
			p.wg.Go(func() { p.pipe(c, c.out, c.in, true) })
			p.wg.Go(func() { p.pipe(c, c.in, c.out, false) })
		}
	})
}

// pipe copies src to dst until either side closes. fromClient marks the
// client's direction, where a LISTEN is spotted.
func (p *pgProxy) pipe(c *proxyConn, dst, src net.Conn, fromClient bool) {
	defer func() {
		c.in.Close()
		c.out.Close()
		p.mu.Lock()
		delete(p.conns, c)
		p.mu.Unlock()
	}()
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			if fromClient && bytes.Contains(buf[:n], []byte("LISTEN ")) {
				c.listens.Store(true)
			}
			p.mu.Lock()
			drop := p.frozen && c.listens.Load()
			p.mu.Unlock()
			if !drop {
				if _, werr := dst.Write(buf[:n]); werr != nil {
					return
				}
			}
		}
		if err != nil {
			return
		}
	}
}

// cut makes the database unreachable: the listener is closed (new
// connections are refused) and every open connection is closed.
func (p *pgProxy) cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ln != nil {
		p.ln.Close()
		p.ln = nil
	}
	for c := range p.conns {
		c.in.Close()
		c.out.Close()
	}
}

// restore listens again on the same address.
func (p *pgProxy) restore() {
	p.t.Helper()
	var ln net.Listener
	var err error
	deadline := time.Now().Add(hangGuard)
	for ln, err = net.Listen("tcp", p.addr); err != nil; ln, err = net.Listen("tcp", p.addr) {
		if time.Now().After(deadline) {
			p.t.Fatalf("proxy: listen again on %s: %v", p.addr, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	p.serve(ln)
}

// freezeListeners drops, from now on, every byte to and from the sessions
// that sent LISTEN, without closing them.
func (p *pgProxy) freezeListeners() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.frozen = true
}

// outageFor is how long the database stays unreachable: issue 10 asks for
// three minutes under load.
const outageFor = 3 * time.Minute

// TestOutageKeepsRedirecting (issue 10, item 1) runs the real binary on
// PostgreSQL behind a proxy, cuts the database off for three minutes under
// a modest load, and checks that every redirect of a link seen before
// answered 302 throughout (stale-if-error in the link cache, clicks counted
// in the journal); that a limited link serves exactly the headroom it has,
// including one whose actor was evicted during the outage; that /readyz
// stayed 200 and reported the database unavailable; and that once the
// database is back the rollup holds exactly the acknowledged clicks.
func TestOutageKeepsRedirecting(t *testing.T) {
	if testing.Short() {
		t.Skip("keeps PostgreSQL cut off for three minutes (issue 10's requirement); not with -short")
	}
	t.Parallel()
	direct := pgtest.New(t)
	proxy := newPGProxy(t, direct)
	n := newNode(t, proxy.url)
	// NORMAL: power loss is not this test's subject; fsyncs would only slow
	// a shared machine.
	n.serveArgs = []string{"--flush-interval", "200ms", "--journal-sync", "normal"}
	token := strings.TrimSpace(n.mustRun("token", "create", "--tenant", "acme"))
	srv := n.startServer("http://lf.test")
	base := "http://" + srv.addr

	target := func(slug string) string { return "https://example.com/" + slug }
	links := map[string]string{ // slug -> extra JSON fields
		"out-a":     ``,
		"out-b":     ``,
		"out-lim":   `,"max_clicks":1000000`,
		"out-idle":  `,"max_clicks":1000`, // idle during the first half of the outage
		"out-three": `,"max_clicks":3`,
	}
	for slug, extra := range links {
		resp, body := mustDo(t, http.MethodPost, base+"/api/v1/links", token,
			fmt.Sprintf(`{"slug":%q,"url":%q%s}`, slug, target(slug), extra))
		if resp.StatusCode != http.StatusCreated {
			t.Fatalf("create %s: %d %s", slug, resp.StatusCode, body)
		}
	}

	var mu sync.Mutex
	acked := map[string]int64{}
	unexpected := map[string]int{} // "slug status" -> times
	client := &http.Client{
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		Transport:     &http.Transport{MaxIdleConnsPerHost: 8},
		Timeout:       hangGuard,
	}
	defer client.CloseIdleConnections()
	// get GETs slug and returns its status; a 302 to the target is counted
	// as acknowledged.
	get := func(slug string) int {
		resp, err := client.Get(base + "/" + slug)
		if err != nil {
			t.Errorf("GET /%s: %v", slug, err)
			return 0
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode == http.StatusFound && resp.Header.Get("Location") == target(slug) {
			mu.Lock()
			acked[slug]++
			mu.Unlock()
		}
		return resp.StatusCode
	}
	mustGet := func(slug string, want int) {
		t.Helper()
		if got := get(slug); got != want {
			t.Errorf("GET /%s = %d, want %d", slug, got, want)
		}
	}

	// Warm: every link is seen (cached, its total read), and flushed;
	// out-lim is clicked enough to hold a few reserved clicks (blocks 1,
	// 2, 4, 8, 16, issue 13).
	for slug := range links {
		mustGet(slug, http.StatusFound)
	}
	for range 19 {
		mustGet("out-lim", http.StatusFound)
	}
	waitNothingPending(t, base)
	var reserved int64 // out-lim's clicks granted to this node and not spent
	{
		db := mustOpenSQL(t, "pgx", direct)
		if err := db.QueryRowContext(context.Background(), `SELECT g.granted - l.rollup_clicks
			FROM click_grants g JOIN links l ON l.id = g.link_id WHERE l.slug = 'out-lim'`).Scan(&reserved); err != nil {
			t.Fatalf("read out-lim's grant: %v", err)
		}
		db.Close()
	}
	if reserved <= 0 {
		t.Fatalf("out-lim holds %d reserved clicks after 20 quick clicks, want some", reserved)
	}

	proxy.cut()
	cutAt := time.Now()
	stop := make(chan struct{})
	var load sync.WaitGroup
	hot := []string{"out-a", "out-b"}
	for w := range 4 {
		load.Go(func() {
			for i := w; ; i++ {
				select {
				case <-stop:
					return
				case <-time.After(50 * time.Millisecond):
				}
				slug := hot[i%len(hot)]
				if code := get(slug); code != http.StatusFound {
					mu.Lock()
					unexpected[fmt.Sprint(slug, " ", code)]++
					mu.Unlock()
				}
			}
		})
	}
	var readyPolls, readyBad atomic.Int64
	load.Go(func() {
		for {
			select {
			case <-stop:
				return
			case <-time.After(2 * time.Second):
			}
			resp, err := client.Get(base + "/readyz")
			if err != nil {
				t.Errorf("GET /readyz: %v", err)
				return
			}
			var body struct{ Status, Journal, Database string }
			err = json.NewDecoder(resp.Body).Decode(&body)
			resp.Body.Close()
			readyPolls.Add(1)
			if err != nil || resp.StatusCode != http.StatusOK || body.Status != "ready" ||
				body.Journal != "ok" || body.Database != "unavailable" {
				if readyBad.Add(1) == 1 {
					t.Errorf("GET /readyz during the outage = %d %+v (%v), want 200, ready, journal ok, database unavailable",
						resp.StatusCode, body, err)
				}
			}
		}
	})

	// A limited link spends exactly the clicks this node reserved before
	// the outage, then answers 503: the database may hold more for it, on
	// no account more than max_clicks (issue 13, ADR 016).
	spent := int64(0)
	for get("out-lim") == http.StatusFound {
		spent++
	}
	if spent != reserved {
		t.Errorf("out-lim served %d clicks during the outage, want exactly the %d it had reserved", spent, reserved)
	}
	mustGet("out-lim", http.StatusServiceUnavailable)
	// Its warm-up click spent out-three's only reserved click.
	mustGet("out-three", http.StatusServiceUnavailable)

	// The idle limited link, clicked again once its actor has been evicted
	// (idle for a minute, housekeeping every minute): it gave its grant
	// back when idle, so it holds nothing to spend.
	time.Sleep(time.Until(cutAt.Add(150 * time.Second)))
	mustGet("out-idle", http.StatusServiceUnavailable)

	time.Sleep(time.Until(cutAt.Add(outageFor)))
	close(stop)
	load.Wait()
	mu.Lock()
	for k, v := range unexpected {
		t.Errorf("during the outage, GET /%s answered %d times", k, v)
	}
	inOutage := int64(0)
	for _, slug := range hot {
		inOutage += acked[slug]
	}
	mu.Unlock()
	t.Logf("outage of %v: %d redirects of the hot links answered 302; /readyz polled %d times",
		time.Since(cutAt).Round(time.Second), inOutage, readyPolls.Load())
	if n := readyBad.Load(); n > 0 {
		t.Errorf("/readyz answered wrong %d times of %d during the outage", n, readyPolls.Load())
	}
	if inOutage < 1000 || readyPolls.Load() < 30 {
		t.Fatalf("the load did not run: %d redirects, %d readiness polls", inOutage, readyPolls.Load())
	}

	proxy.restore()
	// Clicks go on after the database is back (they also pull the
	// back-off of the links' flushes in).
	deadline := time.Now().Add(hangGuard)
	for _, slug := range append(hot, "out-idle", "out-lim", "out-three") {
		for get(slug) != http.StatusFound {
			if time.Now().After(deadline) {
				t.Fatalf("GET /%s does not answer 302 after the database returned", slug)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}

	// Every acknowledged click reaches the rollup, exactly: out-three's
	// flush waits for its back-off (at most 64 s).
	rollup := func() map[string]int64 {
		db := mustOpenSQL(t, "pgx", direct)
		defer db.Close()
		rows, err := db.QueryContext(context.Background(), `SELECT l.slug, COALESCE(SUM(r.count), 0)
			FROM links l LEFT JOIN click_rollup r ON r.link_id = l.id GROUP BY l.slug`)
		if err != nil {
			t.Fatalf("read rollup: %v", err)
		}
		defer rows.Close()
		out := map[string]int64{}
		for rows.Next() {
			var slug string
			var n int64
			if err := rows.Scan(&slug, &n); err != nil {
				t.Fatal(err)
			}
			out[slug] = n
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		return out
	}
	mu.Lock()
	want := fmt.Sprint(acked)
	mu.Unlock()
	var got string
	deadline = time.Now().Add(3 * time.Minute)
	for got = fmt.Sprint(rollup()); got != want; got = fmt.Sprint(rollup()) {
		if time.Now().After(deadline) {
			t.Fatalf("rollup after the outage = %s, want the acknowledged clicks %s", got, want)
		}
		time.Sleep(500 * time.Millisecond)
	}
	t.Logf("rollup = acknowledged = %s", got)
	// The flushes retried through the outage wrote whole hours: each
	// hour's dimension values sum to its minutes.
	checkDimsInvariant(t, n, direct)
	if code := srv.stop(t); code != 0 {
		t.Errorf("serve exited %d after SIGTERM, want 0", code)
	}
}
