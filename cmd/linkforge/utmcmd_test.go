package main

import (
	"net/http"
	"strings"
	"testing"

	"github.com/linkforge/linkforge/client"
)

// TestUTMCommands: link create and update take the --utm-* flags (update
// replaces the utm, --clear utm removes it); utm-template add, list and
// delete; a taken name is the API's 409, exit 1; stats campaigns prints
// the clicks counted and flushed.
func TestUTMCommands(t *testing.T) {
	srv := startAPIServer(t)
	env := map[string]string{"LINKFORGE_SERVER": srv.url, "LINKFORGE_TOKEN": srv.token}

	out, _ := runLink(t, env, exitOK, "link", "create", "--url", "https://example.com/u", "--slug", "u",
		"--utm-source", "news", "--utm-medium", "email", "--utm-campaign", "spring", "--json")
	if l := mustJSONOut[client.Link](t, out); l.UTM == nil || *l.UTM != (client.UTM{Source: "news", Medium: "email", Campaign: "spring"}) {
		t.Errorf("created %+v", l.UTM)
	}
	out, _ = runLink(t, env, exitOK, "link", "update", "u", "--utm-campaign", "autumn", "--json")
	if l := mustJSONOut[client.Link](t, out); l.UTM == nil || *l.UTM != (client.UTM{Campaign: "autumn"}) {
		t.Errorf("updated %+v", l.UTM)
	}
	out, _ = runLink(t, env, exitOK, "link", "get", "u")
	if !strings.Contains(out, "campaign=autumn") {
		t.Errorf("link get shows no utm:\n%s", out)
	}
	out, _ = runLink(t, env, exitOK, "link", "update", "u", "--clear", "utm", "--json")
	if l := mustJSONOut[client.Link](t, out); l.UTM != nil {
		t.Errorf("cleared %+v", l.UTM)
	}
	runLink(t, env, exitUsage, "link", "update", "u", "--clear", "utm", "--utm-term", "x")
	runLink(t, env, exitOK, "link", "update", "u", "--utm-campaign", "spring", "--utm-source", "news")

	out, _ = runLink(t, env, exitOK, "utm-template", "add", "Newsletter", "--utm-source", "news", "--utm-medium", "email", "--json")
	tp := mustJSONOut[client.UTMTemplate](t, out)
	if tp.ID == "" || tp.UTM != (client.UTM{Source: "news", Medium: "email"}) {
		t.Errorf("added %+v", tp)
	}
	_, errOut := runLink(t, env, exitFailure, "utm-template", "add", "Newsletter", "--utm-source", "x")
	if !strings.Contains(errOut, "409") && !strings.Contains(strings.ToLower(errOut), "conflict") {
		t.Errorf("a taken name: stderr %q", errOut)
	}
	runLink(t, env, exitUsage, "utm-template", "add", "Empty")
	out, _ = runLink(t, env, exitOK, "utm-template", "list")
	if rows := tableRows(out); len(rows) != 2 || rows[1][1] != "Newsletter" || rows[1][2] != "news" {
		t.Errorf("utm-template list:\n%s", out)
	}
	out, _ = runLink(t, env, exitOK, "utm-template", "delete", tp.ID)
	if out != "UTM template "+tp.ID+" deleted\n" {
		t.Errorf("utm-template delete: %q", out)
	}
	runLink(t, env, exitFailure, "utm-template", "delete", tp.ID)

	// Clicks, not followed: the redirect is what is tested.
	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	for range 3 {
		resp, err := noFollow.Get(srv.url + "/u")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if loc := resp.Header.Get("Location"); loc != "https://example.com/u?utm_source=news&utm_campaign=spring" {
			t.Fatalf("Location %q", loc)
		}
	}
	srv.flush()
	out, _ = runLink(t, env, exitOK, "stats", "campaigns")
	if rows := tableRows(out); len(rows) != 2 || strings.Join(rows[1], " ") != "spring news - 1 3" {
		t.Errorf("stats campaigns:\n%s", out)
	}
	runLink(t, env, exitFailure, "stats", "campaigns", "--traffic", "bots")
}
