package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/linkforge/linkforge/internal/pgtest"
)

// The cluster tests run several real linkforge processes against one
// PostgreSQL, as docker-compose.yml does: rollups keyed by node, the live
// feed and the cache invalidations crossing nodes through LISTEN/NOTIFY,
// expiry alarms leased so that one node runs each. They are not parallel:
// alone, three race-enabled processes on two cores leave the 2 s bound of
// the live feed a wide margin.

// liveWithin bounds the wait for a dashboard on one node to show clicks
// served by another: the counter's 250 ms coalescing, the bus's 100 ms
// window and NOTIFY's delivery come to well under a second.
const liveWithin = 2 * time.Second

// invalidationWithin bounds the wait for a PATCH or DELETE on one node to
// be honoured by another's redirects. With the bus it takes one window
// (100 ms) and a round trip; without it the cache's 60 s TTL would be the
// bound, which this wait could never meet.
const invalidationWithin = 5 * time.Second

// cluster is a set of nodes sharing one database and one tenant.
type cluster struct {
	t     *testing.T
	dbURL string
	nodes []*node
	srvs  []*server
	token string
}

// newCluster prepares size nodes (node-1, node-2, ...) on a fresh database,
// with a short flush interval, and an API token; it starts none.
func newCluster(t *testing.T, size int) *cluster {
	t.Helper()
	c := &cluster{t: t, dbURL: pgtest.New(t)}
	for i := range size {
		n := newNode(t, c.dbURL)
		n.serveArgs = []string{"--flush-interval", "100ms", "--node-id", nodeID(i)}
		c.nodes = append(c.nodes, n)
	}
	c.srvs = make([]*server, size)
	c.token = strings.TrimSpace(c.nodes[0].mustRun("token", "create", "--tenant", "acme"))
	return c
}

func nodeID(i int) string { return fmt.Sprintf("node-%d", i+1) }

func (c *cluster) start(i int) {
	c.t.Helper()
	c.srvs[i] = c.nodes[i].startServer("http://lf.test")
}

func (c *cluster) base(i int) string { return "http://" + c.srvs[i].addr }

// mustCreate creates a link through node i.
func (c *cluster) mustCreate(i int, body string) {
	c.t.Helper()
	resp, b := mustDo(c.t, http.MethodPost, c.base(i)+"/api/v1/links", c.token, body)
	if resp.StatusCode != http.StatusCreated {
		c.t.Fatalf("create %s on %s: %d %s", body, nodeID(i), resp.StatusCode, b)
	}
}

// mustRedirectTo fails unless GET /slug on node i answers 302 to location.
func (c *cluster) mustRedirectTo(i int, slug, location string) {
	c.t.Helper()
	resp, b := mustDo(c.t, http.MethodGet, c.base(i)+"/"+slug, "", "")
	if resp.StatusCode != http.StatusFound || resp.Header.Get("Location") != location {
		c.t.Fatalf("GET /%s on %s = %d Location %q, want 302 to %q (%s)", slug, nodeID(i),
			resp.StatusCode, resp.Header.Get("Location"), location, b)
	}
}

// stopAll stops every running node with SIGTERM; each must exit 0.
func (c *cluster) stopAll() {
	c.t.Helper()
	for i, s := range c.srvs {
		if code := s.stop(c.t); code != 0 {
			c.t.Errorf("%s exited %d after SIGTERM\nstderr:\n%s", nodeID(i), code, s.stderr.String())
		}
	}
}

// rollupByNode reads the rollup of the links with the given slugs, summed
// per node, straight from the database.
func (c *cluster) rollupByNode(slugs ...string) map[string]int64 {
	c.t.Helper()
	db := mustOpenSQL(c.t, "pgx", c.dbURL)
	rows, err := db.QueryContext(context.Background(), `SELECT r.node_id, SUM(r.count) FROM click_rollup r
		JOIN links l ON l.id = r.link_id WHERE l.slug = ANY($1) GROUP BY r.node_id`, slugs)
	if err != nil {
		c.t.Fatalf("read rollup: %v", err)
	}
	defer rows.Close()
	out := map[string]int64{}
	for rows.Next() {
		var node string
		var n int64
		if err := rows.Scan(&node, &n); err != nil {
			c.t.Fatal(err)
		}
		out[node] = n
	}
	if err := rows.Err(); err != nil {
		c.t.Fatal(err)
	}
	return out
}

