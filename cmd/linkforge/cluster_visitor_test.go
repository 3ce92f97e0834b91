package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"testing"
)

// TestClusterVisitorKeyShared: two real nodes on one PostgreSQL, as
// docker-compose.yml runs them, hash a visitor alike (ADR 024: the day's
// key is the database's, not the node's): each of twenty-four visitors gets
// the same A/B variant from both nodes, and the day's unique visitors,
// merged from both nodes' sketches, are twenty-four. Beside
// visitor.TestHashAgreesAcrossNodes (two hashers on one in-memory key
// store) and web's TestVisitorKeySharedByTwoNodes (hashers the test
// wires), this one also guards how serve wires the hasher: a node given a
// key store of its own fails here.
func TestClusterVisitorKeyShared(t *testing.T) {
	if testing.Short() {
		t.Skip("runs two real linkforge processes")
	}
	c := newCluster(t, 2)
	c.start(0)
	c.start(1)
	c.mustCreate(0, `{"slug":"ab","url":"https://example.com/u","variants":[
		{"url":"https://example.com/a","weight":50},{"url":"https://example.com/b","weight":50}]}`)

	// The nodes trust no proxy: every visitor comes from the loopback
	// address, and tells itself apart by its browser's version.
	const visitors = 24
	seen := map[string]int{}
	for v := range visitors {
		ua := fmt.Sprintf("Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.%d.0 Safari/537.36", v)
		var got [2]string
		for i := range 2 {
			req, err := http.NewRequest(http.MethodGet, c.base(i)+"/ab", nil)
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("User-Agent", ua)
			req.Header.Set("Accept", "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8")
			resp, err := noRedirects.Do(req)
			if err != nil {
				t.Fatalf("visitor %d on %s: %v", v, nodeID(i), err)
			}
			io.Copy(io.Discard, resp.Body) // only the status and Location matter
			resp.Body.Close()
			if resp.StatusCode != http.StatusFound {
				t.Fatalf("visitor %d on %s: %d", v, nodeID(i), resp.StatusCode)
			}
			got[i] = resp.Header.Get("Location")
		}
		if got[0] != got[1] {
			t.Errorf("visitor %d: %s sent them to %s, %s to %s", v, nodeID(0), got[0], nodeID(1), got[1])
		}
		seen[got[0]]++
	}
	if len(seen) != 2 {
		t.Errorf("%d visitors saw %v, want both variants", visitors, seen)
	}

	// SIGTERM flushes each node's clicks and sketch; a node started again
	// reads the day's merged count.
	c.stopAll()
	c.start(0)
	resp, body := mustDo(t, http.MethodGet, c.base(0)+"/api/v1/links/ab/stats?interval=day", c.token, "")
	var st struct {
		Buckets []struct {
			Count  int64  `json:"count"`
			Unique *int64 `json:"unique"`
		} `json:"buckets"`
	}
	if resp.StatusCode != http.StatusOK || json.Unmarshal(body, &st) != nil || len(st.Buckets) == 0 {
		t.Fatalf("stats: %d %s", resp.StatusCode, body)
	}
	last := st.Buckets[len(st.Buckets)-1]
	if last.Count != 2*visitors || last.Unique == nil || *last.Unique != visitors {
		t.Errorf("today's bucket: %s, want %d clicks and %d unique visitors", body, 2*visitors, visitors)
	}
}
