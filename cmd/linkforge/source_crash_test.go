package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// TestCrashKeepsSourceCounts: QR scans (GET with qr=1, what a link's QR
// code encodes) and plain clicks of one link, under load, with SIGKILLs
// that land in the middle of commits and flushes: after each restart the
// source breakdown is exactly qr = the scans acknowledged, link = the
// plain clicks acknowledged, on both backends.
func TestCrashKeepsSourceCounts(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		n := b.newNode(t)
		n.serveArgs = []string{"--flush-interval", "50ms"}
		testSourceCrash(t, n, 2)
	})
}

func testSourceCrash(t *testing.T, n *node, cycles int) {
	token := strings.TrimSpace(n.mustRun("token", "create", "--tenant", "acme"))
	srv := n.startServer("http://lf.test")
	base := "http://" + srv.addr
	resp, body := mustDo(t, http.MethodPost, base+"/api/v1/links", token, `{"url":"https://example.com/poster","slug":"poster"}`)
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("create link: %d %s", resp.StatusCode, body)
	}
	var scans, plain int64
	for cycle := 1; cycle <= cycles; cycle++ {
		acked := loadHoldKillURLs(t, srv, n.dataDir, []string{base + "/poster?qr=1", base + "/poster?utm_source=mail"}, 8)
		scans, plain = scans+acked[0], plain+acked[1]
		releaseCommits(t, n.dataDir)
		srv = n.startServer("http://lf.test")
		base = "http://" + srv.addr
		waitNothingPending(t, base)
		checkDimsInvariant(t, n, n.dbURL)
		resp, body := mustDo(t, http.MethodGet, base+"/api/v1/links/poster/stats/source", token, "")
		var b struct {
			Total  int64
			Values []struct {
				Value string
				Count int64
			}
		}
		if resp.StatusCode != http.StatusOK || json.Unmarshal(body, &b) != nil {
			t.Fatalf("cycle %d: stats/source: %d %s", cycle, resp.StatusCode, body)
		}
		got := map[string]int64{}
		for _, v := range b.Values {
			got[v.Value] = v.Count
		}
		want := map[string]int64{"qr": scans, "link": plain}
		if b.Total != scans+plain || fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("cycle %d: source %v (total %d), want exactly the acknowledged %v", cycle, got, b.Total, want)
		}
		if scans == 0 || plain == 0 {
			t.Fatalf("cycle %d: %d scans and %d plain clicks acknowledged, want some of each", cycle, scans, plain)
		}
	}
	if code := srv.stop(t); code != 0 {
		t.Fatalf("final SIGTERM: exit %d", code)
	}
}
