package web_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/internal/oidctest"
	"github.com/linkforge/linkforge/internal/testdb"
	"github.com/linkforge/linkforge/oidclogin"
	"github.com/linkforge/linkforge/web"
)

// logBuffer is a slog JSON handler's output, safe for the server's
// goroutines.
type logBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

// take returns the output so far and empties it.
func (l *logBuffer) take() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	s := l.b.String()
	l.b.Reset()
	return s
}

// ssoEnv is a server with single sign-on against a real provider that
// knows ann (verified), bob (verified, no account in LinkForge) and cara
// (an account in LinkForge, her email not verified at the provider).
type ssoEnv struct {
	*env
	op   *oidctest.Provider
	logs *logBuffer
	// annID and caraID are the LinkForge users; acme their tenant.
	annID, caraID, acme int64
}

func newSSOEnv(t *testing.T, s linkforge.Store, autoJoin string) *ssoEnv {
	t.Helper()
	op := oidctest.Start(t, publicURL+oidclogin.CallbackPath,
		oidctest.User{ID: "ann", Email: "Ann@Example.com", EmailVerified: true},
		oidctest.User{ID: "bob", Email: "bob@example.com", EmailVerified: true},
		oidctest.User{ID: "cara", Email: "cara@example.com", EmailVerified: false})
	aj, err := oidclogin.ParseAutoJoin(autoJoin)
	if err != nil {
		t.Fatal(err)
	}
	logs := &logBuffer{}
	e := newEnv(t, s, func(c *web.Config) {
		c.OIDC = &oidclogin.Config{Issuer: op.URL, ClientID: oidctest.ClientID, ClientSecret: oidctest.ClientSecret,
			AutoJoin: aj, Logger: slog.New(slog.NewJSONHandler(logs, nil))}
	})
	ctx := context.Background()
	acme, err := s.EnsureTenant(ctx, "acme")
	if err != nil {
		t.Fatal(err)
	}
	ann, err := s.InviteUser(ctx, linkforge.Invite{TenantID: acme.ID, Email: "ann@example.com", Role: linkforge.RoleEditor})
	if err != nil {
		t.Fatal(err)
	}
	cara, err := s.InviteUser(ctx, linkforge.Invite{TenantID: acme.ID, Email: "cara@example.com", Role: linkforge.RoleEditor})
	if err != nil {
		t.Fatal(err)
	}
	return &ssoEnv{env: e, op: op, logs: logs, annID: ann.User.ID, caraID: cara.User.ID, acme: acme.ID}
}

// ssoFlow is a sign-in that went to the provider and is back at the
// callback's door: the callback URL (on the test server) and the flow's
// cookie.
type ssoFlow struct {
	callback string
	cookie   *http.Cookie
}

// begin signs in as the provider's user id: GET /login/oidc, then the
// provider's pages, up to its redirect to LinkForge's callback.
func (e *ssoEnv) begin(t *testing.T, user string) ssoFlow {
	t.Helper()
	e.op.SignInAs(user)
	r := e.do(http.MethodGet, oidclogin.StartPath, "", "")
	mustStatus(t, r, http.StatusFound)
	var flowCookie *http.Cookie
	for _, c := range (&http.Response{Header: r.header}).Cookies() {
		if c.Name == "linkforge_oidc" {
			flowCookie = c
		}
	}
	if flowCookie == nil || !flowCookie.HttpOnly || flowCookie.SameSite != http.SameSiteLaxMode || flowCookie.Path != oidclogin.StartPath {
		t.Fatalf("flow cookie = %+v", flowCookie)
	}
	auth, err := url.Parse(r.header.Get("Location"))
	if err != nil || !strings.HasPrefix(auth.String(), e.op.URL) {
		t.Fatalf("Location %q is not the provider's", r.header.Get("Location"))
	}
	q := auth.Query()
	if q.Get("code_challenge_method") != "S256" || q.Get("code_challenge") == "" || q.Get("state") == "" ||
		q.Get("nonce") == "" || q.Get("redirect_uri") != publicURL+oidclogin.CallbackPath {
		t.Fatalf("authorization request %v lacks PKCE S256, state, nonce or the redirect URL", q)
	}
	pub, _ := url.Parse(publicURL)
	back := oidctest.Authorize(t, auth.String(), pub.Host)
	return ssoFlow{callback: back.Path + "?" + back.RawQuery, cookie: flowCookie}
}

