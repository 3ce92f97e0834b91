package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestCrashKeepsAcknowledgedClicks is the output gate's proof with the real
// binary: clicks are driven over HTTP, counting every 302 received; then the
// journal's commits are held (holdCommits) while the load goes on, so that
// no 302 may leave: every worker ends up waiting on a click that is not
// durable. The process is killed with SIGKILL there, restarted, and the
// rollup must hold exactly the acknowledged clicks: all of them, and none of
// the held ones. Twenty cycles on each backend (two under -short); the
// flush interval is short
// so that kills also land in the middle of flushes (a flush can write the
// rollup while the hold keeps its journal mark back).
//
// Without the hold, a Record that answered before its commit was caught only
// when SIGKILL landed in the microseconds between the two (the page cache
// survives the kill); with it, such a Record answers a 302 while held, which
// fails every run.
func TestCrashKeepsAcknowledgedClicks(t *testing.T) {
	t.Parallel()
	cycles := 20
	if testing.Short() {
		cycles = 2
	}
	forEachBackend(t, func(t *testing.T, b backend) {
		n := b.newNode(t)
		n.serveArgs = []string{"--flush-interval", "50ms"}
		testCrashCycles(t, n, cycles)
	})
}

func testCrashCycles(t *testing.T, n *node, cycles int) {
	const workers = 16
	token := strings.TrimSpace(n.mustRun("token", "create", "--tenant", "acme"))

	srv := n.startServer("http://lf.test")
	base := "http://" + srv.addr
	resp, body := mustDo(t, http.MethodPost, base+"/api/v1/links", token,
		`{"url":"https://example.com/crash","slug":"crash"}`)
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("create link: %d %s", resp.StatusCode, body)
	}

	var acked int64 // over all cycles
	for cycle := 1; cycle <= cycles; cycle++ {
		a := loadHoldKill(t, srv, n.dataDir, base+"/crash", workers)
		acked += a
		releaseCommits(t, n.dataDir)

		// Restart: reconciliation flushes what the journal holds without a
		// new click; wait until the rollup has caught up, then check it
		// holds exactly what was acknowledged. No click is in doubt: at
		// the kill, every request without an answer was a held one.
		srv = n.startServer("http://lf.test")
		base = "http://" + srv.addr
		waitNothingPending(t, base)
		total := rollupTotal(t, n)
		t.Logf("cycle %d: acknowledged %d (this cycle %d), rollup %d", cycle, acked, a, total)
		if total != acked {
			t.Fatalf("cycle %d: rollup total %d, want exactly the %d acknowledged clicks", cycle, total, acked)
		}
		// Every hour's dimension values still sum to its minutes, after
		// kills that land between a flush's write and its journal mark.
		checkDimsInvariant(t, n, n.dbURL)
		// The API reports the same flushed total.
		resp, body := mustDo(t, http.MethodGet, base+"/api/v1/links/crash", token, "")
		var link struct{ Clicks int64 }
		if resp.StatusCode != http.StatusOK || json.Unmarshal(body, &link) != nil || link.Clicks != total {
			t.Fatalf("cycle %d: GET link: %d %s, want clicks %d", cycle, resp.StatusCode, body, total)
		}
	}
	if code := srv.stop(t); code != 0 {
		t.Fatalf("final SIGTERM: exit %d", code)
	}
}

// loadHoldKill runs workers that GET url in a loop, each with at most one
// request outstanding. Once clicks are being acknowledged it holds the
// server's journal commits, waits until every worker's request is held (and
// checks that no 302 leaves meanwhile), kills the server with SIGKILL and
// returns the 302s received: exactly the clicks committed.
func loadHoldKill(t *testing.T, srv *server, dataDir, url string, workers int) (acked int64) {
	t.Helper()
	return loadHoldKillURLs(t, srv, dataDir, []string{url}, workers)[0]
}

