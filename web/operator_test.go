package web_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/internal/testdb"
	"github.com/linkforge/linkforge/people"
	"github.com/linkforge/linkforge/web"
)

// mustOperatorToken makes an operator token directly through the store.
func mustOperatorToken(t *testing.T, s linkforge.Store, name string) string {
	t.Helper()
	secret, hash, display := linkforge.NewToken()
	if _, err := s.CreateOperatorToken(context.Background(), linkforge.OperatorToken{Name: name, Hash: hash, Display: display}); err != nil {
		t.Fatalf("CreateOperatorToken: %v", err)
	}
	return secret
}

// linkStateBody is what the state tests read of a link.
type linkStateBody struct {
	ID            string  `json:"id"`
	Slug          string  `json:"slug"`
	State         string  `json:"state"`
	BlockedReason *string `json:"blocked_reason"`
	Clicks        int64   `json:"clicks"`
	Tags          []string
	Tenant        string `json:"tenant"`
}

// TestLinkStatesFromEachActor walks a link through every state, from the
// tenant (disable, enable) and from the operator (block, lift), and checks
// at each step what a visitor gets (302, 410 or the fallback, 451 naming
// no target, for GET, HEAD and a preview agent), what is counted (no click
// while disabled or blocked), that stats and tags are kept (the flushed
// total the same before and after), the filters, the webhooks and the
// audit logs of both.
func TestLinkStatesFromEachActor(t *testing.T) {
	testdb.Each(t, func(t *testing.T, s linkforge.Store) {
		t.Parallel()
		ctr := mustCounter(t, s)
		e := newEnv(t, s, func(c *web.Config) { useCounter(c, ctr.Counter); c.WebhookAllowPrivate = true })
		tenant, tok := mustTenantToken(t, s, "acme")
		op := mustOperatorToken(t, s, "ops")
		receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) }))
		t.Cleanup(receiver.Close)
		hook := mustJSON[webhookBody](t, e.do(http.MethodPost, "/api/v1/webhooks", tok,
			`{"url":"`+receiver.URL+`/hook","events":["link.disabled","link.blocked"]}`))
		l := mustStoreLink(t, s, linkforge.Link{TenantID: tenant, Slug: "st", URL: "https://target.example/secret-path", Tags: []string{"keep"}})
		fb := mustStoreLink(t, s, linkforge.Link{TenantID: tenant, Slug: "st-fb", URL: "https://target.example/x", FallbackURL: "https://fallback.example/"})
		// Clicks flushed before: the stats every state keeps.
		if err := s.UpsertRollup(t.Context(), "n1", []linkforge.RollupRow{{LinkID: l.ID, Bucket: time.Now().UTC().Truncate(time.Minute), Count: 5}}); err != nil {
			t.Fatal(err)
		}
		const browser = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0 Safari/537.36"
		visit := func(method, slug, agent string) response {
			t.Helper()
			req, _ := http.NewRequest(method, e.url+"/"+slug, nil)
			req.Header.Set("User-Agent", agent)
			return e.send(req)
		}
		link := func() linkStateBody {
			t.Helper()
			r := e.do(http.MethodGet, "/api/v1/links/st", tok, "")
			mustStatus(t, r, http.StatusOK)
			return mustJSON[linkStateBody](t, r)
		}
		patch := func(body string) response { return e.do(http.MethodPatch, "/api/v1/links/st", tok, body) }
		listed := func(state string) []string {
			t.Helper()
			r := e.do(http.MethodGet, "/api/v1/links?state="+state, tok, "")
			mustStatus(t, r, http.StatusOK)
			var out []string
			for _, b := range mustJSON[struct{ Links []linkStateBody }](t, r).Links {
				out = append(out, b.Slug)
			}
			slices.Sort(out)
			return out
		}
		wantWithheld := func(step string, status int) {
			t.Helper()
			for _, r := range []response{visit(http.MethodGet, "st", browser), visit(http.MethodHead, "st", browser),
				visit(http.MethodGet, "st", "Slackbot-LinkExpanding 1.0 (+https://api.slack.com/robots)")} {
				mustHTML(t, r, status)
				if strings.Contains(string(r.body), "target.example") || r.header.Get("Location") != "" {
					t.Errorf("%s: %s %s names the target: %s", step, r.method, "/st", r)
				}
				if got := r.header.Get("X-Robots-Tag"); got != "noindex" {
					t.Errorf("%s: X-Robots-Tag %q, want noindex", step, got)
				}
			}
		}

		// Active: a click is counted.
		if b := link(); b.State != "active" || b.BlockedReason != nil || b.Clicks != 5 {
			t.Fatalf("new link: %+v", b)
		}
		mustRedirect(t, visit(http.MethodGet, "st", browser), "https://target.example/secret-path")
		if n := ctr.count(t, l.ID); n != 1 {
			t.Fatalf("active: %d clicks counted, want 1", n)
		}

		// Disabled by the tenant: 410 (or the fallback), nothing counted.
		r := patch(`{"disabled":true}`)
		mustStatus(t, r, http.StatusOK)
		if b := mustJSON[linkStateBody](t, r); b.State != "disabled" || b.Clicks != 5 || !slices.Equal(b.Tags, []string{"keep"}) {
			t.Fatalf("disable: %+v", b)
		}
		wantWithheld("disabled", http.StatusGone)
		mustStatus(t, e.do(http.MethodPatch, "/api/v1/links/st-fb", tok, `{"disabled":true}`), http.StatusOK)
		mustRedirect(t, visit(http.MethodGet, "st-fb", browser), "https://fallback.example/")
		if got := listed("disabled"); !slices.Equal(got, []string{"st", "st-fb"}) {
			t.Errorf("state=disabled: %v", got)
		}
		mustProblem(t, patch(`{"disabled":"yes"}`), http.StatusBadRequest, "disabled")
		mustProblem(t, patch(`{"state":"active"}`), http.StatusBadRequest, "state")

		// Blocked by the operator: 451, whatever the tenant's switch.
		mustProblem(t, e.do(http.MethodPost, "/api/v1/operator/links/"+link().ID+"/block", op, `{}`), http.StatusBadRequest, "reason")
		mustProblem(t, e.do(http.MethodPost, "/api/v1/operator/links/"+link().ID+"/block", op, `{"reason":"x","why":1}`), http.StatusBadRequest, "why")
		mustProblem(t, e.do(http.MethodPost, "/api/v1/operator/links/999999/block", op, `{"reason":"x"}`), http.StatusNotFound, "")
		r = e.do(http.MethodPost, "/api/v1/operator/links/"+link().ID+"/block", op, `{"reason":"phishing report 42"}`)
		mustStatus(t, r, http.StatusOK)
		if b := mustJSON[linkStateBody](t, r); b.State != "blocked" || b.Tenant != "acme" || b.BlockedReason == nil || *b.BlockedReason != "phishing report 42" {
			t.Fatalf("block: %+v", b)
		}
		wantWithheld("blocked", http.StatusUnavailableForLegalReasons)
		// The tenant cannot lift it, nor flip its switch under it; other
		// edits go on.
		p := mustProblem(t, patch(`{"disabled":false}`), http.StatusConflict, "disabled")
		if !strings.Contains(p.Detail, "operator") {
			t.Errorf("PATCH of a blocked link's state: %+v, want it to say the operator blocked it", p)
		}
		mustStatus(t, patch(`{"title":"still mine"}`), http.StatusOK)
		if b := link(); b.State != "blocked" || b.Clicks != 5 {
			t.Errorf("blocked after an edit: %+v", b)
		}
		if got := listed("blocked"); !slices.Equal(got, []string{"st"}) {
			t.Errorf("state=blocked: %v", got)
		}
		if got := listed("active"); len(got) != 0 {
			t.Errorf("state=active: %v", got)
		}

		// Lifted: back to the tenant's state (disabled), then enabled.
		r = e.do(http.MethodDelete, "/api/v1/operator/links/"+link().ID+"/block", op, "")
		mustStatus(t, r, http.StatusOK)
		if b := mustJSON[linkStateBody](t, r); b.State != "disabled" || b.BlockedReason != nil {
			t.Errorf("lifted: %+v", b)
		}
		wantWithheld("disabled again", http.StatusGone)
		mustStatus(t, patch(`{"disabled":false}`), http.StatusOK)
		mustRedirect(t, visit(http.MethodGet, "st", browser), "https://target.example/secret-path")
		if n := ctr.count(t, l.ID); n != 2 {
			t.Errorf("after the states: %d clicks counted, want 2 (none while disabled or blocked)", n)
		}
		if n := ctr.count(t, fb.ID); n != 0 {
			t.Errorf("the disabled link with a fallback: %d clicks counted, want 0", n)
		}
		if b := link(); b.State != "active" || b.Clicks != 5 || !slices.Equal(b.Tags, []string{"keep"}) {
			t.Errorf("after every state: %+v, want active with its 5 flushed clicks and its tag", b)
		}

		// Webhooks and audit logs.
		var events []string
		for _, d := range mustJSON[struct{ Deliveries []deliveryBody }](t, e.do(http.MethodGet, "/api/v1/webhooks/"+hook.ID+"/deliveries", tok, "")).Deliveries {
			events = append(events, d.Event)
		}
		slices.Sort(events)
		if want := []string{"link.blocked", "link.disabled", "link.disabled"}; !slices.Equal(events, want) {
			t.Errorf("webhook deliveries: %v, want %v", events, want)
		}
		var tenantLog []string
		for _, ev := range mustJSON[auditPage](t, e.do(http.MethodGet, "/api/v1/audit?limit=100", tok, "")).Events {
			if ev.Action != "link.update" {
				tenantLog = append(tenantLog, ev.Actor.Type+" "+ev.Action+" "+ev.Target)
			}
		}
		want := []string{"token link.enable st", "operator link.unblock st", "operator link.block st: phishing report 42",
			"token link.disable st-fb", "token link.disable st", "token webhook.create " + hook.ID}
		if !slices.Equal(tenantLog, want) {
			t.Errorf("tenant's audit:\n got %q\nwant %q", tenantLog, want)
		}
		r = e.do(http.MethodGet, "/api/v1/operator/audit", op, "")
		mustStatus(t, r, http.StatusOK)
		var opLog []string
		for _, ev := range mustJSON[struct {
			Events []struct {
				auditEventBody
				Tenant string `json:"tenant"`
			} `json:"events"`
		}](t, r).Events {
			opLog = append(opLog, ev.Actor.Name+" "+ev.Action+" "+ev.Target+" @"+ev.Tenant)
		}
		if want := []string{"ops link.unblock st @acme", "ops link.block st: phishing report 42 @acme"}; !slices.Equal(opLog, want) {
			t.Errorf("operator's audit: %q, want %q", opLog, want)
		}
	})
}

