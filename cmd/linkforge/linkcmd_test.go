package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/classify"
	"github.com/linkforge/linkforge/client"
	"github.com/linkforge/linkforge/internal/testdb"
	"github.com/linkforge/linkforge/linkcounter"
	"github.com/linkforge/linkforge/linkcounter/clicklog"
	"github.com/linkforge/linkforge/web"
)

// apiServer is the real HTTP handler on a real SQLite store and a real
// LinkCounter, started for the link commands.
type apiServer struct {
	url, token string
	flush      func() // flushes every click to the store; counts no more
	// store is the server's, for another tenant's token (apiToken).
	store linkforge.Store
}

// apiToken creates the tenant if it is new and returns a new API token
// of it.
func apiToken(t *testing.T, st linkforge.Store, tenantName string) string {
	t.Helper()
	ctx := context.Background()
	tenant, err := st.EnsureTenant(ctx, tenantName)
	if err != nil {
		t.Fatal(err)
	}
	secret, hash, display := linkforge.NewToken()
	if _, err := st.CreateToken(ctx, linkforge.Token{TenantID: tenant.ID, Hash: hash, Display: display}); err != nil {
		t.Fatal(err)
	}
	return secret
}

func startAPIServer(t *testing.T) apiServer {
	t.Helper()
	ctx := context.Background()
	st := testdb.SQLite(t)
	secret := apiToken(t, st, "acme")
	j, err := clicklog.Open(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { j.Close() })
	counter, err := linkcounter.New(ctx, linkcounter.Config{Store: st.(linkcounter.Store), Journal: j, FlushInterval: time.Hour, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	if err := counter.Start(ctx); err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	flush := func() {
		once.Do(func() {
			ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
			defer cancel()
			if err := counter.Stop(ctx); err != nil {
				t.Errorf("stop counter: %v", err)
			}
		})
	}
	t.Cleanup(flush)
	pub, _ := url.Parse("http://lf.test")
	h, err := web.New(web.Config{Store: st, Counter: counter, Exhaustion: counter, Skips: counter, Readiness: counter, Classifier: classify.New(classify.Config{}), PublicURL: pub,
		RateLimit: 1e6, RateBurst: 1e6, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(h)
	t.Cleanup(hs.Close)
	return apiServer{url: hs.URL, token: secret, flush: flush, store: st}
}

// runLink runs a command line in process with env as the environment and
// fails t unless it exits with want.
func runLink(t *testing.T, env map[string]string, want int, args ...string) (stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	if code := run(context.Background(), args, &out, &errOut, envOf(env)); code != want {
		t.Fatalf("linkforge %s: exit %d, want %d\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), code, want, out.String(), errOut.String())
	}
	return out.String(), errOut.String()
}

func mustJSONOut[T any](t *testing.T, out string) T {
	t.Helper()
	var v T
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		t.Fatalf("output is not the JSON expected: %v\n%s", err, out)
	}
	return v
}

// tableRows splits a table's output into rows of fields.
func tableRows(out string) [][]string {
	var rows [][]string
	for _, line := range strings.Split(strings.TrimRight(out, "\n"), "\n") {
		rows = append(rows, strings.Fields(line))
	}
	return rows
}

// TestLinkCommands runs every link command against a started server:
// tables for people, --json for scripts, the problem of a refusal on
// stderr with exit 1, bad usage exit 2.
func TestLinkCommands(t *testing.T) {
	srv := startAPIServer(t)
	env := map[string]string{"LINKFORGE_SERVER": srv.url, "LINKFORGE_TOKEN": srv.token}

	out, _ := runLink(t, env, exitOK, "link", "create", "--url", "https://example.com/a", "--slug", "a",
		"--tag", "x", "--tag", "y", "--max-clicks", "5", "--expires-at", "2030-01-02T03:04:05Z", "--json")
	a := mustJSONOut[client.Link](t, out)
	if a.Slug != "a" || a.ShortURL != "http://lf.test/a" || len(a.Tags) != 2 || a.MaxClicks == nil || *a.MaxClicks != 5 ||
		a.ExpiresAt == nil || a.ExpiresAt.Format(time.RFC3339) != "2030-01-02T03:04:05Z" {
		t.Errorf("created %+v", a)
	}
	// Flags beat the environment.
	out, _ = runLink(t, map[string]string{"LINKFORGE_SERVER": "http://127.0.0.1:1", "LINKFORGE_TOKEN": "lf_wrong"}, exitOK,
		"link", "create", "--server", srv.url, "--token", srv.token, "--url", "https://example.com/b", "--slug", "b", "--title", "Bee page")
	fields := map[string]string{}
	for _, r := range tableRows(out) {
		fields[r[0]] = strings.Join(r[1:], " ")
	}
	if fields["slug"] != "b" || fields["title"] != "Bee page" || fields["url"] != "https://example.com/b" || fields["tags"] != "-" || fields["password"] != "no" {
		t.Errorf("create table:\n%s", out)
	}

	out, _ = runLink(t, env, exitOK, "link", "get", "a", "--json")
	if got := mustJSONOut[client.Link](t, out); got.ID != a.ID || got.URL != a.URL {
		t.Errorf("get a: %+v", got)
	}

	out, _ = runLink(t, env, exitOK, "link", "list")
	rows := tableRows(out)
	if len(rows) != 3 || strings.Join(rows[0], " ") != "SLUG TITLE URL CLICKS TAGS EXPIRES CREATED" || rows[1][0] != "b" || rows[2][0] != "a" || rows[2][4] != "x,y" {
		t.Errorf("list:\n%s", out)
	}
	out, errOut := runLink(t, env, exitOK, "link", "list", "--limit", "1")
	if rows := tableRows(out); len(rows) != 2 || rows[1][0] != "b" || !strings.Contains(errOut, "more links: add --cursor ") {
		t.Errorf("list --limit 1:\n%s\nstderr: %s", out, errOut)
	}
	cursor := strings.Fields(errOut)[4]
	out, errOut = runLink(t, env, exitOK, "link", "list", "--limit", "1", "--cursor", cursor, "--json")
	if page := mustJSONOut[client.LinkPage](t, out); len(page.Links) != 1 || page.Links[0].Slug != "a" || page.NextCursor != "" || errOut != "" {
		t.Errorf("list --cursor: %+v, stderr %q", page, errOut)
	}
	out, _ = runLink(t, env, exitOK, "link", "list", "--all", "--json", "--sort", "slug")
	if page := mustJSONOut[client.LinkPage](t, out); len(page.Links) != 2 || page.Links[0].Slug != "a" {
		t.Errorf("list --all: %+v", page)
	}
	out, _ = runLink(t, env, exitOK, "link", "list", "--tag", "y", "--json")
	if page := mustJSONOut[client.LinkPage](t, out); len(page.Links) != 1 || page.Links[0].Slug != "a" {
		t.Errorf("list --tag y: %+v", page)
	}

	out, _ = runLink(t, env, exitOK, "link", "update", "a", "--url", "https://example.com/a2", "--clear", "max-clicks", "--clear", "tags", "--json")
	if u := mustJSONOut[client.Link](t, out); u.URL != "https://example.com/a2" || u.MaxClicks != nil || len(u.Tags) != 0 || u.ExpiresAt == nil {
		t.Errorf("updated %+v", u)
	}

	// Stats: clicks through the server, flushed; the last one a QR scan
	// (qr=1, what the link's QR code encodes).
	for i, ref := range []string{"https://news.example.org/", "https://news.example.org/x", "", "https://news.example.org/qr"} {
		path := "/a"
		if i == 3 {
			path += "?qr=1"
		}
		req, _ := http.NewRequest(http.MethodGet, srv.url+path, nil)
		if ref != "" {
			req.Header.Set("Referer", ref)
		}
		resp, err := http.DefaultTransport.RoundTrip(req)
		if err != nil || resp.StatusCode != http.StatusFound {
			t.Fatalf("click: %v %v", resp, err)
		}
		resp.Body.Close()
	}
	srv.flush()
	out, _ = runLink(t, env, exitOK, "link", "stats", "a", "--json")
	if s := mustJSONOut[client.Stats](t, out); s.Total != 4 || s.Interval != "minute" {
		t.Errorf("stats: %+v", s)
	}
	out, _ = runLink(t, env, exitOK, "link", "stats", "a", "--interval", "hour", "--from", "3h")
	if !strings.Contains(out, "total (all time): 4") || !strings.HasPrefix(out, "HOUR") {
		t.Errorf("stats table:\n%s", out)
	}
	out, _ = runLink(t, env, exitOK, "link", "stats", "a", "--by", "referrer", "--limit", "1")
	rows = tableRows(out)
	if len(rows) < 4 || strings.Join(rows[0], " ") != "REFERRER CLICKS" || strings.Join(rows[1], " ") != "news.example.org 3" ||
		strings.Join(rows[2], " ") != "(others) 1" || strings.Join(rows[3], " ") != "total 4" {
		t.Errorf("stats --by referrer:\n%s", out)
	}
	out, _ = runLink(t, env, exitOK, "link", "stats", "a", "--by", "source")
	if rows = tableRows(out); len(rows) < 4 || strings.Join(rows[0], " ") != "SOURCE CLICKS" || strings.Join(rows[1], " ") != "link 3" ||
		strings.Join(rows[2], " ") != "qr 1" || strings.Join(rows[3], " ") != "total 4" {
		t.Errorf("stats --by source:\n%s", out)
	}

	out, _ = runLink(t, env, exitOK, "link", "delete", "b")
	if out != "link b deleted\n" {
		t.Errorf("delete: %q", out)
	}
	// Refusals: the problem on stderr, exit 1.
	out, errOut = runLink(t, env, exitFailure, "link", "get", "b")
	if out != "" || !strings.Contains(errOut, "linkforge: Not Found") || !strings.Contains(errOut, "(HTTP 404, not_found)") {
		t.Errorf("get deleted: stdout %q, stderr %q", out, errOut)
	}
	_, errOut = runLink(t, env, exitFailure, "link", "create", "--url", "ftp://example.com/", "--slug", "bad slug")
	if !strings.Contains(errOut, "(HTTP 400, invalid)") || !strings.Contains(errOut, "\n  url: ") || !strings.Contains(errOut, "\n  slug: ") {
		t.Errorf("invalid create: %q", errOut)
	}
	_, errOut = runLink(t, map[string]string{"LINKFORGE_SERVER": srv.url, "LINKFORGE_TOKEN": "lf_wrong"}, exitFailure, "link", "list")
	if !strings.Contains(errOut, "(HTTP 401, unauthorized)") {
		t.Errorf("wrong token: %q", errOut)
	}
	runLink(t, map[string]string{"LINKFORGE_SERVER": "http://127.0.0.1:1", "LINKFORGE_TOKEN": "lf_x"}, exitFailure, "link", "list")

	// Bad usage: exit 2, nothing sent.
	for _, args := range [][]string{
		{"link"},
		{"link", "rename", "a"},
		{"link", "create", "--slug", "c"},
		{"link", "get"},
		{"link", "update", "a"},
		{"link", "update", "a", "--clear", "color"},
		{"link", "update", "a", "--clear", "title", "--title", "T"},
		{"link", "create", "--url", "https://example.com/", "--max-clicks", "many"},
		{"link", "stats", "a", "--by", "shoe-size"},
		{"link", "stats", "a", "--by", "country", "--interval", "hour"},
		{"link", "stats", "a", "--from", "yesterday"},
		{"link", "list", "--all", "--limit", "3"},
		{"link", "list", "--server", "ftp://example.com"},
	} {
		runLink(t, env, exitUsage, args...)
	}
	runLink(t, map[string]string{"LINKFORGE_SERVER": srv.url}, exitUsage, "link", "list")
	if out, _ := runLink(t, env, exitOK, "link", "list", "--json"); len(mustJSONOut[client.LinkPage](t, out).Links) != 1 {
		t.Errorf("the refused commands changed the links:\n%s", out)
	}
}

// TestLinkCommandsBinary: the real binary, configured by LINKFORGE_SERVER
// and LINKFORGE_TOKEN, against a real `linkforge serve`.
func TestLinkCommandsBinary(t *testing.T) {
	t.Parallel()
	n := newNode(t, "")
	srv := n.startServer("http://lf.test")
	token := strings.TrimSpace(n.mustRun("token", "create", "--tenant", "acme"))
	linkCmd := func(want int, args ...string) (string, string) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
		defer cancel()
		cmd := n.command(ctx, append([]string{"link"}, args...)...)
		cmd.Env = append(cmd.Env, "LINKFORGE_SERVER=http://"+srv.addr, "LINKFORGE_TOKEN="+token)
		var out, errOut bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errOut
		err := cmd.Run()
		code := 0
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			code = exit.ExitCode()
		} else if err != nil {
			t.Fatalf("linkforge link %s: %v", strings.Join(args, " "), err)
		}
		if code != want {
			t.Fatalf("linkforge link %s: exit %d, want %d\nstderr:\n%s", strings.Join(args, " "), code, want, errOut.String())
		}
		return out.String(), errOut.String()
	}
	out, _ := linkCmd(exitOK, "create", "--url", "https://example.com/bin", "--slug", "bin", "--json")
	if l := mustJSONOut[client.Link](t, out); l.ShortURL != "http://lf.test/bin" {
		t.Errorf("created %+v", l)
	}
	out, _ = linkCmd(exitOK, "list")
	if rows := tableRows(out); len(rows) != 2 || rows[1][0] != "bin" || rows[1][2] != "https://example.com/bin" {
		t.Errorf("list:\n%s", out)
	}
	_, errOut := linkCmd(exitFailure, "create", "--url", "https://example.com/again", "--slug", "bin")
	if !strings.Contains(errOut, "(HTTP 409, conflict)") || !strings.Contains(errOut, "  slug: ") {
		t.Errorf("conflict: %q", errOut)
	}
	linkCmd(exitOK, "delete", "bin")
	linkCmd(exitFailure, "get", "bin")
}

// TestLinkTimes: --expires-at takes a duration from now or a future time
// (a date is its midnight UTC); a past one is refused before anything is
// sent. --from and --to take a date too.
func TestLinkTimes(t *testing.T) {
	srv := startAPIServer(t)
	env := map[string]string{"LINKFORGE_SERVER": srv.url, "LINKFORGE_TOKEN": srv.token}

	before := time.Now()
	out, _ := runLink(t, env, exitOK, "link", "create", "--url", "https://example.com/", "--slug", "day", "--expires-at", "24h", "--json")
	l := mustJSONOut[client.Link](t, out)
	if l.ExpiresAt == nil || l.ExpiresAt.Before(before.Add(24*time.Hour-time.Second)) || l.ExpiredAt != nil {
		t.Errorf("--expires-at 24h: expires_at %v (created at %v), expired_at %v", l.ExpiresAt, before, l.ExpiredAt)
	}
	out, _ = runLink(t, env, exitOK, "link", "update", "day", "--expires-at", "2099-01-02", "--json")
	if l := mustJSONOut[client.Link](t, out); l.ExpiresAt == nil || !l.ExpiresAt.Equal(time.Date(2099, 1, 2, 0, 0, 0, 0, time.UTC)) {
		t.Errorf("--expires-at 2099-01-02: %v", l.ExpiresAt)
	}
	for _, v := range []string{"2020-01-01T00:00:00Z", "2020-01-01", "-1h"} {
		_, stderr := runLink(t, env, exitUsage, "link", "create", "--url", "https://example.com/", "--slug", "past", "--expires-at", v)
		if !strings.Contains(stderr, "--expires-at") {
			t.Errorf("--expires-at %s: stderr %q", v, stderr)
		}
	}
	runLink(t, env, exitFailure, "link", "get", "past")

	inv, err := parseArgs([]string{"link", "stats", "day", "--token", "lf_x", "--from", "2026-12-01", "--to", "2026-12-02T12:00:00+01:00"}, envOf(nil))
	if err != nil {
		t.Fatal(err)
	}
	if from := inv.link.stats.From; !from.Equal(time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)) {
		t.Errorf("--from 2026-12-01: %v", from)
	}
	if to := inv.link.stats.To; !to.Equal(time.Date(2026, 12, 2, 11, 0, 0, 0, time.UTC)) {
		t.Errorf("--to: %v", to)
	}
}

// TestLinkTables: link list shows the title and cuts long URLs with an
// ellipsis; link stats shows the buckets with clicks, --empty every one.
func TestLinkTables(t *testing.T) {
	srv := startAPIServer(t)
	env := map[string]string{"LINKFORGE_SERVER": srv.url, "LINKFORGE_TOKEN": srv.token}
	long := "https://example.com/" + strings.Repeat("x", 200)
	runLink(t, env, exitOK, "link", "create", "--url", long, "--slug", "long", "--title", "A long one")
	out, _ := runLink(t, env, exitOK, "link", "list")
	rows := strings.Split(strings.TrimRight(out, "\n"), "\n")
	if len(rows) != 2 || strings.Join(strings.Fields(rows[0]), " ") != "SLUG TITLE URL CLICKS TAGS EXPIRES CREATED" ||
		!strings.Contains(rows[1], "A long one") || strings.Contains(rows[1], long) || !strings.Contains(rows[1], long[:40]) || !strings.Contains(rows[1], "…") {
		t.Errorf("list:\n%s", out)
	}
	if out, _ := runLink(t, env, exitOK, "link", "list", "--json"); !strings.Contains(out, long) {
		t.Errorf("list --json cut the URL:\n%s", out)
	}

	resp, err := http.DefaultTransport.RoundTrip(mustRequest(t, srv.url+"/long"))
	if err != nil || resp.StatusCode != http.StatusFound {
		t.Fatalf("click: %v %v", resp, err)
	}
	resp.Body.Close()
	srv.flush()
	out, _ = runLink(t, env, exitOK, "link", "stats", "long")
	rows = strings.Split(strings.TrimRight(out, "\n"), "\n")
	// Header, the one minute with a click, the note, the total.
	if len(rows) != 4 || !strings.HasPrefix(rows[0], "MINUTE") || !strings.HasSuffix(rows[1], " 1") ||
		!strings.Contains(rows[2], "59 minutes without clicks not shown (--empty shows them)") || rows[3] != "total (all time): 1" {
		t.Errorf("stats:\n%s", out)
	}
	out, _ = runLink(t, env, exitOK, "link", "stats", "long", "--empty")
	if rows := strings.Split(strings.TrimRight(out, "\n"), "\n"); len(rows) != 62 {
		t.Errorf("stats --empty: %d lines:\n%s", len(rows), out)
	}
}

func mustRequest(t *testing.T, url string) *http.Request {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	return req
}