// finish sends the flow to the callback.
func (e *ssoEnv) finish(t *testing.T, f ssoFlow) response {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, e.url+f.callback, nil)
	if err != nil {
		t.Fatal(err)
	}
	if f.cookie != nil {
		req.AddCookie(&http.Cookie{Name: f.cookie.Name, Value: f.cookie.Value}) //nolint:gosec // G124: a request's cookie carries no attributes
	}
	return e.send(req)
}

// mustRefuse checks a refusal: 403 with a page, no session cookie, no
// session of ann's or cara's, and the log's reason (and detail).
func (e *ssoEnv) mustRefuse(t *testing.T, r response, reason, detail string) {
	t.Helper()
	if r.status != http.StatusForbidden || !strings.HasPrefix(r.header.Get("Content-Type"), "text/html") {
		t.Errorf("refused sign-in: %s, want 403 with a page", r)
	}
	for _, c := range (&http.Response{Header: r.header}).Cookies() {
		if c.Name == "linkforge_session" && c.Value != "" {
			t.Errorf("a refused sign-in set the session cookie %+v", c)
		}
	}
	for _, id := range []int64{e.annID, e.caraID} {
		if ss, err := e.store.UserSessions(context.Background(), id, time.Time{}); err != nil || len(ss) != 0 {
			t.Errorf("user %d has sessions %+v, %v after a refused sign-in", id, ss, err)
		}
	}
	logs := e.logs.take()
	if !strings.Contains(logs, `"reason":"`+reason+`"`) || !strings.Contains(logs, detail) {
		t.Errorf("log %s: want reason %q and %q", logs, reason, detail)
	}
}

// meOf is GET /api/v1/me with a session cookie.
func (e *ssoEnv) meOf(t *testing.T, cookie string) (email, role string) {
	t.Helper()
	r := e.withCookie(http.MethodGet, "/api/v1/me", cookie, "")
	mustStatus(t, r, http.StatusOK)
	var me struct {
		Role string `json:"role"`
		User struct {
			Email string `json:"email"`
		} `json:"user"`
	}
	if err := json.Unmarshal(r.body, &me); err != nil {
		t.Fatal(err)
	}
	return me.User.Email, me.Role
}

// TestSSOSignIn: a verified email at a real provider signs in its
// LinkForge user, whether the provider puts the email in the ID token or
// only at its userinfo endpoint; the login page offers SSO; the code
// cannot be used twice.
func TestSSOSignIn(t *testing.T) {
	testdb.Each(t, func(t *testing.T, s linkforge.Store) {
		e := newSSOEnv(t, s, "")
		r := e.do(http.MethodGet, "/login", "", "")
		if mustStatus(t, r, http.StatusOK); !strings.Contains(string(r.body), `href="/login/oidc">Sign in with SSO`) {
			t.Errorf("login page without the SSO link: %s", r.body)
		}
		for _, inToken := range []bool{false, true} {
			e.op.EmailInIDToken(inToken)
			f := e.begin(t, "ann")
			r := e.finish(t, f)
			if r.status != http.StatusSeeOther || r.header.Get("Location") != "/dashboard" {
				t.Fatalf("email in ID token %v: callback %s, want 303 to /dashboard (log %s)", inToken, r, e.logs.take())
			}
			if email, role := e.meOf(t, sessionCookie(t, r)); email != "ann@example.com" || role != "editor" {
				t.Errorf("/api/v1/me = %s as %s, want ann@example.com as editor", email, role)
			}
			if ss, _ := s.UserSessions(context.Background(), e.annID, time.Time{}); len(ss) != 1 {
				t.Errorf("ann has %d sessions, want 1", len(ss))
			}
			if _, err := s.EndUserSessions(context.Background(), e.annID, time.Now()); err != nil {
				t.Fatal(err)
			}
			e.logs.take()
			// The same callback again (a replay of the browser's request,
			// cookie and all): the provider refuses the used code.
			e.mustRefuse(t, e.finish(t, f), "exchange", "invalid_grant")
		}
	})
}

