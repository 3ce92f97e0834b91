package web_test

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/internal/testdb"
	"github.com/linkforge/linkforge/web"
)

// heldImport is an import whose body the test sends by hand, over a raw
// connection: it runs on the server for as long as the test holds it.
type heldImport struct {
	t    *testing.T
	conn net.Conn
	br   *bufio.Reader
}

// startImport sends the headers of a chunked import with
// "Expect: 100-continue", and returns once the server answers 100: it
// does when the handler first reads the body, so the import has begun
// (its place taken, its clock started). No body is sent yet.
func (e *env) startImport(token string) *heldImport {
	e.t.Helper()
	h := e.dialImport(token, "csv", "Expect: 100-continue\r\n")
	resp, err := http.ReadResponse(h.br, nil)
	if err != nil {
		e.t.Fatal(err)
	}
	if resp.StatusCode != http.StatusContinue {
		e.t.Fatalf("import answered %d before its body, want 100", resp.StatusCode)
	}
	return h
}

// dialImport sends the headers of a chunked import, with extra header
// lines.
func (e *env) dialImport(token, format, extra string) *heldImport {
	e.t.Helper()
	conn, err := net.Dial("tcp", strings.TrimPrefix(e.url, "http://"))
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() { conn.Close() })
	fmt.Fprintf(conn, "POST /api/v1/import?format=%s HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\n"+
		"Content-Type: text/csv\r\nTransfer-Encoding: chunked\r\n%s\r\n", format, token, extra)
	return &heldImport{t: e.t, conn: conn, br: bufio.NewReader(conn)}
}

// send sends s as one chunk of the body.
func (h *heldImport) send(s string) {
	if _, err := fmt.Fprintf(h.conn, "%x\r\n%s\r\n", len(s), s); err != nil {
		h.t.Fatal(err)
	}
}

// finish ends the body and reads the answer.
func (h *heldImport) finish() response {
	h.t.Helper()
	fmt.Fprint(h.conn, "0\r\n\r\n")
	return h.answer()
}

