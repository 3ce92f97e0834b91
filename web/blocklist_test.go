package web_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/blocklist"
	"github.com/linkforge/linkforge/internal/testdb"
	"github.com/linkforge/linkforge/web"
)

// mustLists parses a blocklist and an allowlist in the domains format.
func mustLists(t *testing.T, block, allow string) blocklist.Lists {
	t.Helper()
	b, err := blocklist.ParseDomains([]byte(block))
	if err != nil {
		t.Fatal(err)
	}
	a, err := blocklist.ParseDomains([]byte(allow))
	if err != nil {
		t.Fatal(err)
	}
	return blocklist.Lists{Block: b.Set, Allow: a.Set}
}

// mustBlocked checks a 422 blocked_target problem naming field and the
// entry.
func mustBlocked(t *testing.T, r response, field, entry string) {
	t.Helper()
	p := mustProblem(t, r, http.StatusUnprocessableEntity, field)
	if p.Code != linkforge.EBlockedTarget || !strings.Contains(p.Detail, entry) {
		t.Errorf("problem %+v, want code blocked_target naming the entry %s", p, entry)
	}
}

// TestBlockedTargets: a create, update, bulk item or import line whose
// target, fallback, device, rule or variant URL is on the blocklist (in
// any spelling of its host, or under it) answers 422 blocked_target with
// the entry, and writes nothing; the allowlist wins; an update that
// keeps a target blocked since is let through.
func TestBlockedTargets(t *testing.T) {
	testdb.Each(t, func(t *testing.T, s linkforge.Store) {
		t.Parallel()
		lists := mustLists(t, "evil.example\nxn--bcher-kva.example\n", "good.evil.example\n")
		e := newEnv(t, s, func(c *web.Config) { c.Targets = lists })
		tenant, tok := mustTenantToken(t, s, "acme")

		for body, field := range map[string]string{
			`{"slug":"a1","url":"https://evil.example/x"}`:                                                                                                 "url",
			`{"slug":"a2","url":"https://X.EVIL.EXAMPLE./x"}`:                                                                                              "url",
			`{"slug":"a5","url":"https://ok.example/","fallback_url":"https://evil.example/"}`:                                                             "fallback_url",
			`{"slug":"a6","url":"https://ok.example/","device_urls":{"ios":"https://a.evil.example"}}`:                                                     "device_urls.ios",
			`{"slug":"a7","url":"https://ok.example/","rules":[{"conditions":[{"type":"country","value":"DE"}],"url":"https://evil.example/de"}]}`:         "rules[0].url",
			`{"slug":"a8","url":"https://ok.example/","variants":[{"url":"https://ok.example/b","weight":1},{"url":"https://evil.example/a","weight":1}]}`: "variants[1].url",
		} {
			mustBlocked(t, e.do(http.MethodPost, "/api/v1/links", tok, body), field, "evil.example")
		}
		for _, body := range []string{`{"slug":"a3","url":"https://xn--bcher-kva.example/"}`, `{"slug":"a4","url":"https://shop.BÜCHER.example/"}`} {
			mustBlocked(t, e.do(http.MethodPost, "/api/v1/links", tok, body), "url", "xn--bcher-kva.example")
		}
		if n := len(mustTenantLinks(t, s, tenant)); n != 0 {
			t.Fatalf("%d links stored after refused creates, want 0", n)
		}
		// The allowlist wins over the blocklist entry above it.
		e.mustCreate(tok, `{"slug":"ok","url":"https://good.evil.example/"}`)

		// An update to a blocked target is refused and changes nothing.
		mustBlocked(t, e.do(http.MethodPatch, "/api/v1/links/ok", tok, `{"url":"https://www.evil.example/"}`), "url", "evil.example")
		if l := mustTenantLink(t, s, tenant, "ok"); l.URL != "https://good.evil.example/" {
			t.Errorf("after a refused update the url is %q", l.URL)
		}
		// A link whose target was blocked after it was made may still be
		// edited (here disabled) without changing its target.
		mustStoreLink(t, s, linkforge.Link{TenantID: tenant, Slug: "old", URL: "https://evil.example/old"})
		mustStatus(t, e.do(http.MethodPatch, "/api/v1/links/old", tok, `{"title":"flagged","disabled":true}`), http.StatusOK)
		// A link with rules whose rule URL is changed to a blocked one.
		e.mustCreate(tok, `{"slug":"ru","url":"https://ok.example/","rules":[{"conditions":[{"type":"country","value":"DE"}],"url":"https://ok.example/de"}]}`)
		mustBlocked(t, e.do(http.MethodPatch, "/api/v1/links/ru", tok,
			`{"rules":[{"conditions":[{"type":"country","value":"DE"}],"url":"https://evil.example/de"}]}`), "rules[0].url", "evil.example")

		// Bulk: the blocked item alone answers 422.
		r := e.do(http.MethodPost, "/api/v1/bulk/links", tok, `{"links":[{"slug":"b1","url":"https://fine.example/"},{"slug":"b2","url":"https://evil.example/"}]}`)
		mustStatus(t, r, http.StatusOK)
		bulk := mustJSON[struct {
			Results []struct {
				Status  int         `json:"status"`
				Problem problemBody `json:"problem"`
			} `json:"results"`
		}](t, r)
		if len(bulk.Results) != 2 || bulk.Results[0].Status != http.StatusCreated || bulk.Results[1].Status != http.StatusUnprocessableEntity ||
			bulk.Results[1].Problem.Code != linkforge.EBlockedTarget {
			t.Errorf("bulk results %+v, want 201 then 422 blocked_target", bulk.Results)
		}

		// Import: the blocked line is an error line with the 422 problem.
		r = e.do(http.MethodPost, "/api/v1/import?format=csv", tok, "slug,url\ni1,https://fine.example/\ni2,https://evil.example/\n")
		mustStatus(t, r, http.StatusOK)
		imp := mustJSON[struct {
			Created int `json:"created"`
			Failed  int `json:"failed"`
			Errors  []struct {
				Line    int         `json:"line"`
				Problem problemBody `json:"problem"`
			} `json:"errors"`
		}](t, r)
		if imp.Created != 1 || imp.Failed != 1 || len(imp.Errors) != 1 || imp.Errors[0].Line != 3 ||
			imp.Errors[0].Problem.Status != http.StatusUnprocessableEntity || imp.Errors[0].Problem.Code != linkforge.EBlockedTarget {
			t.Errorf("import %+v, want line 3 refused with 422 blocked_target", imp)
		}
		for slug, want := range map[string]bool{"b1": true, "b2": false, "i1": true, "i2": false} {
			if _, err := s.LinkBySlug(t.Context(), linkforge.PublicDomainID, slug); (err == nil) != want {
				t.Errorf("%s stored: %v, want %v", slug, err == nil, want)
			}
		}
	})
}

