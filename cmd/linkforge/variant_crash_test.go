package main

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

// TestCrashKeepsVariantCounts: the clicks of a link with an A/B test are
// counted per variant with the click itself, so after SIGKILLs that land
// in the middle of commits and flushes the variant counts still sum to
// exactly the acknowledged clicks, every hour, on both backends.
func TestCrashKeepsVariantCounts(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		n := b.newNode(t)
		n.serveArgs = []string{"--flush-interval", "50ms"}
		testVariantCrash(t, n, 2)
	})
}

func testVariantCrash(t *testing.T, n *node, cycles int) {
	token := strings.TrimSpace(n.mustRun("token", "create", "--tenant", "acme"))
	srv := n.startServer("http://lf.test")
	base := "http://" + srv.addr
	resp, body := mustDo(t, http.MethodPost, base+"/api/v1/links", token, `{"url":"https://example.com/ab","slug":"ab",
		"variants":[{"url":"https://example.com/a","weight":50},{"url":"https://example.com/b","weight":50}]}`)
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("create link: %d %s", resp.StatusCode, body)
	}
	var acked int64
	for cycle := 1; cycle <= cycles; cycle++ {
		acked += loadHoldKill(t, srv, n.dataDir, base+"/ab", 8)
		releaseCommits(t, n.dataDir)
		srv = n.startServer("http://lf.test")
		base = "http://" + srv.addr
		waitNothingPending(t, base)
		checkDimsInvariant(t, n, n.dbURL)
		resp, body := mustDo(t, http.MethodGet, base+"/api/v1/links/ab/stats/variant", token, "")
		var b struct {
			Total  int64
			Values []struct {
				Value string
				Count int64
			}
		}
		if resp.StatusCode != http.StatusOK || json.Unmarshal(body, &b) != nil {
			t.Fatalf("cycle %d: stats/variant: %d %s", cycle, resp.StatusCode, body)
		}
		var inVariants int64
		for _, v := range b.Values {
			if v.Value != "0" && v.Value != "1" {
				t.Fatalf("cycle %d: variant value %q counted: %s", cycle, v.Value, body)
			}
			inVariants += v.Count
		}
		if b.Total != acked || inVariants != acked {
			t.Fatalf("cycle %d: variants count %d (total %d), want exactly the %d acknowledged clicks", cycle, inVariants, b.Total, acked)
		}
	}
	if code := srv.stop(t); code != 0 {
		t.Fatalf("final SIGTERM: exit %d", code)
	}
}