// TestSSOOff: without an issuer the login page has no SSO link and the
// routes answer 404.
func TestSSOOff(t *testing.T) {
	e := newEnv(t, testdb.SQLite(t))
	if r := e.do(http.MethodGet, "/login", "", ""); strings.Contains(string(r.body), "Sign in with SSO") {
		t.Errorf("login page offers SSO without an issuer: %s", r.body)
	}
	for _, p := range []string{oidclogin.StartPath, oidclogin.CallbackPath + "?code=x&state=y"} {
		mustStatus(t, e.do(http.MethodGet, p, "", ""), http.StatusNotFound)
	}
}

// TestSSOAutoJoin: an unknown verified email joins the auto-join tenant
// with its role, and the audit log says so; without auto-join it is
// refused.
func TestSSOAutoJoin(t *testing.T) {
	testdb.Each(t, func(t *testing.T, s linkforge.Store) {
		e := newSSOEnv(t, s, "acme:viewer")
		r := e.finish(t, e.begin(t, "bob"))
		if r.status != http.StatusSeeOther {
			t.Fatalf("auto-join callback %s (log %s)", r, e.logs.take())
		}
		if email, role := e.meOf(t, sessionCookie(t, r)); email != "bob@example.com" || role != "viewer" {
			t.Errorf("/api/v1/me = %s as %s, want bob@example.com as viewer", email, role)
		}
		events, err := s.ListAudit(context.Background(), e.acme, linkforge.AuditQuery{Limit: 10, Before: 0})
		if err != nil || len(events) == 0 || events[0].Action != linkforge.AuditUserInvite || events[0].Target != "bob@example.com" ||
			events[0].Actor.Type != linkforge.ActorUser || events[0].Actor.Name != "bob@example.com" {
			t.Errorf("audit = %+v, %v: want bob's user.invite by bob", events, err)
		}
		// Signing in again finds bob: no second membership, no error.
		if r := e.finish(t, e.begin(t, "bob")); r.status != http.StatusSeeOther {
			t.Errorf("bob's second sign-in: %s", r)
		}
	})
	testdb.Each(t, func(t *testing.T, s linkforge.Store) {
		e := newSSOEnv(t, s, "")
		e.mustRefuse(t, e.finish(t, e.begin(t, "bob")), "unknown_user", "")
		if _, err := s.UserByEmail(context.Background(), "bob@example.com"); linkforge.ErrorCode(err) != linkforge.ENotFound {
			t.Errorf("refused bob: UserByEmail = %v, want not found", err)
		}
	})
}

// TestSSORefusals: an unverified email, an ID token for another client
// or from another issuer, an expired one, and a state that is not the
// browser's are all refused, and make no session.
func TestSSORefusals(t *testing.T) {
	testdb.Each(t, func(t *testing.T, s linkforge.Store) {
		e := newSSOEnv(t, s, "acme:owner")
		for _, inToken := range []bool{false, true} {
			e.op.EmailInIDToken(inToken)
			// The provider leaves email_verified out when it is false.
			e.mustRefuse(t, e.finish(t, e.begin(t, "cara")), "email_unverified", "email_verified is")
		}

		// The provider's token with its aud replaced and signed again with
		// its key (see oidctest.IssueFor): a compliant provider never
		// leaves the requesting client out of aud.
		e.op.IssueFor("another-client")
		e.mustRefuse(t, e.finish(t, e.begin(t, "ann")), "id_token", "expected audience")
		e.op.IssueFor()

		e.op.IssueAs("http://127.0.0.1:1/other-issuer")
		e.mustRefuse(t, e.finish(t, e.begin(t, "ann")), "id_token", "issued by a different provider")
		e.op.IssueAs("")

		// A minute's ID token, used five minutes later (the flow's cookie
		// lasts ten).
		e.op.IDTokenLifetime(time.Minute)
		f := e.begin(t, "ann")
		e.clock.Add(5 * time.Minute)
		e.mustRefuse(t, e.finish(t, f), "id_token_expired", "token is expired")
		e.op.IDTokenLifetime(time.Hour)

		// The state of another sign-in, or no flow cookie at all (a
		// callback URL sent to someone else's browser).
		a, b := e.begin(t, "ann"), e.begin(t, "ann")
		e.mustRefuse(t, e.finish(t, ssoFlow{callback: a.callback, cookie: b.cookie}), "state", "does not match")
		e.mustRefuse(t, e.finish(t, ssoFlow{callback: a.callback}), "state", "missing")
		// A flow cookie older than its ten minutes.
		f = e.begin(t, "ann")
		e.clock.Add(11 * time.Minute)
		e.mustRefuse(t, e.finish(t, f), "state", "expired")
		// The provider's own refusal.
		e.mustRefuse(t, e.finish(t, ssoFlow{callback: oidclogin.CallbackPath + "?error=access_denied&state=x", cookie: f.cookie}),
			"provider_error", "access_denied")

		// And after all that, ann still signs in.
		if r := e.finish(t, e.begin(t, "ann")); r.status != http.StatusSeeOther {
			t.Errorf("ann after the refusals: %s (log %s)", r, e.logs.take())
		}
	})
}