// auditEventBody and auditPage are what these tests read of the audit
// logs.
type auditEventBody struct {
	Actor struct {
		Type string  `json:"type"`
		ID   *string `json:"id"`
		Name string  `json:"name"`
	} `json:"actor"`
	Action string `json:"action"`
	Target string `json:"target"`
}

type auditPage struct {
	Events []auditEventBody `json:"events"`
}

// TestSuspendTenant: a suspended tenant's links answer 451 naming no
// target, its tokens and sessions 403 with a problem that says why; other
// tenants go on; resumed, all of it works again. The operator sees it in
// its list of tenants and links.
func TestSuspendTenant(t *testing.T) {
	testdb.Each(t, func(t *testing.T, s linkforge.Store) {
		t.Parallel()
		e := newEnv(t, s)
		acme, tok := mustTenantToken(t, s, "acme")
		globex, other := mustTenantToken(t, s, "globex")
		op := mustOperatorToken(t, s, "ops")
		mustStoreLink(t, s, linkforge.Link{TenantID: acme, Slug: "sus", URL: "https://acme.example/a"})
		mustStoreLink(t, s, linkforge.Link{TenantID: globex, Slug: "ok", URL: "https://globex.example/"})
		cookie := sessionFor(t, e, s, acme, "ann@example.com", linkforge.RoleOwner)
		mustRedirect(t, e.do(http.MethodGet, "/sus", "", ""), "https://acme.example/a") // cached now

		mustProblem(t, e.do(http.MethodPost, "/api/v1/operator/tenants/initech/suspend", op, ""), http.StatusNotFound, "")
		r := e.do(http.MethodPost, "/api/v1/operator/tenants/acme/suspend", op, "")
		mustStatus(t, r, http.StatusOK)
		if b := mustJSON[struct {
			Name, State string
			Links       int64
		}](t, r); b.Name != "acme" || b.State != "suspended" || b.Links != 1 {
			t.Errorf("suspend answered %s", r)
		}
		r = e.do(http.MethodGet, "/sus", "", "")
		mustHTML(t, r, http.StatusUnavailableForLegalReasons)
		if strings.Contains(string(r.body), "acme.example") {
			t.Errorf("the 451 page names the target: %s", r.body)
		}
		p := mustProblem(t, e.do(http.MethodGet, "/api/v1/links", tok, ""), http.StatusForbidden, "")
		if p.Code != linkforge.EForbidden || !strings.Contains(p.Detail, "suspended") {
			t.Errorf("a suspended tenant's token: %+v", p)
		}
		p = mustProblem(t, e.withCookie(http.MethodGet, "/api/v1/links", cookie, ""), http.StatusForbidden, "")
		if !strings.Contains(p.Detail, "suspended") {
			t.Errorf("a suspended tenant's session: %+v", p)
		}
		mustRedirect(t, e.do(http.MethodGet, "/ok", "", ""), "https://globex.example/")
		mustStatus(t, e.do(http.MethodGet, "/api/v1/links", other, ""), http.StatusOK)
		// The operator still sees the tenant's links.
		r = e.do(http.MethodGet, "/api/v1/operator/links?target_host=acme.example", op, "")
		mustStatus(t, r, http.StatusOK)
		if ls := mustJSON[struct{ Links []linkStateBody }](t, r).Links; len(ls) != 1 || ls[0].Slug != "sus" || ls[0].Tenant != "acme" {
			t.Errorf("operator links of acme.example: %s", r)
		}
		r = e.do(http.MethodGet, "/api/v1/operator/tenants", op, "")
		mustStatus(t, r, http.StatusOK)
		var states []string
		for _, ts := range mustJSON[struct {
			Tenants []struct{ Name, State string }
		}](t, r).Tenants {
			states = append(states, ts.Name+":"+ts.State)
		}
		if !slices.Equal(states, []string{"acme:suspended", "globex:active"}) {
			t.Errorf("operator tenants: %v", states)
		}

		mustStatus(t, e.do(http.MethodPost, "/api/v1/operator/tenants/acme/resume", op, ""), http.StatusOK)
		mustRedirect(t, e.do(http.MethodGet, "/sus", "", ""), "https://acme.example/a")
		mustStatus(t, e.do(http.MethodGet, "/api/v1/links", tok, ""), http.StatusOK)
		mustStatus(t, e.withCookie(http.MethodGet, "/api/v1/links", cookie, ""), http.StatusOK)
		var log []string
		for _, ev := range mustJSON[auditPage](t, e.do(http.MethodGet, "/api/v1/audit", tok, "")).Events {
			log = append(log, ev.Actor.Type+" "+ev.Actor.Name+" "+ev.Action+" "+ev.Target)
		}
		if len(log) < 2 || log[0] != "operator ops tenant.resume acme" || log[1] != "operator ops tenant.suspend acme" {
			t.Errorf("tenant's audit: %q", log)
		}
	})
}

