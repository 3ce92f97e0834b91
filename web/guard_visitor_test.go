package web_test

import (
	"context"
	"fmt"
	"net/http"
	"net/netip"
	"testing"
	"time"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/classify"
	"github.com/linkforge/linkforge/internal/testdb"
	"github.com/linkforge/linkforge/visitor"
	"github.com/linkforge/linkforge/web"
)

// TestVisitorKeySharedByTwoNodes: two servers on one database, each with
// its own counter and its own visitor hasher over the database's day keys
// (as cmd wires them), are one deployment to a visitor: each of twenty-four
// visitors gets the same A/B variant from both, and the day's unique
// visitors, merged from both nodes' sketches, are twenty-four, not
// forty-eight. It is the shared day key's second guard, beside
// visitor.TestHashAgreesAcrossNodes (two hashers on one in-memory key
// store): this one goes through the real stores, the redirect path and
// the stats API.
func TestVisitorKeySharedByTwoNodes(t *testing.T) {
	testdb.Each(t, func(t *testing.T, s linkforge.Store) {
		t.Parallel()
		keys, ok := s.(visitor.KeyStore)
		if !ok {
			t.Fatalf("%T keeps no visitor day keys", s)
		}
		var nodes [2]*env
		var ctrs [2]*counter
		for i := range nodes {
			ctrs[i] = mustCounter(t, s)
			nodes[i] = newEnv(t, s, func(c *web.Config) {
				useCounter(c, ctrs[i].Counter)
				c.Classifier = classify.New(classify.Config{TrustedProxies: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}})
				c.Visitors = visitor.NewHasher(keys, c.Now, nil)
			})
		}
		// One deployment, one time: noon, so that no visit crosses a day.
		noon := visitor.Day(nodes[0].clock.Now()).Add(12 * time.Hour)
		for _, n := range nodes {
			n.clock.Set(noon)
		}
		_, tok := mustTenantToken(t, s, "visitors")
		nodes[0].mustCreate(tok, `{"url":"https://example.com/u","slug":"ab","variants":[
			{"url":"https://example.com/a","weight":50},{"url":"https://example.com/b","weight":50}]}`)

		const visitors = 24
		seen := map[string]int{}
		for v := range visitors {
			from := netip.AddrFrom4([4]byte{85, 214, 132, byte(v + 1)})
			var got [2]string
			for i, n := range nodes {
				r := n.click(http.MethodGet, "/ab", from, uaDesktop, "")
				if r.status != http.StatusFound {
					t.Fatalf("visitor %s on node %d: %d", from, i+1, r.status)
				}
				got[i] = r.header.Get("Location")
			}
			if got[0] != got[1] {
				t.Errorf("visitor %s: node 1 sent them to %s, node 2 to %s", from, got[0], got[1])
			}
			seen[got[0]]++
		}
		if len(seen) != 2 {
			t.Errorf("%d visitors saw %v, want both variants", visitors, seen)
		}

		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		for i, c := range ctrs {
			if err := c.Stop(ctx); err != nil { // flushes the node's sketch
				t.Fatalf("stop node %d's counter: %v", i+1, err)
			}
		}
		st := mustJSON[struct {
			Buckets []struct {
				Start  time.Time `json:"start"`
				Count  int64     `json:"count"`
				Unique *int64    `json:"unique"`
			} `json:"buckets"`
		}](t, nodes[1].do(http.MethodGet, "/api/v1/links/ab/stats?interval=day", tok, ""))
		last := st.Buckets[len(st.Buckets)-1]
		if want := fmt.Sprint(2*visitors, " clicks, ", visitors, " unique"); !last.Start.Equal(visitor.Day(noon)) ||
			fmt.Sprint(last.Count, " clicks, ", deref(last.Unique), " unique") != want {
			t.Errorf("the day's bucket %v: %d clicks, %d unique; want %s", last.Start, last.Count, deref(last.Unique), want)
		}
	})
}
