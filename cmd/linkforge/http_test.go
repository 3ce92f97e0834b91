package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
)

// mustLink creates a token and a link on a fresh node's server and returns
// the server's base URL and the token.
func mustLink(t *testing.T, n *node, srv *server, slug string) (base, token string) {
	t.Helper()
	base = "http://" + srv.addr
	token = strings.TrimSpace(n.mustRun("token", "create", "--tenant", "acme"))
	if resp, body := mustDo(t, http.MethodPost, base+"/api/v1/links", token,
		`{"url":"https://example.com/`+slug+`","slug":"`+slug+`"}`); resp.StatusCode != http.StatusCreated {
		t.Fatalf("create link: %d %s", resp.StatusCode, body)
	}
	return base, token
}

// waitServerRead polls /proc/net/tcp until the server's end of conn has no
// unread bytes: the server process has read everything sent so far (the
// request head), so its request is in progress rather than queued.
func waitServerRead(t *testing.T, conn net.Conn) {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Skip("waiting for the server to read a request needs Linux's /proc/net/tcp")
	}
	server := fmt.Sprintf(":%04X", conn.RemoteAddr().(*net.TCPAddr).Port)
	client := fmt.Sprintf(":%04X", conn.LocalAddr().(*net.TCPAddr).Port)
	deadline := time.Now().Add(hangGuard)
	for time.Now().Before(deadline) {
		data, err := os.ReadFile("/proc/net/tcp")
		if err != nil {
			t.Fatalf("cannot tell when the server has read the request: %v", err)
		}
		for _, line := range strings.Split(string(data), "\n") {
			f := strings.Fields(line)
			// local_address rem_address st tx_queue:rx_queue
			if len(f) > 4 && strings.HasSuffix(f[1], server) && strings.HasSuffix(f[2], client) &&
				strings.HasSuffix(f[4], ":00000000") {
				return
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatal("the server did not read the request")
}

// trickle opens a connection to addr, sends head and then one byte of an
// announced body every gap until the server closes the connection, and
// returns a channel that receives the time it was closed (by the server:
// a write or read fails) once it is.
func trickle(t *testing.T, addr, head string, gap time.Duration) (net.Conn, <-chan time.Time) {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	if _, err := io.WriteString(conn, head); err != nil {
		t.Fatal(err)
	}
	closed := make(chan time.Time, 1)
	done := make(chan struct{})
	go func() {
		// The reader sees the answer, if any, and then EOF or a reset.
		io.Copy(io.Discard, conn)
		closed <- time.Now()
		close(done)
	}()
	go func() {
		for {
			select {
			case <-done:
				return
			case <-time.After(gap):
			}
			if _, err := conn.Write([]byte(" ")); err != nil {
				return
			}
		}
	}()
	return conn, closed
}

// TestGracefulStopWithSlowClient: a client trickling a request body while
// SIGTERM arrives does not take the final flush's time: the process cuts it
// after the HTTP drain budget, flushes every acknowledged click and exits 0
// (issue 10, item 3). Before, HTTP drain and flush shared one 25 s
// deadline, the slow body ate it, and the flush failed with exit 1.
func TestGracefulStopWithSlowClient(t *testing.T) {
	n := newNode(t, "")
	n.serveArgs = []string{"--flush-interval", "1h"}
	srv := n.startServer("http://lf.test")
	base, token := mustLink(t, n, srv, "slow")
	const clicks = 20
	for i := range clicks {
		if resp, _ := mustDo(t, http.MethodGet, base+"/slow", "", ""); resp.StatusCode != http.StatusFound {
			t.Fatalf("click %d: status %d", i, resp.StatusCode)
		}
	}
	// A body of 10,000 bytes at one byte a second: hours.
	conn, closed := trickle(t, srv.addr, "POST /api/v1/links HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer "+token+
		"\r\nContent-Type: application/json\r\nContent-Length: 10000\r\n\r\n{", time.Second)
	waitServerRead(t, conn)

	start := time.Now()
	if code := srv.stop(t); code != 0 {
		t.Fatalf("SIGTERM with a slow client: exit %d, want 0\nstderr:\n%s", code, srv.stderr.String())
	}
	took := time.Since(start)
	select {
	case <-closed:
	case <-time.After(hangGuard):
		t.Fatal("the slow client's connection is still open after the process exited")
	}
	if got := rollupTotal(t, n); got != clicks {
		t.Fatalf("rollup after graceful stop = %d, want %d", got, clicks)
	}
	if !strings.Contains(srv.stderr.String(), `"msg":"cutting connections still open after the drain budget"`) {
		t.Errorf("no log of the cut connection:\n%s", srv.stderr.String())
	}
	t.Logf("stopped in %v with a slow client", took.Round(time.Millisecond))
}

// TestSlowConnectionsAreCut: 100 requests that announce a body and never
// send it, and 100 authenticated POSTs that trickle theirs a byte every
// 3 s, are all closed within the read timeout (15 s) and a margin, while
// ordinary redirects are served meanwhile (issue 10, item 5). Before, the
// first kind got no answer and the second kept its connection forever.
func TestSlowConnectionsAreCut(t *testing.T) {
	n := newNode(t, "")
	// No admin rate limit: the 100 trickling POSTs share the test's token,
	// and with the default 20/s and burst 40 the API read below would be
	// refused when they are all sent within a second, which is not what
	// this test is about.
	n.serveArgs = []string{"--rate-limit", "0"}
	srv := n.startServer("http://lf.test")
	base, token := mustLink(t, n, srv, "cut")

	start := time.Now()
	var conns []<-chan time.Time
	for range 100 {
		_, c := trickle(t, srv.addr, "GET /cut HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\n", time.Hour)
		conns = append(conns, c)
		_, c = trickle(t, srv.addr, "POST /api/v1/links HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer "+token+
			"\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{", 3*time.Second)
		conns = append(conns, c)
	}
	// Normal traffic is served while they are open.
	for i := range 50 {
		if resp, _ := mustDo(t, http.MethodGet, base+"/cut", "", ""); resp.StatusCode != http.StatusFound {
			t.Fatalf("redirect %d during the slow connections: status %d", i, resp.StatusCode)
		}
	}
	if resp, body := mustDo(t, http.MethodGet, base+"/api/v1/links", token, ""); resp.StatusCode != http.StatusOK {
		t.Fatalf("API during the slow connections: %d %s", resp.StatusCode, body)
	}

	limit := defaultHTTPLimits.read + 5*time.Second
	deadline := time.After(limit + 10*time.Second) // the guard; the assertion is below
	var worst time.Duration
	for i, c := range conns {
		select {
		case at := <-c:
			worst = max(worst, at.Sub(start))
		case <-deadline:
			t.Fatalf("connection %d still open %v after it was opened", i, time.Since(start).Round(time.Second))
		}
	}
	if worst > limit {
		t.Errorf("the last slow connection closed after %v, want within %v", worst.Round(time.Millisecond), limit)
	}
	t.Logf("200 slow connections closed within %v", worst.Round(time.Millisecond))
	if !strings.Contains(srv.stderr.String(), `"msg":"listening"`) || strings.Contains(srv.stderr.String(), `"level":"ERROR"`) {
		t.Errorf("slow clients were logged as errors:\n%s", srv.stderr.String())
	}
}

// TestMaxConnections: with --max-connections 3, a fourth connection is not
// served while three are open, and is as soon as one closes.
func TestMaxConnections(t *testing.T) {
	n := newNode(t, "")
	n.serveArgs = []string{"--max-connections", "3"}
	srv := n.startServer("http://lf.test")

	get := func(conn net.Conn, br *bufio.Reader) error {
		if _, err := io.WriteString(conn, "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"); err != nil {
			return err
		}
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			return err
		}
		io.Copy(io.Discard, resp.Body)
		return resp.Body.Close()
	}
	var held []net.Conn
	for i := range 3 {
		conn, err := net.Dial("tcp", srv.addr)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		conn.SetDeadline(time.Now().Add(hangGuard))
		if err := get(conn, bufio.NewReader(conn)); err != nil {
			t.Fatalf("connection %d: %v", i, err)
		}
		held = append(held, conn) // kept alive, idle
	}

	conn, err := net.Dial("tcp", srv.addr) // the kernel accepts it; the server does not yet
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	br := bufio.NewReader(conn)
	answered := make(chan error, 1)
	go func() { answered <- get(conn, br) }()
	// A negative check needs some wait; a served request takes
	// milliseconds, so half a second without an answer is telling.
	select {
	case err := <-answered:
		t.Fatalf("a fourth connection was served past --max-connections 3 (err %v)", err)
	case <-time.After(500 * time.Millisecond):
	}
	held[0].Close()
	conn.SetDeadline(time.Now().Add(hangGuard))
	if err := <-answered; err != nil {
		t.Fatalf("the waiting connection after one closed: %v", err)
	}
}

// TestFirstRunPolish: on the real binary, GET / and unknown slugs follow
// --root-url and --not-found-url, --rate-limit reaches the API, HEAD probes
// answer, /metrics carries linkforge_build_info with the commit `linkforge
// version` prints, and stderr (a pipe here, not a terminal) holds only JSON
// lines: no plain-text banner (issue 10, first-run polish).
func TestFirstRunPolish(t *testing.T) {
	n := newNode(t, "")
	n.serveArgs = []string{"--root-url", "https://www.example.com/home", "--not-found-url", "/dashboard", "--rate-limit", "1/m:3"}
	srv := n.startServer("http://lf.test")
	base, token := mustLink(t, n, srv, "polish") // one API request of the 3

	for path, want := range map[string]string{"/": "https://www.example.com/home", "/nope": "/dashboard"} {
		resp, _ := mustDo(t, http.MethodGet, base+path, "", "")
		if resp.StatusCode != http.StatusFound || resp.Header.Get("Location") != want {
			t.Errorf("GET %s: %d to %q, want 302 to %q", path, resp.StatusCode, resp.Header.Get("Location"), want)
		}
	}
	for _, path := range []string{"/healthz", "/readyz", "/metrics", "/dashboard", "/static/dashboard.js", "/api/v1/openapi.json", "/favicon.ico"} {
		if resp, body := mustDo(t, http.MethodHead, base+path, "", ""); resp.StatusCode != http.StatusOK || len(body) != 0 {
			t.Errorf("HEAD %s: %d with %d bytes", path, resp.StatusCode, len(body))
		}
	}
	var statuses []int
	for range 3 {
		resp, _ := mustDo(t, http.MethodGet, base+"/api/v1/links", token, "")
		statuses = append(statuses, resp.StatusCode)
	}
	if fmt.Sprint(statuses) != "[200 200 429]" {
		t.Errorf("API statuses with --rate-limit 1/m:3 = %v, want [200 200 429]", statuses)
	}

	version := n.mustRun("version")
	if !strings.HasPrefix(version, "linkforge "+testVersion+"\n") {
		t.Errorf("version output %q, want the -ldflags stamp %s first", version, testVersion)
	}
	var commit string
	for _, line := range strings.Split(version, "\n") {
		if c, ok := strings.CutPrefix(line, "commit: "); ok {
			commit = c
		}
	}
	if commit == "" {
		t.Fatalf("version output %q has no commit", version)
	}
	// A build in a git worktree (a .git file, not a directory) has no VCS
	// stamp: Go then reports no revision, and we say "unknown".
	if head, err := exec.Command("git", "rev-parse", "HEAD").Output(); err == nil && commit != "unknown" &&
		!strings.HasPrefix(commit, strings.TrimSpace(string(head))) {
		t.Errorf("version commit %q, want the checkout's %s", commit, head)
	}
	_, body := mustDo(t, http.MethodGet, base+"/metrics", "", "")
	if want := `commit="` + commit + `"`; !strings.Contains(string(body), "linkforge_build_info{") || !strings.Contains(string(body), want) ||
		!strings.Contains(string(body), `version="`+testVersion+`"`) {
		t.Errorf("/metrics lacks linkforge_build_info with %s and version %s", want, testVersion)
	}
	if want := `"version":"` + testVersion + `","commit":"` + commit + `"`; !strings.Contains(srv.stderr.String(), want) {
		t.Errorf("the startup log lacks %s", want)
	}

	if code := srv.stop(t); code != 0 {
		t.Fatalf("exit %d", code)
	}
	for _, line := range strings.Split(strings.TrimSpace(srv.stderr.String()), "\n") {
		if !json.Valid([]byte(line)) {
			t.Errorf("stderr line is not JSON: %q", line)
		}
	}
}

// startLimited serves h on a loopback port through newHTTPServer with
// limits, the server serve builds, and returns its address.
func startLimited(t *testing.T, h http.Handler, limits httpLimits) string {
	t.Helper()
	ln, err := listen("127.0.0.1:0", 0)
	if err != nil {
		t.Fatal(err)
	}
	srv := newHTTPServer(h, slog.New(slog.DiscardHandler), limits)
	go srv.Serve(ln) //nolint:errcheck // Serve returns when the test closes the listener
	t.Cleanup(func() { srv.Close() })
	return ln.Addr().String()
}

// TestIdleConnectionsClose: a keep-alive connection without a request is
// closed after the idle timeout (here shortened; serve uses 75 s).
func TestIdleConnectionsClose(t *testing.T) {
	limits := defaultHTTPLimits
	limits.idle = 200 * time.Millisecond
	addr := startLimited(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}), limits)
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(hangGuard))
	br := bufio.NewReader(conn)
	// The server's idle timer starts once it has written the answer, after
	// the request left here and before the answer is read here: timed from
	// the request, the idle time seen is never shorter than the server's.
	start := time.Now()
	io.WriteString(conn, "GET / HTTP/1.1\r\nHost: x\r\n\r\n")
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if _, err := br.ReadByte(); err != io.EOF {
		t.Fatalf("idle connection: read %v, want EOF", err)
	}
	// The upper bound is the limit under test, with room for a loaded
	// machine; without IdleTimeout the connection would wait for the 15 s
	// read timeout.
	if idle := time.Since(start); idle < limits.idle || idle > limits.idle+5*time.Second {
		t.Errorf("closed after %v, want just after the idle timeout %v", idle, limits.idle)
	}
}

