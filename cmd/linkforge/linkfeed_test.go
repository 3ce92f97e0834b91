package main

import (
	"encoding/json"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
)

// linkViewer is a dashboard on one node's feed that keeps the link
// messages it receives, in order.
type linkViewer struct {
	msgs chan linkFeedMessage
}

type linkFeedMessage struct {
	Op   string         `json:"op"`
	Link map[string]any `json:"link"`
}

// mustLinkViewer connects to base's feed with token; wantClients is the
// node's count of viewers once this one is registered.
func mustLinkViewer(t *testing.T, base, token string, wantClients float64) *linkViewer {
	t.Helper()
	header := http.Header{"Authorization": {"Bearer " + token}}
	conn, resp, err := websocket.DefaultDialer.Dial("ws"+strings.TrimPrefix(base, "http")+"/api/v1/live", header)
	if err != nil {
		status := 0
		if resp != nil {
			status = resp.StatusCode
		}
		t.Fatalf("dial the live feed: %v (status %d)", err, status)
	}
	v := &linkViewer{msgs: make(chan linkFeedMessage, 64)}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			_, data, err := conn.ReadMessage()
			if err != nil {
				return
			}
			var m struct {
				Type string `json:"type"`
				linkFeedMessage
			}
			if json.Unmarshal(data, &m) != nil || m.Type != "link" {
				continue // clicks and expiries are other tests' business
			}
			v.msgs <- m.linkFeedMessage
		}
	}()
	t.Cleanup(func() {
		conn.Close()
		<-done
	})
	waitFor(t, hangGuard, "live client registered", func() bool {
		return metric(t, base, "linkforge_dashboard_clients") == wantClients
	})
	return v
}

// mustNext returns the viewer's next link message, which must come within
// d of now.
func (v *linkViewer) mustNext(t *testing.T, d time.Duration, what string) (linkFeedMessage, time.Duration) {
	t.Helper()
	start := time.Now()
	select {
	case m := <-v.msgs:
		return m, time.Since(start)
	case <-time.After(d):
		t.Fatalf("%s: no link message within %v", what, d)
		return linkFeedMessage{}, 0
	}
}

// TestClusterLinkFeed runs two nodes on one PostgreSQL: a create, a PATCH
// and a DELETE through node 1 reach a viewer of the tenant on node 2 within
// liveWithin each, as link messages whose link is what the API answers
// (rendered by node 2 from the store); a viewer of another tenant on node 2
// hears none of it.
func TestClusterLinkFeed(t *testing.T) {
	c := newCluster(t, 2)
	c.start(0)
	c.start(1)
	other := strings.TrimSpace(c.nodes[0].mustRun("token", "create", "--tenant", "globex"))
	viewer := mustLinkViewer(t, c.base(1), c.token, 1)
	stranger := mustLinkViewer(t, c.base(1), other, 2)

	decode := func(b []byte) map[string]any {
		t.Helper()
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatalf("answer %s: %v", b, err)
		}
		return m
	}
	write := func(method, path, body string, status int) map[string]any {
		t.Helper()
		resp, b := mustDo(t, method, c.base(0)+path, c.token, body)
		if resp.StatusCode != status {
			t.Fatalf("%s %s on node 1: %d %s", method, path, resp.StatusCode, b)
		}
		if len(b) == 0 {
			return nil
		}
		return decode(b)
	}

	created := write(http.MethodPost, "/api/v1/links", `{"slug":"roll","url":"https://example.com/a",
		"title":"Roll out","tags":["q4"],"device_urls":{"android":"https://play.example.com/x"}}`, http.StatusCreated)
	m, took := viewer.mustNext(t, liveWithin, "created")
	if m.Op != "created" || !reflect.DeepEqual(m.Link, created) {
		t.Fatalf("node 2's viewer got %s %v\nwant created %v", m.Op, m.Link, created)
	}
	t.Logf("created on node 1, shown on node 2 after %v", took)

	updated := write(http.MethodPatch, "/api/v1/links/roll", `{"url":"https://example.com/b","tags":[]}`, http.StatusOK)
	m, took = viewer.mustNext(t, liveWithin, "updated")
	if m.Op != "updated" || !reflect.DeepEqual(m.Link, updated) {
		t.Fatalf("node 2's viewer got %s %v\nwant updated %v", m.Op, m.Link, updated)
	}
	t.Logf("updated on node 1, shown on node 2 after %v", took)

	write(http.MethodDelete, "/api/v1/links/roll", "", http.StatusNoContent)
	m, took = viewer.mustNext(t, liveWithin, "deleted")
	if want := map[string]any{"id": created["id"], "slug": "roll"}; m.Op != "deleted" || !reflect.DeepEqual(m.Link, want) {
		t.Fatalf("node 2's viewer got %s %v\nwant deleted %v", m.Op, m.Link, want)
	}
	t.Logf("deleted on node 1, shown on node 2 after %v", took)

	// The other tenant's first message is its own write: acme's would
	// have come first.
	resp, b := mustDo(t, http.MethodPost, c.base(0)+"/api/v1/links", other, `{"slug":"theirs","url":"https://example.com/t"}`)
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("create for globex: %d %s", resp.StatusCode, b)
	}
	if m, _ := stranger.mustNext(t, liveWithin, "globex's own link"); m.Op != "created" || m.Link["slug"] != "theirs" {
		t.Fatalf("globex's viewer got %s %v first, want its own created link", m.Op, m.Link)
	}
	c.stopAll()
}
