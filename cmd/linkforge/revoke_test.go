package main

import (
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
)

// revokeWithin is the contract of issue 10, item 6: a revoked token's live
// sockets are closed within 5 s of `linkforge token revoke`, on every node.
const revokeWithin = 5 * time.Second

// mustDialFeed opens base's live feed with token, as a program does.
func mustDialFeed(t *testing.T, base, token string) *websocket.Conn {
	t.Helper()
	conn, resp, err := websocket.DefaultDialer.Dial("ws"+strings.TrimPrefix(base, "http")+"/api/v1/live",
		http.Header{"Authorization": {"Bearer " + token}})
	if err != nil {
		status := 0
		if resp != nil {
			status = resp.StatusCode
		}
		t.Fatalf("dial the live feed of %s: %v (status %d)", base, err, status)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}

// TestClusterRevokeClosesLiveSockets runs two nodes on one PostgreSQL, each
// with a live socket of token A and one of token B of the same tenant. The
// real `linkforge token revoke` command, a third process, revokes A: each
// node closes its A socket with code 4001 within 5 s, and the B sockets
// stay open and keep receiving clicks served by either node.
func TestClusterRevokeClosesLiveSockets(t *testing.T) {
	if testing.Short() {
		t.Skip("runs two real linkforge processes")
	}
	c := newCluster(t, 2)
	kept := strings.TrimSpace(c.nodes[0].mustRun("token", "create", "--tenant", "acme", "--name", "kept"))
	rows := parseTokenList(t, c.nodes[0].mustRun("token", "list", "--tenant", "acme"))
	if len(rows) != 2 || rows[0].name != "-" || rows[1].name != "kept" {
		t.Fatalf("token list: %+v, want the cluster's token then kept", rows)
	}
	revokedID := rows[0].id // c.token's
	c.start(0)
	c.start(1)
	for i := range 2 {
		waitFor(t, hangGuard, nodeID(i)+" listening on the bus", func() bool {
			return metric(t, c.base(i), "linkforge_bus_listening") == 1
		})
	}
	c.mustCreate(0, `{"slug":"watched","url":"https://example.com/watched"}`)

	doomed := make([]*websocket.Conn, 2)
	stays := make([]*websocket.Conn, 2)
	for i := range 2 {
		doomed[i] = mustDialFeed(t, c.base(i), c.token)
		stays[i] = mustDialFeed(t, c.base(i), kept)
		waitFor(t, hangGuard, nodeID(i)+" registered both sockets", func() bool {
			return metric(t, c.base(i), "linkforge_dashboard_clients") == 2
		})
	}

	start := time.Now()
	if out := c.nodes[1].mustRun("token", "revoke", revokedID); out != "token "+revokedID+" revoked\n" {
		t.Fatalf("token revoke printed %q", out)
	}
	revoked := time.Now() // the command has committed the revocation
	for i, conn := range doomed {
		conn.SetReadDeadline(revoked.Add(revokeWithin))
		var err error
		for err == nil {
			_, _, err = conn.ReadMessage()
		}
		var ce *websocket.CloseError
		if !errors.As(err, &ce) {
			t.Fatalf("%s: the revoked token's socket: %v, want close code 4001 within %v of the revocation", nodeID(i), err, revokeWithin)
		}
		if ce.Code != 4001 || ce.Text != "token revoked" {
			t.Errorf("%s: closed with %d %q, want 4001 \"token revoked\"", nodeID(i), ce.Code, ce.Text)
		}
		t.Logf("%s: the revoked token's socket closed by %v after the command returned (%v after it started)",
			nodeID(i), time.Since(revoked).Round(time.Millisecond), time.Since(start).Round(time.Millisecond))
	}

	for i := range 2 {
		if got := metric(t, c.base(i), `linkforge_dashboard_clients_dropped_total{reason="revoked"}`); got != 1 {
			t.Errorf("%s: dropped{reason=revoked} = %v, want 1", nodeID(i), got)
		}
		if got := metric(t, c.base(i), "linkforge_dashboard_clients"); got != 1 {
			t.Errorf("%s: linkforge_dashboard_clients = %v, want 1 (the kept token's)", nodeID(i), got)
		}
		resp, body := mustDo(t, http.MethodGet, c.base(i)+"/api/v1/links", c.token, "")
		if resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("%s: the API with the revoked token: %d %s, want 401", nodeID(i), resp.StatusCode, body)
		}
	}

	// The kept sockets are open and served: a click on node 1 reaches both,
	// node 2's through the bus.
	mustClicks(t, c.base(0), "watched", 1)
	for i, conn := range stays {
		conn.SetReadDeadline(time.Now().Add(liveWithin))
		for {
			_, data, err := conn.ReadMessage()
			if err != nil {
				t.Fatalf("%s: the kept token's socket: %v", nodeID(i), err)
			}
			var m struct{ Type, Link string }
			if err := json.Unmarshal(data, &m); err == nil && m.Type == "link" {
				continue // the link list's own messages (the link's creation)
			}
			if err != nil || m.Type != "clicks" || m.Link != "watched" {
				t.Errorf("%s: the kept token's socket got %s, want the click on watched", nodeID(i), data)
			}
			break
		}
	}
	c.stopAll()
}