// sessionFor signs a new user of role in the tenant in, and returns the
// session cookie.
func sessionFor(t *testing.T, e *env, s linkforge.Store, tenantID int64, email string, role linkforge.Role) string {
	t.Helper()
	svc, err := people.New(people.Config{Store: s, Hasher: cheapHasher{}, PublicURL: publicURL})
	if err != nil {
		t.Fatal(err)
	}
	_, invite, _, err := svc.Invite(t.Context(), tenantID, email, role)
	if err != nil {
		t.Fatal(err)
	}
	return sessionCookie(t, e.form(strings.TrimPrefix(invite, publicURL), "", url.Values{"password": {"correct horse battery"}}))
}

// TestOperatorRefusesTenantCredentials walks every /api/v1/operator/*
// operation of the OpenAPI document with each tenant role's token and
// session (owner, editor, viewer): 403 forbidden, and nothing changed;
// without a credential 401, with an unknown token 401; the operator's
// token and an operator user's session are admitted.
func TestOperatorRefusesTenantCredentials(t *testing.T) {
	testdb.Each(t, func(t *testing.T, s linkforge.Store) {
		t.Parallel()
		e := newEnv(t, s)
		var tenantID int64
		tokens := map[linkforge.Role]string{}
		for _, role := range linkforge.Roles {
			tenantID, tokens[role] = mustRoleToken(t, s, "acme", role)
		}
		sessions := map[linkforge.Role]string{}
		for _, role := range linkforge.Roles {
			sessions[role] = sessionFor(t, e, s, tenantID, string(role)+"@example.com", role)
		}
		l := mustStoreLink(t, s, linkforge.Link{TenantID: tenantID, Slug: "s1", URL: "https://example.com/"})
		opUser := sessionFor(t, e, s, tenantID, "ops@example.com", linkforge.RoleViewer)
		if err := s.SetUserOperator(t.Context(), "ops@example.com", true); err != nil {
			t.Fatal(err)
		}
		op := mustOperatorToken(t, s, "ops")
		ops := 0
		for _, o := range servedOperations(t, e) {
			if !strings.HasPrefix(o.path, "/api/v1/operator/") {
				continue
			}
			ops++
			path := strings.NewReplacer("{name}", "acme", "{id}", itoa(l.ID)).Replace(o.path)
			body := ""
			if o.method == http.MethodPost && strings.HasSuffix(path, "/block") {
				body = `{"reason":"walk"}`
			}
			if strings.HasSuffix(path, "list") {
				if o.method == http.MethodPost {
					body = `{"host":"walk.example"}`
				}
				if o.method == http.MethodDelete {
					path += "?host=walk.example"
				}
			}
			for _, role := range linkforge.Roles {
				for kind, r := range map[string]response{
					"token":   e.do(o.method, path, tokens[role], body),
					"session": e.withCookie(o.method, path, sessions[role], body, "X-CSRF-Token", "x", "Sec-Fetch-Site", "same-origin"),
				} {
					if r.status != http.StatusForbidden || problemOf(r) != linkforge.EForbidden {
						t.Errorf("%s %s with a tenant %s's %s: %s, want 403 forbidden", o.method, path, role, kind, r)
					}
				}
			}
			if r := e.do(o.method, path, "", body); r.status != http.StatusUnauthorized {
				t.Errorf("%s %s without a credential: %s, want 401", o.method, path, r)
			}
			unknown, _, _ := linkforge.NewToken()
			if r := e.do(o.method, path, unknown, body); r.status != http.StatusUnauthorized {
				t.Errorf("%s %s with an unknown token: %s, want 401", o.method, path, r)
			}
			if o.method == http.MethodGet {
				if r := e.withCookie(o.method, path, opUser, ""); r.status != http.StatusOK {
					t.Errorf("%s %s with an operator user's session: %s, want 200", o.method, path, r)
				}
			}
		}
		if ops != 17 {
			t.Errorf("walked %d operator operations, want 17", ops)
		}
		if got := mustTenantLink(t, s, tenantID, "s1"); got.State() != linkforge.LinkActive {
			t.Errorf("after the refusals the link is %s", got.State())
		}
		if ts, err := s.OperatorTenants(t.Context(), time.Now()); err != nil || ts[0].SuspendedAt != nil {
			t.Errorf("after the refusals: %+v, %v", ts, err)
		}
		// The operator's token and user do reach them; the user's writes
		// by cookie need the session's CSRF token, as every cookie write.
		mustStatus(t, e.do(http.MethodPost, "/api/v1/operator/links/"+itoa(l.ID)+"/block", op, `{"reason":"r"}`), http.StatusOK)
		mustStatus(t, e.do(http.MethodDelete, "/api/v1/operator/links/"+itoa(l.ID)+"/block", op, ""), http.StatusOK)
		block := "/api/v1/operator/links/" + itoa(l.ID) + "/block"
		mustProblem(t, e.withCookie(http.MethodPost, block, opUser, `{"reason":"r"}`, "Sec-Fetch-Site", "same-origin"), http.StatusForbidden, "")
		me := mustJSON[meBody](t, e.withCookie(http.MethodGet, "/api/v1/me", opUser, ""))
		if me.CSRFToken == nil {
			t.Fatalf("me = %+v, want a CSRF token", me)
		}
		r := e.withCookie(http.MethodPost, block, opUser, `{"reason":"by the operator user"}`, "X-CSRF-Token", *me.CSRFToken, "Sec-Fetch-Site", "same-origin")
		mustStatus(t, r, http.StatusOK)
		evs, err := s.OperatorAudit(t.Context(), 1, 0)
		if err != nil || len(evs) != 1 || evs[0].Actor.Type != linkforge.ActorUser || evs[0].Actor.Name != "ops@example.com" {
			t.Errorf("the operator user's block in the operator's log: %+v, %v", evs, err)
		}
	})
}

