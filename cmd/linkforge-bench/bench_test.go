package main

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/linkforge/linkforge/classify"
	"github.com/linkforge/linkforge/linkcounter"
	"github.com/linkforge/linkforge/linkcounter/clicklog"
	"github.com/linkforge/linkforge/store/sqlite"
	"github.com/linkforge/linkforge/visitor"
	"github.com/linkforge/linkforge/web"
)

// benchWriter is a reusable ResponseWriter: the benchmark measures the
// server, not httptest.ResponseRecorder.
type benchWriter struct {
	h    http.Header
	code int
}

func (w *benchWriter) Header() http.Header         { return w.h }
func (w *benchWriter) Write(p []byte) (int, error) { return len(p), nil }
func (w *benchWriter) WriteHeader(code int)        { w.code = code }

// BenchmarkRedirectInProcess runs LinkForge's redirect handler in process,
// wired as `linkforge serve` wires it (SQLite store, node journal with
// synchronous=FULL in a temporary dir, LinkCounter, web server), on a warm
// link cache, with many concurrent requests like the load tool's workers.
// It exists to be profiled where the load tool cannot see inside the
// server:
//
//	go test -run '^$' -bench RedirectInProcess -benchtime 5s \
//	    -cpuprofile /tmp/cpu.out ./cmd/linkforge-bench/
//	go tool pprof -top -nodecount 40 /tmp/cpu.out
//
// It reports cpu-ns/op beside ns/op: the process's CPU per request, the
// figure the CPU target is about (10 ms resolution: use -benchtime 2s or
// more).
//
// GET is counted (a journal commit before each 302, shared by group
// commit; "-nosync" without the commit's fdatasync, whose time and CPU
// vary with the disk, to compare the rest of a click's CPU), HEAD is not, and "no counter" is the handler without a
// LinkCounter at all. "few-clients" runs 2 goroutines instead of 64: group
// commit then has little to group, as at a moderate constant load, and the
// cost of a commit falls on one or two clicks.
func BenchmarkRedirectInProcess(b *testing.B) {
	for _, bc := range []struct {
		name        string
		method      string
		counter     bool
		parallelism int
	}{
		{"GET-counted", http.MethodGet, true, 32},
		{"GET-counted-browser", http.MethodGet, true, 32},
		{"GET-counted-browser-nosync", http.MethodGet, true, 32},
		{"GET-counted-few-clients", http.MethodGet, true, 1},
		{"HEAD", http.MethodHead, true, 32},
		{"GET-no-counter", http.MethodGet, false, 32},
	} {
		b.Run(bc.name, func(b *testing.B) {
			srv, reqs := setupInProcess(b, 100, bc.method, bc.counter, strings.Contains(bc.name, "-browser"),
				strings.HasSuffix(bc.name, "-nosync"))
			var next atomic.Int64
			b.SetParallelism(bc.parallelism) // 32: 64 goroutines on 2 CPUs, like 64 workers
			b.ReportAllocs()
			cpu0, cpuOK := processCPU(os.Getpid())
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				w := &benchWriter{h: http.Header{}}
				for pb.Next() {
					srv.ServeHTTP(w, reqs[int(next.Add(1))%len(reqs)])
					if w.code != http.StatusFound {
						b.Errorf("status %d, want 302", w.code)
						return
					}
				}
			})
			b.StopTimer()
			// The process's CPU per request (all its threads: handler,
			// committer, GC), what the load tool's CPU ratio measures from
			// outside; ns/op is wall time, mostly the wait for fdatasync.
			if cpu1, ok := processCPU(os.Getpid()); cpuOK && ok {
				b.ReportMetric(float64(cpu1-cpu0)/float64(b.N), "cpu-ns/op")
			}
		})
	}
}

// setupInProcess returns a warm server and one request per link. With
// browser, the server classifies clicks (loopback is its trusted proxy, as
// for the servers the tool starts) and the requests carry the headers of
// browserClicks, as with --click-headers browser.
func setupInProcess(b *testing.B, n int, method string, withCounter, browser, noSync bool) (http.Handler, []*http.Request) {
	b.Helper()
	ctx := context.Background()
	dir := b.TempDir()
	bn := &bench{runID: "P"}
	in := &instance{b: bn, backend: "sqlite", dataDir: dir}
	links := bn.newLinks(n)
	if err := in.importLinks(ctx, links); err != nil {
		b.Fatal(err)
	}
	st, err := sqlite.Open(ctx, filepath.Join(dir, sqliteFile))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { st.Close() })
	log := slog.New(slog.NewTextHandler(io.Discard, nil))

	// Visitors as serve has them: a counted click is hashed for the
	// link's unique visitors (and the hash journaled with it).
	cfg := web.Config{Store: st, PublicURL: &url.URL{Scheme: "http", Host: "127.0.0.1"}, Logger: log,
		Visitors: visitor.NewHasher(st, time.Now, log)}
	if browser {
		cfg.Classifier = classify.New(classify.Config{TrustedProxies: []netip.Prefix{netip.MustParsePrefix("192.0.2.0/24")}})
	}
	if withCounter {
		var opts []clicklog.Option
		if noSync {
			opts = append(opts, clicklog.WithSync(clicklog.SyncWriteOnly))
		}
		journal, err := clicklog.Open(ctx, dir, opts...)
		if err != nil {
			b.Fatal(err)
		}
		counter, err := linkcounter.New(ctx, linkcounter.Config{Store: st, Journal: journal,
			FlushInterval: 30 * time.Second, Logger: log})
		if err != nil {
			b.Fatal(err)
		}
		if err := counter.Start(ctx); err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() {
			if err := counter.Stop(ctx); err != nil {
				b.Errorf("stop counter: %v", err)
			}
			journal.Close()
		})
		cfg.Counter, cfg.Exhaustion, cfg.Skips, cfg.Readiness = counter, counter, counter, counter
	}
	srv, err := web.New(cfg)
	if err != nil {
		b.Fatal(err)
	}
	reqs := make([]*http.Request, n)
	for i, l := range links {
		reqs[i] = httptest.NewRequest(method, "/"+l.slug, nil)
		if browser {
			// httptest's peer, 192.0.2.1, is the trusted proxy.
			p := browserClicks[i%len(browserClicks)]
			reqs[i] = httptest.NewRequest(method, "/"+l.slug+p.query, nil)
			reqs[i].Header = p.header.Clone()
		}
		w := &benchWriter{h: http.Header{}}
		srv.ServeHTTP(w, reqs[i]) // warms the link cache
		if w.code != http.StatusFound {
			b.Fatalf("warming %s: status %d", l.slug, w.code)
		}
	}
	return srv, reqs
}