func sum(m map[string]int64) int64 {
	var s int64
	for _, v := range m {
		s += v
	}
	return s
}

// metric returns the value of the sample of base's /metrics whose name and
// labels are exactly series (`name` or `name{a="b"}`), 0 if absent.
func metric(t *testing.T, base, series string) float64 {
	t.Helper()
	resp, err := http.Get(base + "/metrics")
	if err != nil {
		t.Fatalf("GET /metrics: %v", err)
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		t.Fatalf("read /metrics: %v", err)
	}
	for line := range strings.SplitSeq(string(body), "\n") {
		if v, ok := strings.CutPrefix(line, series+" "); ok {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				t.Fatalf("metric %s: %q: %v", series, line, err)
			}
			return f
		}
	}
	return 0
}

// waitFor polls cond every 20 ms until it holds or within passes, and
// returns how long it took.
func waitFor(t *testing.T, within time.Duration, what string, cond func() bool) time.Duration {
	t.Helper()
	return waitEvery(t, 20*time.Millisecond, within, what, cond)
}

// apiPoll spaces the polls of the admin API, which allows a token 20
// requests/s per node.
const apiPoll = 200 * time.Millisecond

// waitEvery polls cond every interval until it holds or within passes, and
// returns how long it took.
func waitEvery(t *testing.T, every, within time.Duration, what string, cond func() bool) time.Duration {
	t.Helper()
	start := time.Now()
	for !cond() {
		if time.Since(start) > within {
			t.Fatalf("%s: not within %v", what, within)
		}
		time.Sleep(every)
	}
	return time.Since(start)
}

// liveClient is a dashboard connected to one node's WebSocket feed.
type liveClient struct {
	mu sync.Mutex
	// buckets holds, per link and bucket, the largest count received.
	buckets map[string]map[string]int64
	expired map[string]int
	changed chan struct{}
	// readErr is why the feed's read loop ended, for a failure's message:
	// a closed feed and a lost bus event look alike from outside.
	readErr error
}

// mustLiveClient connects to base's feed as a program does: the
// Authorization header, and no Origin (web/live.go admits it).
func mustLiveClient(t *testing.T, base, token string) *liveClient {
	t.Helper()
	header := http.Header{"Authorization": {"Bearer " + token}}
	conn, resp, err := websocket.DefaultDialer.Dial("ws"+strings.TrimPrefix(base, "http")+"/api/v1/live", header)
	if err != nil {
		status := 0
		if resp != nil {
			status = resp.StatusCode
		}
		t.Fatalf("dial the live feed: %v (status %d)", err, status)
	}
	lc := &liveClient{buckets: map[string]map[string]int64{}, expired: map[string]int{}, changed: make(chan struct{}, 1)}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			_, data, err := conn.ReadMessage()
			if err != nil {
				lc.mu.Lock()
				lc.readErr = err
				lc.mu.Unlock()
				return
			}
			var m struct {
				Type, Link, Bucket string
				Count              int64
			}
			if json.Unmarshal(data, &m) != nil {
				continue
			}
			lc.mu.Lock()
			switch m.Type {
			case "clicks":
				if lc.buckets[m.Link] == nil {
					lc.buckets[m.Link] = map[string]int64{}
				}
				lc.buckets[m.Link][m.Bucket] = max(lc.buckets[m.Link][m.Bucket], m.Count)
			case "expired":
				lc.expired[m.Link]++
			}
			lc.mu.Unlock()
			select {
			case lc.changed <- struct{}{}:
			default:
			}
		}
	}()
	t.Cleanup(func() {
		conn.Close()
		<-done
	})
	// The hub registers the client right after the handshake; wait for it,
	// so that no delta can come before the client is there to see it.
	waitFor(t, hangGuard, "live client registered", func() bool {
		return metric(t, base, "linkforge_dashboard_clients") == 1
	})
	return lc
}

// clicks returns the link's count as the dashboard shows it: the sum of
// its buckets' latest counts.
func (lc *liveClient) clicks(slug string) int64 {
	lc.mu.Lock()
	defer lc.mu.Unlock()
	return sum(lc.buckets[slug])
}

