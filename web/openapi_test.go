package web

import (
	"encoding/json"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/labstack/echo/v4"

	"github.com/linkforge/linkforge"
)

// unusedStore satisfies Config.Store for tests that only look at the routes;
// calling it would panic on the nil interface.
type unusedStore struct{ linkforge.Store }

// SetShortBase is the one call New makes on its store.
func (unusedStore) SetShortBase(linkforge.ShortBase) {}

func mustRoutesServer(t *testing.T) *Server {
	t.Helper()
	pub, _ := url.Parse("http://localhost:8080")
	s, err := New(Config{Store: unusedStore{}, PublicURL: pub})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

var pathParam = regexp.MustCompile(`:([A-Za-z_]+)`)

// TestOpenAPIMatchesRoutes: every route of the router is in the document,
// and every operation of the document is a route of the router.
func TestOpenAPIMatchesRoutes(t *testing.T) {
	s := mustRoutesServer(t)
	var doc struct {
		OpenAPI string                                `json:"openapi"`
		Paths   map[string]map[string]json.RawMessage `json:"paths"`
	}
	if err := json.Unmarshal(openAPIDoc, &doc); err != nil {
		t.Fatalf("openapi.json does not parse: %v", err)
	}
	if !strings.HasPrefix(doc.OpenAPI, "3.1.") {
		t.Errorf("openapi = %q, want 3.1.x", doc.OpenAPI)
	}

	registered := map[string]bool{}
	for _, r := range s.echo.Routes() {
		if r.Method == echo.RouteNotFound {
			continue
		}
		key := strings.ToLower(r.Method) + " " + pathParam.ReplaceAllString(r.Path, "{$1}")
		registered[key] = true
	}
	documented := map[string]bool{}
	methods := []string{"get", "head", "post", "put", "patch", "delete", "options", "trace"}
	for path, item := range doc.Paths {
		for m := range item {
			if slices.Contains(methods, m) {
				documented[m+" "+path] = true
			}
		}
	}
	for k := range registered {
		if !documented[k] {
			t.Errorf("route %q is not in openapi.json", k)
		}
	}
	for k := range documented {
		if !registered[k] {
			t.Errorf("openapi.json documents %q, which is not a route", k)
		}
	}
	if len(registered) < 14 {
		t.Errorf("only %d routes registered", len(registered))
	}
}

// TestOpenAPIReferencesResolve: every $ref points at a component that
// exists, and every admin API operation requires the bearer token and
// documents its 401.
func TestOpenAPIReferencesResolve(t *testing.T) {
	var doc map[string]any
	if err := json.Unmarshal(openAPIDoc, &doc); err != nil {
		t.Fatal(err)
	}
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			for k, x := range v {
				if k == "$ref" {
					ref, _ := x.(string)
					if !resolves(doc, ref) {
						t.Errorf("$ref %q does not resolve", ref)
					}
					continue
				}
				walk(x)
			}
		case []any:
			for _, x := range v {
				walk(x)
			}
		}
	}
	walk(doc)

	paths := doc["paths"].(map[string]any)
	for path, item := range paths {
		if !strings.HasPrefix(path, "/api/v1/") || path == "/api/v1/openapi.json" || path == "/api/v1/reports" {
			continue
		}
		for m, op := range item.(map[string]any) {
			if m == "parameters" {
				continue
			}
			o := op.(map[string]any)
			if _, ok := o["security"]; !ok {
				t.Errorf("%s %s: no security requirement", m, path)
			}
			if _, ok := o["responses"].(map[string]any)["401"]; !ok {
				t.Errorf("%s %s: no 401 response", m, path)
			}
		}
	}
}

func resolves(doc map[string]any, ref string) bool {
	rest, ok := strings.CutPrefix(ref, "#/")
	if !ok {
		return false
	}
	var cur any = doc
	for _, part := range strings.Split(rest, "/") {
		m, ok := cur.(map[string]any)
		if !ok {
			return false
		}
		if cur, ok = m[part]; !ok {
			return false
		}
	}
	return true
}

// TestReservedSlugsCoverRoutes: no slug can shadow a route of the server.
func TestReservedSlugsCoverRoutes(t *testing.T) {
	s := mustRoutesServer(t)
	for _, r := range s.echo.Routes() {
		first, _, _ := strings.Cut(strings.TrimPrefix(r.Path, "/"), "/")
		if first == "" || strings.HasPrefix(first, ":") || strings.HasPrefix(first, "*") {
			continue
		}
		if err := linkforge.ValidateSlug(first); err == nil {
			t.Errorf("route %s %s: slug %q is not reserved", r.Method, r.Path, first)
		}
	}
}