// TestWebSocketOutlivesWriteTimeout: an upgraded connection is hijacked,
// and gorilla/websocket clears the deadlines the server set, so the
// server's read and write timeouts do not cut a live dashboard: a socket
// keeps receiving for several times the (shortened) write timeout.
func TestWebSocketOutlivesWriteTimeout(t *testing.T) {
	limits := httpLimits{readHeader: time.Second, read: 300 * time.Millisecond, write: 300 * time.Millisecond, idle: time.Second}
	upgrader := websocket.Upgrader{}
	addr := startLimited(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		conn, err := upgrader.Upgrade(w, r, nil)
		if err != nil {
			return
		}
		defer conn.Close()
		for i := 0; ; i++ {
			if err := conn.WriteMessage(websocket.TextMessage, []byte(fmt.Sprint(i))); err != nil {
				return
			}
			time.Sleep(50 * time.Millisecond)
		}
	}), limits)
	conn, _, err := websocket.DefaultDialer.Dial("ws://"+addr+"/", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetReadDeadline(time.Now().Add(hangGuard))
	start := time.Now()
	n := 0
	for time.Since(start) < 5*limits.write {
		if _, _, err := conn.ReadMessage(); err != nil {
			t.Fatalf("after %v and %d messages: %v", time.Since(start).Round(time.Millisecond), n, err)
		}
		n++
	}
}
