package web_test

import (
	"context"
	"fmt"
	"net/http"
	"syscall"
	"testing"
	"time"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/classify"
	"github.com/linkforge/linkforge/internal/testdb"
	"github.com/linkforge/linkforge/visitor"
	"github.com/linkforge/linkforge/visitor/visitortest"
	"github.com/linkforge/linkforge/web"
)

// BenchmarkRedirectCountedLinks is the counted redirect as the load tool's
// redirect scenario sends it and as cmd wires the server: 100 links clicked
// round robin (so a group commit holds about one click per link, where
// BenchmarkRedirectCounted's single link shares one row), browser headers,
// classification, and unique visitors (the day-keyed visitor hash and its
// sketch) on or off. cpu-ns/click is the whole process's CPU per click: on
// a shared machine wall time per click swings with the disk's fsync, while
// the CPU a click costs is what limits a server.
//
//	go test -run '^$' -bench 'BenchmarkRedirectCountedLinks' -benchmem ./web/
func BenchmarkRedirectCountedLinks(b *testing.B) {
	for _, uniques := range []bool{false, true} {
		b.Run(fmt.Sprintf("uniques=%v", uniques), func(b *testing.B) {
			st := testdb.SQLite(b)
			ctx := context.Background()
			tenant, err := st.EnsureTenant(ctx, "bench")
			if err != nil {
				b.Fatal(err)
			}
			var reqs []*http.Request
			for i := range 100 {
				slug := fmt.Sprintf("l%03d", i)
				if _, err := st.CreateLink(ctx, linkforge.Link{TenantID: tenant.ID, Slug: slug,
					URL: fmt.Sprintf("https://example.com/%d", i), Tags: []string{}}); err != nil {
					b.Fatal(err)
				}
				// Each link gets every profile in turn, as the load
				// tool's round robin of links and profiles gives it.
				reqs = append(reqs, classifiedRequests(slug)[i%len(clickProfiles)])
			}
			cfg := web.Config{Store: st, PublicURL: mustURL(b, publicURL),
				Classifier: classify.New(classify.Config{TrustedProxies: benchProxy})}
			useCounter(&cfg, mustCounter(b, st).Counter)
			if uniques {
				cfg.Visitors = visitor.NewHasher(&visitortest.MemoryKeys[visitor.Key]{}, time.Now, nil)
			}
			srv, err := web.New(cfg)
			if err != nil {
				b.Fatal(err)
			}
			b.SetParallelism(32)
			cpu0 := processCPU()
			runClassified(b, srv, reqs)
			b.StopTimer()
			b.ReportMetric(float64(processCPU()-cpu0)/float64(b.N), "cpu-ns/click")
		})
	}
}

// processCPU returns the process's user and system CPU time so far, in
// nanoseconds.
func processCPU() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}