// TestRobotsAndSecurityTxt: robots.txt disallows every crawler by
// default and allows them with RobotsAllow; security.txt names the abuse
// contact with an Expires a year ahead, and is 404 without one; the
// visitor pages say noindex.
func TestRobotsAndSecurityTxt(t *testing.T) {
	s := testdb.SQLite(t)
	e := newEnv(t, s)
	r := e.do(http.MethodGet, "/robots.txt", "", "")
	mustStatus(t, r, http.StatusOK)
	if string(r.body) != "User-agent: *\nDisallow: /\n" || !strings.HasPrefix(r.header.Get("Content-Type"), "text/plain") {
		t.Errorf("robots.txt: %s", r)
	}
	mustStatus(t, e.do(http.MethodGet, "/.well-known/security.txt", "", ""), http.StatusNotFound)
	r = e.do(http.MethodGet, "/nope", "", "")
	mustHTML(t, r, http.StatusNotFound)
	if r.header.Get("X-Robots-Tag") != "noindex" {
		t.Errorf("404 page: X-Robots-Tag %q", r.header.Get("X-Robots-Tag"))
	}

	// A tenant's domain is a short-link host too: robots.txt there, and a
	// blocked link of the domain answers 451.
	dom := newEnv(t, s, verifyNone)
	_, tok := mustTenantToken(t, s, "acme")
	mustStatus(t, dom.do(http.MethodPost, "/api/v1/domains", tok, `{"host":"go.acme.com"}`), http.StatusCreated)
	l := dom.mustCreate(tok, `{"slug":"d1","url":"https://example.com/d","domain":"go.acme.com"}`)
	if r := dom.onHost("go.acme.com", "/robots.txt"); r.status != http.StatusOK || string(r.body) != "User-agent: *\nDisallow: /\n" {
		t.Errorf("robots.txt on a tenant's domain: %s", r)
	}
	mustStatus(t, dom.do(http.MethodPost, "/api/v1/operator/links/"+l.ID+"/block", mustOperatorToken(t, s, "ops"), `{"reason":"spam"}`), http.StatusOK)
	mustHTML(t, dom.onHost("go.acme.com", "/d1"), http.StatusUnavailableForLegalReasons)

	open := newEnv(t, s, func(c *web.Config) { c.RobotsAllow = true; c.AbuseContact = "mailto:abuse@example.com" })
	if r := open.do(http.MethodGet, "/robots.txt", "", ""); string(r.body) != "User-agent: *\nAllow: /\n" {
		t.Errorf("robots.txt with RobotsAllow: %s", r)
	}
	r = open.do(http.MethodGet, "/.well-known/security.txt", "", "")
	mustStatus(t, r, http.StatusOK)
	expires := open.clock.Now().UTC().AddDate(1, 0, 0).Truncate(time.Second).Format(time.RFC3339)
	if want := "Contact: mailto:abuse@example.com\nExpires: " + expires + "\n"; string(r.body) != want {
		t.Errorf("security.txt: %q, want %q", r.body, want)
	}
}
