package web

import (
	"encoding/json"
	"strings"
	"testing"
)

// isPublicPath reports whether the operations of an OpenAPI path need no
// token: everything outside the admin API, and the document itself.
func isPublicPath(path string) bool {
	// POST /api/v1/reports: anyone may report abuse (reports.go).
	return !strings.HasPrefix(path, apiPrefix+"/") || path == pathOpenAPI || path == pathReports
}

// TestOpenAPISecurityIsExplicit: every operation states its security, as
// linters (Redocly's security-defined) and generated clients expect: the
// admin API's requires the bearer token, every public one says
// "security": [] rather than leaving it unsaid.
func TestOpenAPISecurityIsExplicit(t *testing.T) {
	var doc struct {
		Paths map[string]map[string]json.RawMessage `json:"paths"`
	}
	if err := json.Unmarshal(openAPIDoc, &doc); err != nil {
		t.Fatal(err)
	}
	for path, item := range doc.Paths {
		for m, raw := range item {
			if m == "parameters" || m == "summary" || m == "description" {
				continue
			}
			var op struct {
				Security *[]map[string][]string `json:"security"`
			}
			if err := json.Unmarshal(raw, &op); err != nil {
				t.Fatalf("%s %s: %v", m, path, err)
			}
			switch {
			case op.Security == nil:
				t.Errorf("%s %s: no security; a public operation says \"security\": []", m, path)
			case isPublicPath(path) && len(*op.Security) != 0:
				t.Errorf("%s %s: security %v, want [] (public)", m, path, *op.Security)
			case !isPublicPath(path) && len(*op.Security) == 0:
				t.Errorf("%s %s: security [], want the bearer token", m, path)
			}
		}
	}
}

// TestOpenAPIComponentsAreUsed: every component is referenced (a security
// scheme by a security requirement, the others by a $ref), so that the
// document holds no stale definitions that describe nothing.
func TestOpenAPIComponentsAreUsed(t *testing.T) {
	var doc map[string]any
	if err := json.Unmarshal(openAPIDoc, &doc); err != nil {
		t.Fatal(err)
	}
	used := map[string]bool{}
	var walk func(key string, v any)
	walk = func(key string, v any) {
		switch v := v.(type) {
		case map[string]any:
			for k, x := range v {
				if ref, ok := x.(string); ok && k == "$ref" {
					// #/components/KIND/NAME[/...]: the component is NAME.
					parts := strings.SplitN(strings.TrimPrefix(ref, "#/"), "/", 4)
					if len(parts) >= 3 && parts[0] == "components" {
						used[parts[1]+"/"+parts[2]] = true
					}
				}
				walk(k, x)
			}
		case []any:
			for _, x := range v {
				if req, ok := x.(map[string]any); ok && key == "security" {
					for scheme := range req {
						used["securitySchemes/"+scheme] = true
					}
				}
				walk("", x)
			}
		}
	}
	walk("", doc)
	components, _ := doc["components"].(map[string]any)
	n := 0
	for kind, group := range components {
		for name := range group.(map[string]any) {
			n++
			if !used[kind+"/"+name] {
				t.Errorf("components.%s.%s is never referenced", kind, name)
			}
		}
	}
	if n < 10 {
		t.Errorf("only %d components: the walk is broken", n)
	}
}