// loadHoldKillURLs is loadHoldKill with worker i on urls[i%len(urls)]: it
// returns the 302s received for each URL.
func loadHoldKillURLs(t *testing.T, srv *server, dataDir string, urls []string, workers int) (acked []int64) {
	t.Helper()
	var failed atomic.Int64
	acks := make([]atomic.Int64, len(urls))
	var ack atomic.Int64 // the sum of acks'
	defer func() {
		for i := range acks {
			acked = append(acked, acks[i].Load())
		}
	}()
	var g heldGate
	client := &http.Client{
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		Transport:     &http.Transport{MaxIdleConnsPerHost: workers},
		Timeout:       hangGuard,
	}
	defer client.CloseIdleConnections()
	var wg sync.WaitGroup
	defer func() {
		// On every path, the workers end before the test does: the kill
		// fails their outstanding requests.
		srv.cmd.Process.Kill() // an error only says it has exited already
		<-srv.exited
		wg.Wait()
	}()
	for w := range workers {
		url := urls[w%len(urls)]
		wg.Go(func() {
			for {
				sent := g.request()
				resp, err := client.Get(url)
				if err != nil {
					// Killed while held: the click was never committed.
					failed.Add(1)
					return
				}
				resp.Body.Close()
				if resp.StatusCode != http.StatusFound {
					g.fail(fmt.Sprintf("GET %s: status %d during load", url, resp.StatusCode))
					return
				}
				g.answered(sent)
				acks[w%len(urls)].Add(1)
				ack.Add(1)
			}
		})
	}
	deadline := time.Now().Add(hangGuard)
	for ack.Load() < 100 && time.Now().Before(deadline) && g.problem() == "" {
		time.Sleep(5 * time.Millisecond)
	}
	holdCommits(t, dataDir, &g)
	waitHeld(t, dataDir, int64(workers), &g)

	if err := srv.cmd.Process.Kill(); err != nil {
		t.Fatalf("SIGKILL: %v", err)
	}
	<-srv.exited
	wg.Wait()
	if p := g.problem(); p != "" {
		t.Fatal(p)
	}
	if f := failed.Load(); f != int64(workers) {
		t.Fatalf("%d requests failed at the kill, want %d: one held request per worker", f, workers)
	}
	return nil // the deferred func fills acked
}

// The crash tests' commit hold: the binary is built with -tags
// linkforge_faults (mustBinary), and its committer then holds every journal
// commit while the file holdCommitFile exists in its data dir, reporting
// the clicks waiting in commitHeldFile (linkcounter/fault_hold.go, whose
// names these repeat).
const (
	holdCommitFile = "hold-commit"
	commitHeldFile = "commit-held"
)

// heldGate tells the requests sent before the hold from those sent after:
// none of the latter may be answered with a 302 (their clicks are not
// durable). It also collects the workers' failures for the test goroutine.
type heldGate struct {
	holding atomic.Bool
	mu      sync.Mutex
	err     string
}

// request is called before each request; answered with its result after a
// 302.
func (g *heldGate) request() bool { return g.holding.Load() }

func (g *heldGate) answered(sentWhileHeld bool) {
	if sentWhileHeld {
		g.fail("a request sent while the journal's commits were held was answered 302: the output gate let a click out before it was durable")
	}
}

func (g *heldGate) fail(msg string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.err == "" {
		g.err = msg
	}
}

func (g *heldGate) problem() string {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.err
}

// holdCommits makes the server on dataDir hold every journal commit from
// now on. A click added after the file exists joins a batch whose commit
// checks the file later, so every request sent after this is held.
func holdCommits(t *testing.T, dataDir string, g *heldGate) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dataDir, holdCommitFile), nil, 0o600); err != nil {
		t.Fatalf("hold commits: %v", err)
	}
	g.holding.Store(true)
}

// releaseCommits removes the hold, before a restart on the same data dir,
// and the killed server's last count of held clicks: no server removes it
// now, and the next cycle's waitHeld would otherwise read that stale count
// as the new server's before the new server writes its own.
func releaseCommits(t *testing.T, dataDir string) {
	t.Helper()
	if err := os.Remove(filepath.Join(dataDir, holdCommitFile)); err != nil {
		t.Fatalf("release commits: %v", err)
	}
	if err := os.Remove(filepath.Join(dataDir, commitHeldFile)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("release commits: %v", err)
	}
}

// heldClicks returns the clicks the server on dataDir reports waiting for a
// held commit, or -1 while it reports no hold.
func heldClicks(t *testing.T, dataDir string) int64 {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dataDir, commitHeldFile))
	if errors.Is(err, fs.ErrNotExist) {
		return -1
	}
	if err != nil {
		t.Fatalf("read %s: %v", commitHeldFile, err)
	}
	n, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	if err != nil {
		t.Fatalf("%s holds %q: %v", commitHeldFile, b, err)
	}
	return n
}

// heldWindow is how long the test watches a complete hold for a 302 that
// leaves anyway (a Record that stops waiting for its commit). It bounds
// nothing about speed: a correct server never answers a held request.
const heldWindow = 200 * time.Millisecond

