package main

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/linkforge/linkforge/client"
)

// TestLinkNotesArchiveFlags: link create and update take --notes,
// --archive and --valid-since, --clear removes notes and valid-since,
// and link list --archived selects by the archive flag.
func TestLinkNotesArchiveFlags(t *testing.T) {
	srv := startAPIServer(t)
	env := map[string]string{"LINKFORGE_SERVER": srv.url, "LINKFORGE_TOKEN": srv.token}

	out, _ := runLink(t, env, exitOK, "link", "create", "--url", "https://example.com/n", "--slug", "n",
		"--notes", "on the flyer", "--archive", "--valid-since", "2030-01-02T03:04:05Z", "--json")
	l := mustJSONOut[client.Link](t, out)
	if l.Notes == nil || *l.Notes != "on the flyer" || !l.Archived || l.ValidSince == nil || l.ValidSince.Format(time.RFC3339) != "2030-01-02T03:04:05Z" {
		t.Errorf("created %+v", l)
	}
	runLink(t, env, exitOK, "link", "create", "--url", "https://example.com/m", "--slug", "m")
	for archived, want := range map[string]string{"false": "m", "true": "n"} {
		out, _ = runLink(t, env, exitOK, "link", "list", "--archived", archived, "--json")
		if page := mustJSONOut[client.LinkPage](t, out); len(page.Links) != 1 || page.Links[0].Slug != want {
			t.Errorf("list --archived %s: %+v", archived, page)
		}
	}
	out, _ = runLink(t, env, exitOK, "link", "list", "--q", "flyer", "--archived", "all", "--json")
	if page := mustJSONOut[client.LinkPage](t, out); len(page.Links) != 1 || page.Links[0].Slug != "n" {
		t.Errorf("list --q flyer: %+v", page)
	}
	out, _ = runLink(t, env, exitOK, "link", "update", "n", "--archive=false", "--clear", "notes", "--clear", "valid-since", "--json")
	if u := mustJSONOut[client.Link](t, out); u.Notes != nil || u.Archived || u.ValidSince != nil {
		t.Errorf("updated %+v", u)
	}
	runLink(t, env, exitUsage, "link", "update", "n", "--valid-since", "soon")
}

// TestTagCommands: tag rename merges, tag delete removes; an unknown tag
// is the API's 404 on stderr, exit 1.
func TestTagCommands(t *testing.T) {
	srv := startAPIServer(t)
	env := map[string]string{"LINKFORGE_SERVER": srv.url, "LINKFORGE_TOKEN": srv.token}
	runLink(t, env, exitOK, "link", "create", "--url", "https://example.com/a", "--slug", "a", "--tag", "old", "--tag", "new")
	out, _ := runLink(t, env, exitOK, "tag", "rename", "old", "new")
	if out != "tag old renamed new: 1 links carry it\n" {
		t.Errorf("tag rename: %q", out)
	}
	out, _ = runLink(t, env, exitOK, "tag", "delete", "new", "--json")
	if out != "{\n  \"deleted\": true,\n  \"tag\": \"new\"\n}\n" {
		t.Errorf("tag delete --json: %q", out)
	}
	out, _ = runLink(t, env, exitOK, "link", "get", "a", "--json")
	if l := mustJSONOut[client.Link](t, out); len(l.Tags) != 0 {
		t.Errorf("after the delete: %+v", l)
	}
	_, errOut := runLink(t, env, exitFailure, "tag", "delete", "new")
	if !strings.Contains(errOut, "tag not found (HTTP 404, not_found)") {
		t.Errorf("unknown tag: stderr %q", errOut)
	}
	runLink(t, env, exitUsage, "tag", "rename", "only-one")
}

// TestShareCommands: link share prints the page's URL alone, tag share
// --json the share with its expiry and password flag; a bad --expires is
// a usage error.
func TestShareCommands(t *testing.T) {
	srv := startAPIServer(t)
	env := map[string]string{"LINKFORGE_SERVER": srv.url, "LINKFORGE_TOKEN": srv.token}
	runLink(t, env, exitOK, "link", "create", "--url", "https://example.com/s", "--slug", "s", "--tag", "spring")
	out, _ := runLink(t, env, exitOK, "link", "share", "s")
	if !strings.HasPrefix(out, "http://lf.test/share/") || len(out) != len("http://lf.test/share/")+43+1 {
		t.Errorf("link share: %q, want the page's URL on one line", out)
	}
	out, _ = runLink(t, env, exitOK, "tag", "share", "spring", "--expires", "2099-01-02T03:04:05Z", "--password", "pw", "--json")
	if sh := mustJSONOut[client.Share](t, out); sh.Tag != "spring" || !sh.HasPassword || sh.ExpiresAt == nil ||
		sh.ExpiresAt.Format(time.RFC3339) != "2099-01-02T03:04:05Z" || sh.URL == "" {
		t.Errorf("tag share --json: %+v", sh)
	}
	runLink(t, env, exitUsage, "link", "share", "s", "--expires", "soon")
}