// TestOperatorTargetEntries: the operator's blocklist and allowlist
// entries, through the API: added in any spelling (stored canonical),
// listed, refused twice (409) or when a public suffix (400), in force on
// this node at once and on another node at its next refresh, the
// allowlist winning; removed (204, then
// 404); audited in the operator's log.
func TestOperatorTargetEntries(t *testing.T) {
	testdb.Each(t, func(t *testing.T, s linkforge.Store) {
		t.Parallel()
		files := blocklist.NewFiles(nil, nil)
		files.UseStore(s)
		e := newEnv(t, s, func(c *web.Config) { c.Targets = files })
		other := blocklist.NewFiles(nil, nil)
		other.UseStore(s)
		_, tok := mustTenantToken(t, s, "acme")
		op := mustOperatorToken(t, s, "ops")

		r := e.do(http.MethodPost, "/api/v1/operator/blocklist", op, `{"host":"https://Login.EVIL.example./x","note":"phishing kit"}`)
		mustStatus(t, r, http.StatusCreated)
		if got := mustJSON[struct{ Host, Note string }](t, r); got.Host != "login.evil.example" || got.Note != "phishing kit" {
			t.Errorf("the entry: %+v", got)
		}
		mustStatus(t, e.do(http.MethodPost, "/api/v1/operator/blocklist", op, `{"host":"bücher.example"}`), http.StatusCreated)
		mustProblem(t, e.do(http.MethodPost, "/api/v1/operator/blocklist", op, `{"host":"LOGIN.evil.example"}`), http.StatusConflict, "")
		mustProblem(t, e.do(http.MethodPost, "/api/v1/operator/blocklist", op, `{"host":"co.uk"}`), http.StatusBadRequest, "host")
		mustProblem(t, e.do(http.MethodPost, "/api/v1/operator/blocklist", op, `{"host":"a b"}`), http.StatusBadRequest, "host")
		mustProblem(t, e.do(http.MethodPost, "/api/v1/operator/allowlist", op, `{"note":"x"}`), http.StatusBadRequest, "host")

		list := mustJSON[struct {
			Entries []struct{ Host string } `json:"entries"`
		}](t, e.do(http.MethodGet, "/api/v1/operator/blocklist", op, ""))
		if len(list.Entries) != 2 || list.Entries[0].Host != "login.evil.example" || list.Entries[1].Host != "xn--bcher-kva.example" {
			t.Errorf("the blocklist: %+v", list.Entries)
		}

		// In force on this node at once.
		mustBlocked(t, e.do(http.MethodPost, "/api/v1/links", tok, `{"url":"https://a.login.evil.example/"}`), "url", "login.evil.example")
		mustBlocked(t, e.do(http.MethodPost, "/api/v1/links", tok, `{"url":"https://BÜCHER.example/"}`), "url", "xn--bcher-kva.example")
		e.mustCreate(tok, `{"url":"https://evil.example/"}`) // above the entry: not blocked
		// On another node at its next refresh (the minute's tick).
		if _, ok := other.BlockedHost("login.evil.example"); ok {
			t.Error("the other node applies the entry before its refresh")
		}
		if err := other.RefreshOperator(t.Context()); err != nil {
			t.Fatal(err)
		}
		if entry, ok := other.BlockedHost("x.login.evil.example"); !ok || entry != "login.evil.example" {
			t.Errorf("the other node after its refresh: %q %v", entry, ok)
		}

		// The allowlist wins (over a file's entries too: package
		// blocklist's TestFilesReload).
		mustStatus(t, e.do(http.MethodPost, "/api/v1/operator/allowlist", op, `{"host":"ok.login.evil.example"}`), http.StatusCreated)
		e.mustCreate(tok, `{"url":"https://ok.login.evil.example/"}`)
		mustBlocked(t, e.do(http.MethodPost, "/api/v1/links", tok, `{"url":"https://ko.login.evil.example/"}`), "url", "login.evil.example")

		mustStatus(t, e.do(http.MethodDelete, "/api/v1/operator/blocklist?host=LOGIN.evil.example", op, ""), http.StatusNoContent)
		mustProblem(t, e.do(http.MethodDelete, "/api/v1/operator/blocklist?host=login.evil.example", op, ""), http.StatusNotFound, "")
		mustProblem(t, e.do(http.MethodDelete, "/api/v1/operator/blocklist", op, ""), http.StatusBadRequest, "host")
		e.mustCreate(tok, `{"url":"https://ko.login.evil.example/"}`)

		evs := mustJSON[struct {
			Events []struct {
				Action string `json:"action"`
				Target string `json:"target"`
			} `json:"events"`
		}](t, e.do(http.MethodGet, "/api/v1/operator/audit", op, ""))
		var got []string
		for _, ev := range evs.Events {
			got = append(got, ev.Action+" "+ev.Target)
		}
		want := []string{"operator.target_remove block login.evil.example", "operator.target_add allow ok.login.evil.example",
			"operator.target_add block xn--bcher-kva.example", "operator.target_add block login.evil.example"}
		if strings.Join(got, "|") != strings.Join(want, "|") {
			t.Errorf("operator audit: %q, want %q", got, want)
		}
	})
}