// waitHeld waits until the server on dataDir holds exactly want clicks: one
// per worker, each worker waiting on one request. From then on no request
// is in doubt: every 302 received is a committed click, and every request
// without an answer is a held, uncommitted one. It then watches for
// heldWindow that nothing leaves.
func waitHeld(t *testing.T, dataDir string, want int64, g *heldGate) {
	t.Helper()
	deadline := time.Now().Add(hangGuard)
	for {
		if p := g.problem(); p != "" {
			t.Fatal(p)
		}
		n := heldClicks(t, dataDir)
		if n > want {
			t.Fatalf("%d clicks wait for the held commit, want at most %d: one per worker", n, want)
		}
		if n == want {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the server reports %d clicks held after %v, want %d (is the binary built with -tags linkforge_faults?)", n, hangGuard, want)
		}
		time.Sleep(2 * time.Millisecond)
	}
	time.Sleep(heldWindow)
	if p := g.problem(); p != "" {
		t.Fatal(p)
	}
	if n := heldClicks(t, dataDir); n != want {
		t.Fatalf("after %v of hold, %d clicks wait for the commit, want still %d", heldWindow, n, want)
	}
}

// waitNothingPending polls the server's metrics until its counter reports no
// unflushed click: the start-up reconciliation has flushed the journal.
func waitNothingPending(t *testing.T, base string) {
	t.Helper()
	deadline := time.Now().Add(hangGuard)
	for time.Now().Before(deadline) {
		resp, err := http.Get(base + "/metrics")
		if err != nil {
			t.Fatalf("GET /metrics: %v", err)
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			t.Fatalf("read /metrics: %v", err)
		}
		for _, line := range strings.Split(string(body), "\n") {
			if line == "linkforge_clicks_pending 0" {
				return
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("the restarted server still reports unflushed clicks after %v", hangGuard)
}

// rollupTotal sums the main store's rollup rows, read straight from the
// database.
func rollupTotal(t *testing.T, n *node) int64 {
	t.Helper()
	var db *sql.DB
	if n.dbURL == "" {
		db = mustOpenSQL(t, "sqlite", "file:"+filepath.Join(n.dataDir, sqliteFile)+"?mode=ro&_pragma=busy_timeout(5000)")
	} else {
		db = mustOpenSQL(t, "pgx", n.dbURL)
	}
	defer db.Close()
	var total int64
	if err := db.QueryRowContext(context.Background(), "SELECT COALESCE(SUM(count), 0) FROM click_rollup").Scan(&total); err != nil {
		t.Fatalf("sum rollup: %v", err)
	}
	return total
}

// TestGracefulStopFlushes: with a flush interval far away, SIGTERM must flush
// every acknowledged click before the process exits 0. The rollup is read
// straight from the database with no restart, so start-up reconciliation
// cannot hide a missing flush.
func TestGracefulStopFlushes(t *testing.T) {
	n := newNode(t, "")
	n.serveArgs = []string{"--flush-interval", "1h"}
	token := strings.TrimSpace(n.mustRun("token", "create", "--tenant", "acme"))
	srv := n.startServer("http://lf.test")
	base := "http://" + srv.addr
	if resp, body := mustDo(t, http.MethodPost, base+"/api/v1/links", token,
		`{"url":"https://example.com/stop","slug":"stop"}`); resp.StatusCode != http.StatusCreated {
		t.Fatalf("create link: %d %s", resp.StatusCode, body)
	}
	const clicks = 50
	for i := range clicks {
		if resp, _ := mustDo(t, http.MethodGet, base+"/stop", "", ""); resp.StatusCode != http.StatusFound {
			t.Fatalf("click %d: status %d", i, resp.StatusCode)
		}
	}
	// HEAD and link previews are redirected but not counted.
	if resp, _ := mustDo(t, http.MethodHead, base+"/stop", "", ""); resp.StatusCode != http.StatusFound {
		t.Fatalf("HEAD: status %d", resp.StatusCode)
	}
	req, _ := http.NewRequest(http.MethodGet, base+"/stop", nil)
	req.Header.Set("User-Agent", "Slackbot-LinkExpanding 1.0 (+https://api.slack.com/robots)")
	resp, err := noRedirects.Do(req)
	if err != nil || resp.StatusCode != http.StatusFound {
		t.Fatalf("preview GET: %v %v", resp, err)
	}
	resp.Body.Close()

	if before := rollupTotal(t, n); before != 0 {
		t.Fatalf("rollup before stop = %d, want 0 (the flush is an hour away)", before)
	}
	if code := srv.stop(t); code != 0 {
		t.Fatalf("SIGTERM: exit %d, want 0", code)
	}
	if got := rollupTotal(t, n); got != clicks {
		t.Fatalf("rollup after graceful stop = %d, want %d", got, clicks)
	}
}