// TestSSOAcrossNodes: a sign-in begun on one node finishes on another
// (the flow is in the browser's cookie, not in a node's memory), and a
// code from another browser's sign-in is refused (PKCE).
func TestSSOAcrossNodes(t *testing.T) {
	testdb.Each(t, func(t *testing.T, s linkforge.Store) {
		e := newSSOEnv(t, s, "")
		other := newEnv(t, s, func(c *web.Config) {
			c.OIDC = &oidclogin.Config{Issuer: e.op.URL, ClientID: oidctest.ClientID, ClientSecret: oidctest.ClientSecret,
				Logger: slog.New(slog.NewJSONHandler(e.logs, nil))}
		})
		f := e.begin(t, "ann")
		r := (&ssoEnv{env: other, op: e.op, logs: e.logs}).finish(t, f)
		if r.status != http.StatusSeeOther {
			t.Fatalf("finished on the other node: %s (log %s)", r, e.logs.take())
		}
		if email, _ := e.meOf(t, sessionCookie(t, r)); email != "ann@example.com" {
			t.Errorf("the first node's /api/v1/me = %s", email)
		}
		if _, err := s.EndUserSessions(context.Background(), e.annID, time.Now()); err != nil {
			t.Fatal(err)
		}
		e.logs.take()
		// Code injection: the victim's state and cookie with a code the
		// attacker got in a sign-in of their own. The provider refuses
		// it: the victim's PKCE verifier is not the one it was issued for.
		victim, attacker := e.begin(t, "ann"), e.begin(t, "ann")
		vq, _ := url.ParseQuery(strings.SplitN(victim.callback, "?", 2)[1])
		aq, _ := url.ParseQuery(strings.SplitN(attacker.callback, "?", 2)[1])
		vq.Set("code", aq.Get("code"))
		e.mustRefuse(t, e.finish(t, ssoFlow{callback: oidclogin.CallbackPath + "?" + vq.Encode(), cookie: victim.cookie}),
			"exchange", "invalid code_verifier")
	})
}

// TestSSOMembership: a user who belongs to no tenant any more is refused
// even with auto-join (it must not undo their removal), and an auto-join
// tenant that does not exist is a refusal that says so.
func TestSSOMembership(t *testing.T) {
	testdb.Each(t, func(t *testing.T, s linkforge.Store) {
		e := newSSOEnv(t, s, "acme:viewer")
		ctx := context.Background()
		// cara stays the owner the tenant must keep.
		if _, err := s.SetMemberRole(ctx, e.acme, e.caraID, linkforge.RoleOwner); err != nil {
			t.Fatal(err)
		}
		if err := s.RemoveMember(ctx, e.acme, e.annID); err != nil {
			t.Fatal(err)
		}
		e.mustRefuse(t, e.finish(t, e.begin(t, "ann")), "no_tenant", "")
		if ms, _ := s.Memberships(ctx, e.annID); len(ms) != 0 {
			t.Errorf("refused ann rejoined: %+v", ms)
		}
	})
	e := newSSOEnv(t, testdb.SQLite(t), "nosuch:viewer")
	e.mustRefuse(t, e.finish(t, e.begin(t, "bob")), "auto_join_tenant", `no tenant \"nosuch\"`)
}
