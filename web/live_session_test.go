package web_test

import (
	"errors"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/dashboard"
	"github.com/linkforge/linkforge/internal/testdb"
	"github.com/linkforge/linkforge/people"
	"github.com/linkforge/linkforge/web"
)

// TestLiveSessionEnds: a live feed opened with a session cookie (as the
// signed-in dashboard opens it) closes with code 4001 within 5 s when an
// owner removes the user, and when the user signs out everywhere; on both
// backends, with the feed's revocation check as cmd wires it.
func TestLiveSessionEnds(t *testing.T) {
	testdb.Each(t, func(t *testing.T, st linkforge.Store) {
		hub := mustLiveHubWith(t, dashboard.Config{Tokens: people.FeedChecker{Store: st}})
		e := newEnv(t, st, func(c *web.Config) { useHub(c, hub) })
		tid, owner := mustRoleToken(t, st, "acme", linkforge.RoleOwner)
		svc, err := people.New(people.Config{Store: st, Hasher: cheapHasher{}, PublicURL: publicURL})
		if err != nil {
			t.Fatal(err)
		}
		signIn := func(email string) (cookie, userID string) {
			t.Helper()
			u, invite, _, err := svc.Invite(t.Context(), tid, email, linkforge.RoleEditor)
			if err != nil {
				t.Fatal(err)
			}
			r := e.form(strings.TrimPrefix(invite, publicURL), "", url.Values{"password": {"correct horse battery"}})
			return sessionCookie(t, r), itoa(u.ID)
		}
		dial := func(cookie string) *websocket.Conn {
			t.Helper()
			conn, r, err := e.dialLive([]string{"linkforge.v1"},
				http.Header{"Origin": {e.url}, "Cookie": {"linkforge_session=" + cookie}})
			if err != nil {
				t.Fatalf("dial live with a session: %v (%s)", err, r)
			}
			return conn
		}
		mustClose := func(conn *websocket.Conn, what string, since time.Time) {
			t.Helper()
			conn.SetReadDeadline(since.Add(revokeBound))
			for {
				_, _, err := conn.ReadMessage()
				if err == nil {
					continue // a snapshot or an update before the close
				}
				var ce *websocket.CloseError
				if !errors.As(err, &ce) || ce.Code != dashboard.CloseTokenRevoked {
					t.Fatalf("%s: %v, want close code 4001 within %v", what, err, revokeBound)
				}
				return
			}
		}

		annCookie, annID := signIn("ann@example.com")
		bobCookie, _ := signIn("bob@example.com")
		ann, bob := dial(annCookie), dial(bobCookie)

		at := time.Now()
		mustStatus(t, e.do(http.MethodDelete, "/api/v1/users/"+annID, owner, ""), http.StatusNoContent)
		mustClose(ann, "the removed user's feed", at)

		csrf := *mustJSON[meBody](t, e.withCookie(http.MethodGet, "/api/v1/me", bobCookie, "")).CSRFToken
		at = time.Now()
		mustStatus(t, e.withCookie(http.MethodDelete, "/api/v1/me/sessions", bobCookie, "", "X-CSRF-Token", csrf, "Origin", e.url), http.StatusNoContent)
		mustClose(bob, "the feed after sign out everywhere", at)
		if _, r, err := e.dialLive([]string{"linkforge.v1"}, http.Header{"Origin": {e.url}, "Cookie": {"linkforge_session=" + bobCookie}}); err == nil || r.status != http.StatusUnauthorized {
			t.Errorf("reconnect with the ended session: %v %d, want 401", err, r.status)
		}
	})
}
