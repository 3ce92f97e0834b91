package main

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/linkforge/linkforge/client"
)

// TestLinkRoutingFlags sets every routing field through link create and
// update against a started server and reads them back from the API:
// --rule in order, --rules-file, --variant with a URL that has '=' of
// its own, the og flags, --forward-query alone and =false, and --clear.
func TestLinkRoutingFlags(t *testing.T) {
	srv := startAPIServer(t)
	env := map[string]string{"LINKFORGE_SERVER": srv.url, "LINKFORGE_TOKEN": srv.token}

	out, _ := runLink(t, env, exitOK, "link", "create", "--url", "https://example.com/spring", "--slug", "spring",
		"--redirect-status", "307", "--forward-query",
		"--rule", "country=DE, language=de -> https://example.com/de",
		"--rule", "query=utm_source=mail -> https://example.com/mail",
		"--variant", "https://example.com/a?x=1=60", "--variant", "https://example.com/b=40",
		"--og-title", "Spring sale", "--og-image-url", "https://example.com/card.png", "--json")
	l := mustJSONOut[client.Link](t, out)
	wantRules := []client.Rule{
		{Conditions: []client.Condition{{Type: "country", Value: "DE"}, {Type: "language", Value: "de"}}, URL: "https://example.com/de"},
		{Conditions: []client.Condition{{Type: "query", Value: "utm_source=mail"}}, URL: "https://example.com/mail"},
	}
	wantVariants := []client.Variant{{URL: "https://example.com/a?x=1", Weight: 60}, {URL: "https://example.com/b", Weight: 40}}
	if l.RedirectStatus != 307 || !l.ForwardQuery || !reflect.DeepEqual(l.Rules, wantRules) ||
		!reflect.DeepEqual(l.Variants, wantVariants) || l.OG == nil || *l.OG != (client.OG{Title: "Spring sale", ImageURL: "https://example.com/card.png"}) {
		t.Fatalf("created %+v", l)
	}

	// A rules file replaces the rules; the other fields stay.
	file := filepath.Join(t.TempDir(), "rules.json")
	if err := os.WriteFile(file, []byte(`[{"conditions":[{"type":"os","value":"iOS"}],"url":"https://apps.apple.com/app/id1"}]`), 0o600); err != nil {
		t.Fatal(err)
	}
	out, _ = runLink(t, env, exitOK, "link", "update", "spring", "--rules-file", file, "--forward-query=false", "--redirect-status", "308", "--json")
	l = mustJSONOut[client.Link](t, out)
	if len(l.Rules) != 1 || l.Rules[0].URL != "https://apps.apple.com/app/id1" || l.ForwardQuery || l.RedirectStatus != 308 ||
		len(l.Variants) != 2 || l.OG == nil {
		t.Fatalf("after update: %+v", l)
	}

	// The table shows the routing fields.
	out, _ = runLink(t, env, exitOK, "link", "get", "spring")
	for _, want := range []string{"redirect_status  308", "forward_query    false", "rules            os=iOS -> https://apps.apple.com/app/id1",
		"variants         https://example.com/a?x=1=60 https://example.com/b=40", "og_title         Spring sale"} {
		if !strings.Contains(out, want) {
			t.Errorf("get table lacks %q:\n%s", want, out)
		}
	}

	out, _ = runLink(t, env, exitOK, "link", "update", "spring", "--clear", "rules", "--clear", "variants", "--clear", "og",
		"--clear", "redirect-status", "--json")
	l = mustJSONOut[client.Link](t, out)
	if len(l.Rules) != 0 || len(l.Variants) != 0 || l.OG != nil || l.RedirectStatus != 302 {
		t.Fatalf("after clear: %+v", l)
	}

	// The server's validation is the one: its field errors, exit 1.
	_, stderr := runLink(t, env, exitFailure, "link", "update", "spring", "--rule", "planet=mars -> https://example.com/m")
	if !strings.Contains(stderr, "rules[0].conditions[0].type") {
		t.Errorf("refused rule: %s", stderr)
	}
	_, stderr = runLink(t, env, exitFailure, "link", "update", "spring", "--redirect-status", "303")
	if !strings.Contains(stderr, "redirect_status") {
		t.Errorf("refused status: %s", stderr)
	}
	// Bad usage: exit 2, nothing sent.
	for _, args := range [][]string{
		{"--rule", "country=DE"},
		{"--rule", "country -> https://example.com/"},
		{"--variant", "https://example.com/a"},
		{"--variant", "https://example.com/a=lots"},
		{"--redirect-status", "permanent"},
		{"--rules-file", filepath.Join(t.TempDir(), "missing.json")},
		{"--rule", "os=iOS -> https://example.com/", "--rules-file", file},
		{"--clear", "rules", "--rule", "os=iOS -> https://example.com/"},
	} {
		runLink(t, env, exitUsage, append([]string{"link", "update", "spring"}, args...)...)
	}
}
