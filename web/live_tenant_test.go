package web_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/gorilla/websocket"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/internal/testdb"
	"github.com/linkforge/linkforge/people"
	"github.com/linkforge/linkforge/web"
)

// TestLiveSessionPicksTenant: a browser cannot set X-LinkForge-Tenant on a
// WebSocket, so a user in several tenants names one with ?tenant= on the
// live feed; the feed then follows that tenant, and a tenant the user is
// not a member of is refused (403) before the upgrade.
func TestLiveSessionPicksTenant(t *testing.T) {
	st := testdb.SQLite(t)
	hub := mustLiveHub(t)
	e := newEnv(t, st, func(c *web.Config) { useHub(c, hub) })
	acme, _ := mustRoleToken(t, st, "acme", linkforge.RoleOwner)
	beta, _ := mustRoleToken(t, st, "beta", linkforge.RoleOwner)
	mustRoleToken(t, st, "gamma", linkforge.RoleOwner)
	svc, err := people.New(people.Config{Store: st, Hasher: cheapHasher{}, PublicURL: publicURL})
	if err != nil {
		t.Fatal(err)
	}
	_, invite, _, err := svc.Invite(t.Context(), acme, "ann@example.com", linkforge.RoleEditor)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, _, err := svc.Invite(t.Context(), beta, "ann@example.com", linkforge.RoleViewer); err != nil {
		t.Fatal(err)
	}
	cookie := sessionCookie(t, e.form(strings.TrimPrefix(invite, publicURL), "", url.Values{"password": {"correct horse battery"}}))
	header := http.Header{"Origin": {e.url}, "Cookie": {"linkforge_session=" + cookie}}

	dial := func(tenant string) (*websocket.Conn, int) {
		t.Helper()
		d := websocket.Dialer{Subprotocols: []string{"linkforge.v1"}, HandshakeTimeout: liveGuard}
		conn, resp, err := d.Dial(e.wsURL()+"?tenant="+url.QueryEscape(tenant), header)
		if resp != nil {
			resp.Body.Close()
		}
		if err != nil {
			if resp == nil {
				t.Fatalf("dial ?tenant=%s: %v", tenant, err)
			}
			return nil, resp.StatusCode
		}
		t.Cleanup(func() { conn.Close() })
		return conn, resp.StatusCode
	}
	if _, status := dial("beta"); status != http.StatusSwitchingProtocols {
		t.Fatalf("dial ?tenant=beta: %d, want 101", status)
	}
	mustWatched(t, hub, beta)
	if _, status := dial("gamma"); status != http.StatusForbidden {
		t.Errorf("dial ?tenant=gamma (not a member): %d, want 403", status)
	}
}