// answer reads the answer.
func (h *heldImport) answer() response {
	h.t.Helper()
	resp, err := http.ReadResponse(h.br, nil)
	if err != nil {
		h.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return response{status: resp.StatusCode, header: resp.Header, body: b}
}

// emptyImport imports a file of no links with token.
func (e *env) emptyImport(token string) response {
	e.t.Helper()
	return e.postFile(token, "csv", "text/csv", strings.NewReader("slug,url\n"))
}

// TestImportConcurrencyIsLimited: a token runs one import at a time (a
// second answers 429) and a node at most Config.MaxConcurrentImports
// (then 503), both with Retry-After; once an import ends, its place is
// free again. Each running import holds at most a record and a batch, so
// the node's import memory is bounded too.
func TestImportConcurrencyIsLimited(t *testing.T) {
	s := testdb.SQLite(t)
	e := newEnv(t, s, func(c *web.Config) { c.MaxConcurrentImports = 2 })
	tenantA, tokA := mustTenantToken(t, s, "acme")
	_, tokB := mustTenantToken(t, s, "beta")
	tenantC, tokC := mustTenantToken(t, s, "gamma")

	a := e.startImport(tokA)
	a.send("slug,url\n")
	r := e.emptyImport(tokA)
	if p := mustProblem(t, r, http.StatusTooManyRequests, ""); p.Code != linkforge.ERateLimited || r.header.Get("Retry-After") == "" {
		t.Errorf("second import of a token = %+v, Retry-After %q", p, r.header.Get("Retry-After"))
	}
	b := e.startImport(tokB)
	r = e.emptyImport(tokC)
	if p := mustProblem(t, r, http.StatusServiceUnavailable, ""); p.Code != linkforge.EUnavailable || r.header.Get("Retry-After") == "" {
		t.Errorf("import past the node's limit = %+v, Retry-After %q", p, r.header.Get("Retry-After"))
	}

	a.send("a1,https://example.com/a1\n")
	if r := a.finish(); r.status != http.StatusOK || !strings.Contains(string(r.body), `"created":1`) {
		t.Fatalf("held import = %s", r)
	}
	if res := e.mustImport(tokC, "csv", []byte("slug,url\nc1,https://example.com/c1\n")); res.Created != 1 {
		t.Errorf("import after a place came free = %+v", res)
	}
	b.send("slug,url\n")
	mustStatus(t, b.finish(), http.StatusOK)
	if len(mustTenantLinks(t, s, tenantA)) != 1 || len(mustTenantLinks(t, s, tenantC)) != 1 {
		t.Error("the imports that ran did not write their links")
	}
}

// TestImportUploadTimeIsBounded: an upload that takes longer than
// web.MaxImportUploadTime in all is cut (408), however steadily it
// trickles: each read no longer buys more time. The server's clock is the
// test's; nothing sleeps.
func TestImportUploadTimeIsBounded(t *testing.T) {
	s := testdb.SQLite(t)
	e := newEnv(t, s)
	tenant, token := mustTenantToken(t, s, "acme")
	h := e.startImport(token)
	e.clock.Add(web.MaxImportUploadTime + time.Second)
	h.send("slug,url\nlate,https://example.com/late\n")
	r := h.finish()
	if p := mustProblem(t, r, http.StatusRequestTimeout, ""); !strings.Contains(p.Detail, "minutes") {
		t.Errorf("problem = %+v, want it to say how long an upload may take", p)
	}
	if links := mustTenantLinks(t, s, tenant); len(links) != 0 {
		t.Errorf("%d links written by the cut upload", len(links))
	}
}

// TestImportHugeRecordOverHTTP: a single JSON element of 48 MiB is not
// read whole: the import answers 200 with the links before it and a 413
// line where it broke off. The body is sent while the answer is read, over
// a raw connection, since the server stops reading it.
func TestImportHugeRecordOverHTTP(t *testing.T) {
	s := testdb.SQLite(t)
	e := newEnv(t, s)
	tenant, token := mustTenantToken(t, s, "acme")
	h := e.dialImport(token, "json", "")
	go func() {
		// Errors are expected once the server stops reading.
		head := `[{"slug":"first","url":"https://example.com/1"},{"slug":"big","url":"https://example.com/2","title":"`
		fmt.Fprintf(h.conn, "%x\r\n%s\r\n", len(head), head)
		chunk := strings.Repeat("a", 1<<20)
		for range 48 {
			if _, err := fmt.Fprintf(h.conn, "%x\r\n%s\r\n", len(chunk), chunk); err != nil {
				return
			}
		}
		fmt.Fprintf(h.conn, "3\r\n\"}]\r\n0\r\n\r\n")
	}()
	r := h.answer()
	mustStatus(t, r, http.StatusOK)
	res := mustJSON[importBody](t, r)
	if res.Created != 1 || res.Failed != 1 || len(res.Errors) != 1 {
		t.Fatalf("import = %+v, want first created and the break", res)
	}
	if le := res.Errors[0]; le.Line != 2 || le.Problem.Status != http.StatusRequestEntityTooLarge || !strings.Contains(le.Problem.Detail, "1024 KiB") {
		t.Errorf("break = %+v, want a 413 at element 2 naming the cap", le)
	}
	if links := mustTenantLinks(t, s, tenant); len(links) != 1 {
		t.Errorf("%d links, want 1", len(links))
	}
}

// trickle sends s a byte per chunk, the server's clock moved on by gap
// before each; write errors are ignored, since a server that cut the
// upload stops reading.
func (h *heldImport) trickle(clock *clock, s string, gap time.Duration) {
	for i := range len(s) {
		clock.Add(gap)
		fmt.Fprintf(h.conn, "1\r\n%s\r\n", s[i:i+1])
	}
}

// answerWithin reads the answer, failing the test if none comes within
// guard: a hang guard, not a timing assertion (the cut answers at once;
// without it the server waits on the body).
func (h *heldImport) answerWithin(guard time.Duration) response {
	h.t.Helper()
	if err := h.conn.SetReadDeadline(time.Now().Add(guard)); err != nil {
		h.t.Fatal(err)
	}
	resp, err := http.ReadResponse(h.br, nil)
	if err != nil {
		h.t.Fatalf("no answer to the trickled upload: %v (the server is still reading it)", err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return response{status: resp.StatusCode, header: resp.Header, body: b}
}

// TestImportSlowUploadIsCut: an upload that averages under
// web.MinImportRate after its first web.ImportRateGrace is cut with a 408
// naming the rate, and its import place is free at once: a body trickled
// at a byte per 9 s, each read within the idle deadline, held the place
// for the whole 10 minutes, and four such tokens every place of a node.
// Cut in the header, the answer is a problem; cut after some lines, those
// are imported and the break is a 408 line. The server's clock is the
// test's; nothing sleeps.
func TestImportSlowUploadIsCut(t *testing.T) {
	s := testdb.SQLite(t)
	e := newEnv(t, s, func(c *web.Config) { c.MaxConcurrentImports = 1 })
	tenant, tokA := mustTenantToken(t, s, "acme")
	_, tokB := mustTenantToken(t, s, "beta")

	h := e.startImport(tokA)
	// 5 bytes in 45 s: cut at the first read past 30 s.
	h.trickle(e.clock, "slug,", 9*time.Second)
	r := h.answerWithin(10 * time.Second)
	p := mustProblem(t, r, http.StatusRequestTimeout, "")
	if p.Code != linkforge.ERequestTimeout || !strings.Contains(p.Detail, "KiB/s") {
		t.Errorf("problem = %+v, want a request_timeout naming the rate", p)
	}
	// The place is free: the node's only one, taken by another token.
	if res := e.mustImport(tokB, "csv", []byte("slug,url\nb1,https://example.com/b1\n")); res.Created != 1 {
		t.Errorf("import after the cut = %+v", res)
	}

	// Lines that came in time are kept; the break is a 408 line.
	h = e.startImport(tokA)
	h.send("slug,url\na1,https://example.com/a1\n")
	h.trickle(e.clock, "a2,https:", 9*time.Second)
	r = h.answerWithin(10 * time.Second)
	mustStatus(t, r, http.StatusOK)
	res := mustJSON[importBody](t, r)
	if res.Created != 1 || res.Failed != 1 || len(res.Errors) != 1 ||
		res.Errors[0].Problem.Status != http.StatusRequestTimeout || !strings.Contains(res.Errors[0].Problem.Detail, "KiB/s") {
		t.Fatalf("import cut after a line = %s", r.body)
	}
	if links := mustTenantLinks(t, s, tenant); len(links) != 1 || links[0].Slug != "a1" {
		t.Errorf("links = %+v, want a1 alone", links)
	}
}
