package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/linkforge/linkforge/internal/pgtest"
)

// TestCrashKeepsAcknowledgedClicks is the output gate's proof with the real
// binary: clicks are driven over HTTP, counting every 302 received; the
// process is killed with SIGKILL in the middle of the load, restarted, and
// the rollup must hold every acknowledged click and at most the requests that
// were in flight at the kill on top. Five cycles, on each backend; the flush
// interval is short so that kills also land in the middle of flushes.
func TestCrashKeepsAcknowledgedClicks(t *testing.T) {
	if testing.Short() {
		t.Skip("kills and restarts the real binary five times")
	}
	backends := []struct {
		name  string
		dbURL func(testing.TB) string
	}{
		{"sqlite", func(testing.TB) string { return "" }},
		{"postgres", pgtest.New},
	}
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			n := newNode(t, b.dbURL(t))
			n.serveArgs = []string{"--flush-interval", "50ms"}
			testCrashCycles(t, n)
		})
	}
}

func testCrashCycles(t *testing.T, n *node) {
	const cycles = 5
	const workers = 16
	token := strings.TrimSpace(n.mustRun("token", "create", "--tenant", "acme"))

	srv := n.startServer("http://lf.test")
	base := "http://" + srv.addr
	resp, body := mustDo(t, http.MethodPost, base+"/api/v1/links", token,
		`{"url":"https://example.com/crash","slug":"crash"}`)
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("create link: %d %s", resp.StatusCode, body)
	}

	var acked, inFlight int64 // over all cycles
	for cycle := 1; cycle <= cycles; cycle++ {
		a, f := loadThenKill(t, srv, base+"/crash", workers)
		acked += a
		inFlight += f
		if a == 0 {
			t.Fatalf("cycle %d: no click was acknowledged before the kill", cycle)
		}

		// Restart: reconciliation flushes what the journal holds without a
		// new click; wait until the rollup has caught up with what was
		// acknowledged, then check it holds nothing beyond the in-flight.
		srv = n.startServer("http://lf.test")
		base = "http://" + srv.addr
		waitNothingPending(t, base)
		total := rollupTotal(t, n)
		t.Logf("cycle %d: acknowledged %d (this cycle %d), in flight at kills %d, rollup %d",
			cycle, acked, a, inFlight, total)
		if total < acked || total > acked+inFlight {
			t.Fatalf("cycle %d: rollup total %d, want between acknowledged %d and acknowledged+in-flight %d",
				cycle, total, acked, acked+inFlight)
		}
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

// loadThenKill runs workers that GET url in a loop, each with at most one
// request outstanding, kills the server with SIGKILL once clicks are being
// acknowledged, and returns the 302s received and the requests that failed
// (the ones that may have been counted without an answer).
func loadThenKill(t *testing.T, srv *server, url string, workers int) (acked, inFlight int64) {
	t.Helper()
	var ack, failed atomic.Int64
	client := &http.Client{
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		Transport:     &http.Transport{MaxIdleConnsPerHost: workers},
		Timeout:       hangGuard,
	}
	defer client.CloseIdleConnections()
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				resp, err := client.Get(url)
				if err != nil {
					// The process is gone: this request may or may not
					// have been counted. The worker stops: at most one
					// request per worker is in doubt.
					failed.Add(1)
					return
				}
				resp.Body.Close()
				if resp.StatusCode != http.StatusFound {
					t.Errorf("GET %s: status %d during load", url, resp.StatusCode)
					return
				}
				ack.Add(1)
			}
		}()
	}
	// Kill in the middle of the load: once a few hundred clicks are in, a
	// point at which flushes (every 50 ms) have happened too.
	deadline := time.Now().Add(hangGuard)
	for ack.Load() < 300 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if err := srv.cmd.Process.Kill(); err != nil {
		t.Fatalf("SIGKILL: %v", err)
	}
	<-srv.exited
	wg.Wait()
	return ack.Load(), failed.Load()
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