// TestShareListAndUnshare: link shares and tag shares list the shares
// (never their URLs), unshare deletes one and its page answers 404; an
// unknown id, or another tenant's, is the API's 404 on stderr, exit 1.
func TestShareListAndUnshare(t *testing.T) {
	srv := startAPIServer(t)
	env := map[string]string{"LINKFORGE_SERVER": srv.url, "LINKFORGE_TOKEN": srv.token}
	runLink(t, env, exitOK, "link", "create", "--url", "https://example.com/s", "--slug", "s", "--tag", "spring")
	out, _ := runLink(t, env, exitOK, "link", "share", "s")
	page1 := srv.url + strings.TrimPrefix(strings.TrimSpace(out), "http://lf.test")
	id1 := strings.TrimPrefix(page1, srv.url+"/share/")[:10]
	out, _ = runLink(t, env, exitOK, "link", "share", "s", "--expires", "2099-01-02T03:04:05Z", "--password", "pw", "--json")
	id2 := mustJSONOut[client.Share](t, out).ID
	pageStatus := func(u string) int {
		t.Helper()
		resp, err := http.DefaultClient.Do(mustRequest(t, u))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if got := pageStatus(page1); got != http.StatusOK {
		t.Fatalf("share page: %d, want 200", got)
	}

	out, _ = runLink(t, env, exitOK, "link", "shares", "s", "--json")
	if strings.Contains(out, `"url"`) {
		t.Errorf("link shares --json shows a URL:\n%s", out)
	}
	list := mustJSONOut[struct{ Shares []client.Share }](t, out).Shares
	if len(list) != 2 || list[0].ID != id1 || list[0].HasPassword || list[0].ExpiresAt != nil ||
		list[1].ID != id2 || !list[1].HasPassword || list[1].Slug != "s" {
		t.Fatalf("link shares --json: %+v", list)
	}
	created := func(sh client.Share) string { return sh.CreatedAt.UTC().Format(time.RFC3339) }
	out, _ = runLink(t, env, exitOK, "link", "shares", "s")
	want := "ID          CREATED               EXPIRES               PASSWORD\n" +
		id1 + "  " + created(list[0]) + "  -                     no\n" +
		id2 + "  " + created(list[1]) + "  2099-01-02T03:04:05Z  yes\n"
	if out != want {
		t.Errorf("link shares:\n%s\nwant:\n%s", out, want)
	}

	out, _ = runLink(t, env, exitOK, "link", "unshare", "s", id1)
	if out != "share "+id1+" of link s deleted\n" {
		t.Errorf("link unshare: %q", out)
	}
	if got := pageStatus(page1); got != http.StatusNotFound {
		t.Errorf("the deleted share's page: %d, want 404", got)
	}
	out, _ = runLink(t, env, exitOK, "link", "shares", "s", "--json")
	if list := mustJSONOut[struct{ Shares []client.Share }](t, out).Shares; len(list) != 1 || list[0].ID != id2 {
		t.Errorf("after unshare: %+v", list)
	}
	// An unknown id, and the one just deleted.
	for _, id := range []string{"AAAAAAAAAA", id1} {
		out, errOut := runLink(t, env, exitFailure, "link", "unshare", "s", id)
		if out != "" || !strings.Contains(errOut, "share not found (HTTP 404, not_found)") {
			t.Errorf("unshare %s: stdout %q, stderr %q", id, out, errOut)
		}
	}

	// Another tenant can revoke no share of acme's: not through acme's
	// slug, nor through a link or a tag of its own.
	other := map[string]string{"LINKFORGE_SERVER": srv.url, "LINKFORGE_TOKEN": apiToken(t, srv.store, "other")}
	runLink(t, other, exitOK, "link", "create", "--url", "https://example.com/o", "--slug", "o", "--tag", "spring")
	for _, args := range [][]string{{"link", "unshare", "s", id2}, {"link", "unshare", "o", id2}, {"tag", "unshare", "spring", id2}} {
		out, errOut := runLink(t, other, exitFailure, args...)
		if out != "" || !strings.Contains(errOut, "(HTTP 404, not_found)") {
			t.Errorf("other tenant's %v: stdout %q, stderr %q", args, out, errOut)
		}
	}
	if out, _ := runLink(t, other, exitOK, "link", "shares", "o"); out != "ID  CREATED  EXPIRES  PASSWORD\n" {
		t.Errorf("other tenant's link shares: %q", out)
	}
	out, _ = runLink(t, env, exitOK, "link", "shares", "s", "--json")
	if list := mustJSONOut[struct{ Shares []client.Share }](t, out).Shares; len(list) != 1 || list[0].ID != id2 {
		t.Errorf("after the other tenant's tries: %+v", list)
	}

	// A tag's: the same, --json.
	out, _ = runLink(t, env, exitOK, "tag", "share", "spring", "--json")
	id3 := mustJSONOut[client.Share](t, out).ID
	out, _ = runLink(t, env, exitOK, "tag", "shares", "spring", "--json")
	if list := mustJSONOut[struct{ Shares []client.Share }](t, out).Shares; len(list) != 1 || list[0].ID != id3 || list[0].Tag != "spring" {
		t.Errorf("tag shares --json: %+v", list)
	}
	out, _ = runLink(t, env, exitOK, "tag", "unshare", "spring", id3, "--json")
	if want := "{\n  \"deleted\": true,\n  \"id\": \"" + id3 + "\",\n  \"tag\": \"spring\"\n}\n"; out != want {
		t.Errorf("tag unshare --json: %q, want %q", out, want)
	}
	if out, _ = runLink(t, env, exitOK, "tag", "shares", "spring", "--json"); out != "{\n  \"shares\": []\n}\n" {
		t.Errorf("tag shares after unshare: %q", out)
	}
	_, errOut := runLink(t, env, exitFailure, "tag", "unshare", "spring", id3)
	if !strings.Contains(errOut, "share not found (HTTP 404, not_found)") {
		t.Errorf("tag unshare twice: stderr %q", errOut)
	}
	runLink(t, env, exitUsage, "link", "unshare", "s")
	runLink(t, env, exitUsage, "tag", "shares")
}

// TestTenantSchemesSet: tenant schemes set lets link create use the
// schemes listed, none clears the list; javascript is the API's 400.
func TestTenantSchemesSet(t *testing.T) {
	srv := startAPIServer(t)
	env := map[string]string{"LINKFORGE_SERVER": srv.url, "LINKFORGE_TOKEN": srv.token}
	runLink(t, env, exitFailure, "link", "create", "--url", "mailto:a@example.com")
	out, _ := runLink(t, env, exitOK, "tenant", "schemes", "set", "mailto,tel")
	if out != "tenant acme: link targets may also use mailto, tel\n" {
		t.Errorf("tenant schemes set: %q", out)
	}
	runLink(t, env, exitOK, "link", "create", "--url", "mailto:a@example.com", "--slug", "m")
	_, errOut := runLink(t, env, exitFailure, "tenant", "schemes", "set", "javascript")
	if !strings.Contains(errOut, "target_schemes[0]") {
		t.Errorf("javascript: stderr %q", errOut)
	}
	out, _ = runLink(t, env, exitOK, "tenant", "schemes", "set", "none", "--json")
	if tn := mustJSONOut[client.Tenant](t, out); tn.Name != "acme" || len(tn.TargetSchemes) != 0 {
		t.Errorf("none --json: %+v", tn)
	}
}

// TestLinkCreateFindIfExists: link create --find-if-exists prints the
// existing link, and says on stderr that it created none.
func TestLinkCreateFindIfExists(t *testing.T) {
	srv := startAPIServer(t)
	env := map[string]string{"LINKFORGE_SERVER": srv.url, "LINKFORGE_TOKEN": srv.token}
	out, errOut := runLink(t, env, exitOK, "link", "create", "--url", "https://example.com/f", "--find-if-exists", "--json")
	first := mustJSONOut[client.Link](t, out)
	if errOut != "" {
		t.Errorf("first create: stderr %q", errOut)
	}
	out, errOut = runLink(t, env, exitOK, "link", "create", "--url", "https://example.com/f", "--find-if-exists", "--json")
	if got := mustJSONOut[client.Link](t, out); got.ID != first.ID || errOut != "link "+first.Slug+" exists: not created\n" {
		t.Errorf("second create: %+v, stderr %q", got, errOut)
	}
	out, _ = runLink(t, env, exitOK, "link", "create", "--url", "https://example.com/f", "--json")
	if got := mustJSONOut[client.Link](t, out); got.ID == first.ID {
		t.Errorf("without the flag: the existing link %+v", got)
	}
}

// TestLinkRename: link rename prints the renamed link with its alias.
func TestLinkRename(t *testing.T) {
	srv := startAPIServer(t)
	env := map[string]string{"LINKFORGE_SERVER": srv.url, "LINKFORGE_TOKEN": srv.token}
	runLink(t, env, exitOK, "link", "create", "--url", "https://example.com/r", "--slug", "r1")
	out, _ := runLink(t, env, exitOK, "link", "rename", "r1", "r2", "--json")
	if l := mustJSONOut[client.Link](t, out); l.Slug != "r2" || len(l.Aliases) != 1 || l.Aliases[0] != "r1" {
		t.Errorf("renamed: %+v", l)
	}
	runLink(t, env, exitFailure, "link", "rename", "r2", "a b")
}