// waitExpiryShown waits until the dashboard has heard of slug's expiry. On
// a timeout it says what the nodes' buses counted and whether the feed was
// still open: the event is best effort (ADR 004), so the message must tell
// a dropped event from a closed feed or a slow machine.
func (c *cluster) waitExpiryShown(t *testing.T, live *liveClient, slug string) {
	t.Helper()
	start := time.Now()
	for live.expiries(slug) == 0 {
		if time.Since(start) > hangGuard {
			live.mu.Lock()
			readErr := live.readErr
			live.mu.Unlock()
			var buses []string
			for i := range 3 {
				buses = append(buses, fmt.Sprintf("%s: published %v, received %v, dropped (queue full) %v, publish failures %v, reconnects %v, healthy %v",
					nodeID(i),
					metric(t, c.base(i), "linkforge_bus_events_published_total"),
					metric(t, c.base(i), "linkforge_bus_events_received_total"),
					metric(t, c.base(i), `linkforge_bus_events_dropped_total{reason="queue_full"}`),
					metric(t, c.base(i), "linkforge_bus_publish_failures_total"),
					metric(t, c.base(i), "linkforge_bus_listener_reconnects_total"),
					metric(t, c.base(i), "linkforge_bus_healthy")))
			}
			t.Fatalf("the dashboard shows the expiry: not within %v (feed read error: %v; buses: %s)", hangGuard, readErr, strings.Join(buses, "; "))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (lc *liveClient) expiries(slug string) int {
	lc.mu.Lock()
	defer lc.mu.Unlock()
	return lc.expired[slug]
}

// waitClicks waits until the dashboard shows want clicks for slug, and
// returns how long it took.
func (lc *liveClient) waitClicks(t *testing.T, slug string, want int64, within time.Duration) time.Duration {
	t.Helper()
	start := time.Now()
	deadline := time.After(within)
	for lc.clicks(slug) < want {
		select {
		case <-lc.changed:
		case <-deadline:
			t.Fatalf("dashboard shows %d clicks on %q after %v, want %d", lc.clicks(slug), slug, within, want)
		}
	}
	if got := lc.clicks(slug); got != want {
		t.Fatalf("dashboard shows %d clicks on %q, want exactly %d", got, slug, want)
	}
	return time.Since(start)
}

// mustClicks sends n GETs for slug to base, one at a time; each must be a
// 302.
func mustClicks(t *testing.T, base, slug string, n int) {
	t.Helper()
	for i := range n {
		resp, b := mustDo(t, http.MethodGet, base+"/"+slug, "", "")
		if resp.StatusCode != http.StatusFound {
			t.Fatalf("click %d on %s/%s: %d %s", i, base, slug, resp.StatusCode, b)
		}
	}
}

// TestCluster runs three nodes on one database: clicks sent to all three
// for the same links, in rounds each node flushes, add up in the rollup to
// exactly the 302s received; a
// dashboard on node 1 shows clicks served by node 3, and the sum of both
// nodes' clicks; an expiring link's alarm runs once across the nodes; a
// PATCH and a DELETE on node 2 reach node 1's redirects through the bus.
func TestCluster(t *testing.T) {
	if testing.Short() {
		t.Skip("runs three real linkforge processes")
	}
	c := newCluster(t, 3)
	const target = "https://example.com/"

	// The expiring link is created before nodes 2 and 3 start: each reads
	// the earliest due alarm at start-up, so all three arm a timer for it
	// and race to claim it (a node learns of another's new alarms only by
	// its 30 s re-read otherwise).
	c.start(0)
	// The dashboard on node 1 connects first: the link expires 4 s after
	// its create, and on a loaded machine nodes 2 and 3 can take longer
	// than that to start (the expiry was then over before a later
	// dashboard was there to hear of it).
	live := mustLiveClient(t, c.base(0), c.token)
	expiresAt := time.Now().Add(4 * time.Second).UTC()
	for _, slug := range []string{"shared-a", "shared-b", "watched", "moving", "doomed"} {
		c.mustCreate(0, fmt.Sprintf(`{"slug":%q,"url":%q}`, slug, target+slug))
	}
	c.mustCreate(0, fmt.Sprintf(`{"slug":"soon","url":%q,"expires_at":%q}`, target+"soon", expiresAt.Format(time.RFC3339Nano)))
	c.start(1)
	c.start(2)
	for i := range 3 {
		waitFor(t, hangGuard, nodeID(i)+" listening on the bus", func() bool {
			return metric(t, c.base(i), "linkforge_bus_listening") == 1
		})
		// Nodes 2 and 3 read the alarm at start-up (the gauge is that
		// read; node 1 was told by its own API), unless the start-ups
		// outlasted it: then the race is only less tight.
		// The read may come a moment after the bus listens: poll for it
		// until the alarm is due (then a node may have run it already).
		// The gauge is the earliest of all the scheduler's work (the
		// visitor key's destruction, retention, verification too): the
		// node knows the link's alarm once it is at or before it.
		want := float64(expiresAt.UnixMicro()) / 1e6
		next := metric(t, c.base(i), `linkforge_alarm_next_due_timestamp_seconds{alarm="link_expiry"}`)
		for i > 0 && (next == 0 || next > want+0.001) && time.Now().Before(expiresAt) {
			time.Sleep(20 * time.Millisecond)
			next = metric(t, c.base(i), `linkforge_alarm_next_due_timestamp_seconds{alarm="link_expiry"}`)
		}
		if i > 0 && next > want+0.001 {
			// Past expires_at: another node may have run the alarm and the
			// gauge moved on; the expiry itself is checked below.
			t.Logf("%s's next alarm is due at %v, after the link's expires_at %v (read after it was due)", nodeID(i), next, want)
		}
	}

	// The dashboard on node 1 sees node 3's clicks, then the sum of both.
	mustClicks(t, c.base(2), "watched", 20)
	took := live.waitClicks(t, "watched", 20, liveWithin)
	t.Logf("node 1's dashboard showed node 3's clicks %v after the last 302", took)
	mustClicks(t, c.base(0), "watched", 5)
	live.waitClicks(t, "watched", 25, hangGuard)

	// Concurrent load on two links through all three nodes, in rounds: after
	// each, every node flushes (100 ms interval) before the next begins, so
	// each node writes the same (link, minute) rollup row several times, its
	// absolute count growing each time. An upsert that added the written
	// count to the stored one would count every earlier flush again.
	const workers, rounds, perRound = 4, 5, 10
	var acks [2]atomic.Int64
	slugs := [2]string{"shared-a", "shared-b"}
	client := &http.Client{Timeout: hangGuard, Transport: &http.Transport{MaxIdleConnsPerHost: workers},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	defer client.CloseIdleConnections()
	var rowsBefore [3]float64
	for i := range 3 {
		rowsBefore[i] = metric(t, c.base(i), "linkforge_rollup_rows_written_total")
	}
	for round := range rounds {
		var wg sync.WaitGroup
		for i := range 3 {
			for w := range workers {
				wg.Go(func() {
					for r := range perRound {
						k := (w + r) % 2
						resp, err := client.Get(c.base(i) + "/" + slugs[k])
						if err != nil {
							t.Errorf("GET on %s: %v", nodeID(i), err)
							return
						}
						resp.Body.Close()
						if resp.StatusCode != http.StatusFound {
							t.Errorf("GET /%s on %s: %d", slugs[k], nodeID(i), resp.StatusCode)
							return
						}
						acks[k].Add(1)
					}
				})
			}
		}
		wg.Wait()
		if t.Failed() {
			t.FailNow()
		}
		for i := range 3 {
			waitFor(t, hangGuard, fmt.Sprintf("%s flushes round %d", nodeID(i), round+1), func() bool {
				return metric(t, c.base(i), "linkforge_clicks_pending") == 0
			})
		}
	}
	// Each round's flush wrote both links' rows: the same rows, unless a
	// minute began meanwhile (5 rounds in at most 2 minutes still write
	// some row 3 times).
	for i := range 3 {
		if rows := metric(t, c.base(i), "linkforge_rollup_rows_written_total") - rowsBefore[i]; rows < 2*rounds {
			t.Fatalf("%s wrote %v rollup rows during the load, want at least %d: one per link per round", nodeID(i), rows, 2*rounds)
		}
	}

	// A PATCH on node 2 reaches node 1's warm cache through the bus.
	c.mustRedirectTo(0, "moving", target+"moving")
	resp, b := mustDo(t, http.MethodPatch, c.base(1)+"/api/v1/links/moving", c.token, `{"url":"https://example.com/moved"}`)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("PATCH on node 2: %d %s", resp.StatusCode, b)
	}
	took = waitFor(t, invalidationWithin, "node 1 redirects to the PATCHed URL", func() bool {
		resp, _ := mustDo(t, http.MethodGet, c.base(0)+"/moving", "", "")
		return resp.Header.Get("Location") == "https://example.com/moved"
	})
	t.Logf("node 1 followed node 2's PATCH after %v", took)
	// And a DELETE.
	c.mustRedirectTo(0, "doomed", target+"doomed")
	if resp, b := mustDo(t, http.MethodDelete, c.base(1)+"/api/v1/links/doomed", c.token, ""); resp.StatusCode != http.StatusNoContent {
		t.Fatalf("DELETE on node 2: %d %s", resp.StatusCode, b)
	}
	waitFor(t, invalidationWithin, "node 1 answers 404 for the deleted link", func() bool {
		resp, _ := mustDo(t, http.MethodGet, c.base(0)+"/doomed", "", "")
		return resp.StatusCode == http.StatusNotFound
	})

	// The expiry alarm: done, on its first attempt, once across the nodes.
	var alarms struct {
		Alarms []struct {
			Link, State string
			Attempt     int
			Failures    []json.RawMessage
		}
	}
	var link struct {
		ExpiredAt *time.Time `json:"expired_at"`
	}
	waitEvery(t, apiPoll, hangGuard, "the expiry alarm is done", func() bool {
		resp, b := mustDo(t, http.MethodGet, c.base(1)+"/api/v1/alarms?state=done", c.token, "")
		if resp.StatusCode != http.StatusOK || json.Unmarshal(b, &alarms) != nil {
			t.Fatalf("GET alarms: %d %s", resp.StatusCode, b)
		}
		return len(alarms.Alarms) > 0
	})
	if a := alarms.Alarms; len(a) != 1 || a[0].Link != "soon" || a[0].Attempt != 1 || len(a[0].Failures) != 0 {
		t.Fatalf("done alarms = %+v, want the link's, attempt 1, no failures", a)
	}
	resp, b = mustDo(t, http.MethodGet, c.base(2)+"/api/v1/links/soon", c.token, "")
	if resp.StatusCode != http.StatusOK || json.Unmarshal(b, &link) != nil || link.ExpiredAt == nil || link.ExpiredAt.Before(expiresAt.Truncate(time.Microsecond)) {
		t.Fatalf("GET the expired link: %d %s; want expired_at at or after %v", resp.StatusCode, b, expiresAt)
	}
	var runs, failures float64
	for i := range 3 {
		runs += metric(t, c.base(i), `linkforge_alarm_runs_total{alarm="link_expiry",result="success"}`)
		failures += metric(t, c.base(i), `linkforge_alarm_runs_total{alarm="link_expiry",result="failure"}`)
		if resp, _ := mustDo(t, http.MethodGet, c.base(i)+"/soon", "", ""); resp.StatusCode != http.StatusGone {
			t.Errorf("GET /soon on %s after expiry: %d, want 410", nodeID(i), resp.StatusCode)
		}
	}
	if runs != 1 || failures != 0 {
		t.Errorf("expiry runs over the three nodes: %v successful, %v failed; want 1 and 0", runs, failures)
	}
	// Node 1's dashboard heard of it once, whichever node ran it.
	c.waitExpiryShown(t, live, "soon")

	c.stopAll()
	byNode := c.rollupByNode(slugs[:]...)
	want := acks[0].Load() + acks[1].Load()
	if got := sum(byNode); got != want {
		t.Errorf("rollup of the shared links = %d (by node %v), want the %d 302s received", got, byNode, want)
	}
	for i := range 3 {
		if byNode[nodeID(i)] != workers*rounds*perRound {
			t.Errorf("rollup of %s = %d, want its %d 302s (by node %v)", nodeID(i), byNode[nodeID(i)], workers*rounds*perRound, byNode)
		}
	}
	if got := sum(c.rollupByNode("watched")); got != 25 {
		t.Errorf("rollup of the watched link = %d, want 25", got)
	}
	checkDimsInvariant(t, c.nodes[0], c.dbURL)
	if n := live.expiries("soon"); n != 1 {
		t.Errorf("the dashboard got %d expiry events for the link, want 1", n)
	}
}

// TestClusterKillOneNode kills one of three nodes with SIGKILL under load:
// the other two answer every request with a 302 throughout; once the killed
// node restarts on its data dir, its start-up reconciliation puts in the
// rollup exactly the clicks it acknowledged, next to exactly the others'
// clicks. Before the kill, the node's journal commits are held until each of
// its workers waits on a held click (holdCommits, as in the crash test): no
// 302 may leave meanwhile, and no click is in doubt at the kill.
func TestClusterKillOneNode(t *testing.T) {
	if testing.Short() {
		t.Skip("runs, kills and restarts real linkforge processes")
	}
	c := newCluster(t, 3)
	// The node to kill flushes only on its restart: every click it
	// acknowledged is then in its journal alone when it dies.
	c.nodes[2].serveArgs = []string{"--flush-interval", "1h", "--node-id", nodeID(2)}
	c.start(0)
	c.mustCreate(0, `{"slug":"k","url":"https://example.com/k"}`)
	c.start(1)
	c.start(2)

	const workers = 4
	var acks [3]atomic.Int64
	var failed atomic.Int64 // requests to the killed node that got no answer
	var g heldGate          // the killed node's commit hold
	stop := make(chan struct{})
	client := &http.Client{Timeout: hangGuard, Transport: &http.Transport{MaxIdleConnsPerHost: workers},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	defer client.CloseIdleConnections()
	var wg sync.WaitGroup
	for i := range 3 {
		for range workers {
			wg.Go(func() {
				for {
					select {
					case <-stop:
						return
					default:
					}
					sentHeld := i == 2 && g.request()
					resp, err := client.Get(c.base(i) + "/k")
					if err != nil {
						if i == 2 {
							// Killed while held: never committed. The
							// worker stops.
							failed.Add(1)
						} else {
							t.Errorf("GET on surviving %s: %v", nodeID(i), err)
						}
						return
					}
					resp.Body.Close()
					if resp.StatusCode != http.StatusFound {
						t.Errorf("GET on %s: status %d", nodeID(i), resp.StatusCode)
						return
					}
					if i == 2 {
						g.answered(sentHeld)
					}
					acks[i].Add(1)
				}
			})
		}
	}
	// The workers end before the test does, on every path.
	var stopOnce sync.Once
	stopLoad := func() {
		stopOnce.Do(func() {
			close(stop)
			c.srvs[2].cmd.Process.Kill() // an error only says it has exited already
			<-c.srvs[2].exited
			wg.Wait()
		})
	}
	defer stopLoad()
	waitFor(t, hangGuard, "node 3 acknowledges clicks", func() bool { return acks[2].Load() >= 200 })
	holdCommits(t, c.nodes[2].dataDir, &g)
	waitHeld(t, c.nodes[2].dataDir, workers, &g)
	if err := c.srvs[2].cmd.Process.Kill(); err != nil {
		t.Fatalf("SIGKILL: %v", err)
	}
	<-c.srvs[2].exited
	// The survivors keep serving after the kill.
	after := [2]int64{acks[0].Load(), acks[1].Load()}
	waitFor(t, hangGuard, "the survivors serve after the kill", func() bool {
		return acks[0].Load() >= after[0]+100 && acks[1].Load() >= after[1]+100
	})
	stopLoad()
	if t.Failed() {
		t.FailNow()
	}
	if p := g.problem(); p != "" {
		t.Fatal(p)
	}
	if f := failed.Load(); f != workers {
		t.Fatalf("%d requests to the killed node failed, want %d: one held request per worker", f, workers)
	}

	if got := c.rollupByNode("k")[nodeID(2)]; got != 0 {
		t.Fatalf("rollup of the killed node before its restart = %d, want 0 (its flush is an hour away)", got)
	}
	releaseCommits(t, c.nodes[2].dataDir)
	c.start(2) // same data dir: same journal, same node id
	for i := range 3 {
		waitNothingPending(t, c.base(i))
	}
	byNode := c.rollupByNode("k")
	t.Logf("acknowledged %d %d %d, rollup %v", acks[0].Load(), acks[1].Load(), acks[2].Load(), byNode)
	for i := range 3 {
		if byNode[nodeID(i)] != acks[i].Load() {
			t.Errorf("rollup of %s = %d, want exactly its %d 302s", nodeID(i), byNode[nodeID(i)], acks[i].Load())
		}
	}
	// Three nodes' click_dims, one killed and restarted: every hour's
	// values still sum to its minutes.
	checkDimsInvariant(t, c.nodes[0], c.dbURL)
	c.stopAll()
}
