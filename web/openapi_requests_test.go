package web_test

import (
	"encoding/json"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/classify"
	"github.com/linkforge/linkforge/internal/httpproblem"
	"github.com/linkforge/linkforge/internal/testdb"
)

// TestRoutingSchemasMatchServer: for variants and rule conditions, the
// document's LinkCreate schema and the server agree on what a valid link
// is: a body the schema accepts is created (201), one it refuses is
// refused (400). The exceptions are named per row: the server also takes
// device, OS and browser values in another letter case (the schema lists
// their one spelling), and the schema checks the shape of an address or a
// time, not its range.
func TestRoutingSchemasMatchServer(t *testing.T) {
	e := newEnv(t, testdb.SQLite(t))
	_, token := mustTenantToken(t, e.store, "acme")
	doc := servedDoc(t, e)
	linkCreate := map[string]any{"$ref": "#/components/schemas/LinkCreate"}

	variants := func(n int) string {
		v := make([]string, n)
		for i := range v {
			v[i] = fmt.Sprintf(`{"url":"https://example.com/v%d","weight":1}`, i)
		}
		return `[` + strings.Join(v, ",") + `]`
	}
	cond := func(typ, value string) string {
		b, _ := json.Marshal([]map[string]any{{"conditions": []map[string]string{{"type": typ, "value": value}}, "url": "https://example.com/r"}})
		return string(b)
	}
	const (
		same         = iota
		serverLooser // the server also takes it: another letter case
		schemaLooser // the schema checks the shape only
	)
	type row struct {
		field, value string
		want         int // 0 same verdict
	}
	rows := []row{{"variants", "null", same}, {"variants", "[]", same}}
	for n := range linkforge.MaxVariants + 3 {
		rows = append(rows, row{"variants", variants(n), same})
	}
	for typ, set := range map[string][]string{
		linkforge.CondDevice: classify.Devices[:], linkforge.CondOS: classify.OSes[:], linkforge.CondBrowser: classify.Browsers[:],
	} {
		for _, v := range set {
			rows = append(rows, row{"rules", cond(typ, v), same})
		}
		rows = append(rows, row{"rules", cond(typ, strings.ToUpper(set[1])), serverLooser},
			row{"rules", cond(typ, "toaster"), same}, row{"rules", cond(typ, ""), same})
	}
	for _, c := range []struct {
		typ, value string
		want       int
	}{
		{"language", "de", same}, {"language", "pt-BR", same}, {"language", "zh-Hant-TW", same}, {"language", "x", same},
		{"language", "de_AT", same}, {"language", "1de", same}, {"language", "de-", same}, {"language", "abcdefghi", same},
		{"language", strings.Repeat("ab-", 12) + "ab", same}, {"language", "", same},
		{"country", "DE", same}, {"country", "de", same}, {"country", "D", same}, {"country", "DEU", same}, {"country", "D1", same},
		{"query", "utm", same}, {"query", "a=b", same}, {"query", "a=", same}, {"query", "a=b=c", same}, {"query", "k=ü", same},
		{"query", "=b", same}, {"query", "a&b", same}, {"query", "a\u0001", same}, {"query", "a\u0085b", same},
		{"query", strings.Repeat("q", 200), same}, {"query", strings.Repeat("q", 201), same},
		{"ip", "192.0.2.1", same}, {"ip", "192.0.2.0/24", same}, {"ip", "2001:db8::/32", same}, {"ip", "::ffff:192.0.2.1", same},
		{"ip", "::1", same}, {"ip", "x", same}, {"ip", "fe80::1%eth0", same}, {"ip", "192.0.2.1/", same},
		{"ip", "999.1.1.1", schemaLooser},
		{"before", "2026-01-31T23:59:59Z", same}, {"after", "2026-01-31T23:59:59.5+02:00", same},
		{"before", "2026-01-31", same}, {"after", "tomorrow", same}, {"before", "2026-01-31 23:59:59Z", same},
		{"after", "2026-13-45T23:59:59Z", schemaLooser},
		{"weekday", "monday", same}, {"", "x", same},
	} {
		rows = append(rows, row{"rules", cond(c.typ, c.value), c.want})
	}

	for i, r := range rows {
		body := fmt.Sprintf(`{"url":"https://example.com/","slug":"r%d",%q:%s}`, i, r.field, r.value)
		var v any
		if err := decodeNumbers([]byte(body), &v); err != nil {
			t.Fatalf("%s: %v", body, err)
		}
		schemaErrs := doc.validate(linkCreate, v, "body")
		res := e.do(http.MethodPost, "/api/v1/links", token, body)
		if res.status != http.StatusCreated && res.status != http.StatusBadRequest {
			t.Fatalf("%s: %s, want 201 or 400", body, res)
		}
		schemaOK, serverOK := len(schemaErrs) == 0, res.status == http.StatusCreated
		want := map[int][2]bool{same: {serverOK, serverOK}, serverLooser: {false, true}, schemaLooser: {true, false}}[r.want]
		if schemaOK != want[0] || serverOK != want[1] {
			t.Errorf("%s = %s:\n\tthe schema accepts: %v %q\n\tthe server: %s\n\twant schema %v, server %v",
				r.field, truncateString(r.value, 80), schemaOK, schemaErrs, res, want[0], want[1])
		}
	}
}

// TestConditionEnumsAreTheRulesPackages: the document's condition types
// are linkforge.ConditionTypes, and its device, os and browser values the
// analytics values that the rules package accepts (classify's lists), no
// more and no fewer.
func TestConditionEnumsAreTheRulesPackages(t *testing.T) {
	// The file the server embeds and serves as it is.
	raw, err := os.ReadFile("openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	doc := parseDoc(t, raw)
	cond := doc.root["components"].(map[string]any)["schemas"].(map[string]any)["Condition"].(map[string]any)
	var types []string
	values := map[string][]string{}
	for _, b := range asList(cond["oneOf"]) {
		props := b.(map[string]any)["properties"].(map[string]any)
		ts := strings_(props["type"].(map[string]any))
		types = append(types, ts...)
		for _, typ := range ts {
			values[typ] = strings_(props["value"].(map[string]any))
		}
	}
	slices.Sort(types)
	if want := slices.Sorted(slices.Values(linkforge.ConditionTypes)); !slices.Equal(types, want) {
		t.Errorf("condition types %q, want %q", types, want)
	}
	for typ, set := range map[string][]string{
		linkforge.CondDevice: classify.Devices[:], linkforge.CondOS: classify.OSes[:], linkforge.CondBrowser: classify.Browsers[:],
	} {
		if got := values[typ]; !slices.Equal(got, set) {
			t.Errorf("%s values %q, want %q (classify's, in its order)", typ, got, set)
		}
	}
}

// strings_ returns a schema's enum, or its const as a list of one.
func strings_(s map[string]any) []string {
	var out []string
	for _, v := range asList(s["enum"]) {
		out = append(out, v.(string))
	}
	if c, ok := s["const"].(string); ok {
		out = append(out, c)
	}
	return out
}

// TestProblemCodesAreTheServers: Problem.code's enum is exactly the
// application error codes, every E* string constant of package linkforge
// (read from its source, so that a new code cannot be missed), and each
// code but internal has a status of its own in httpproblem.Status.
func TestProblemCodesAreTheServers(t *testing.T) {
	files, err := filepath.Glob("../*.go")
	if err != nil {
		t.Fatal(err)
	}
	var codes []string
	fset := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, decl := range f.Decls {
			gd, ok := decl.(*ast.GenDecl)
			if !ok || gd.Tok != token.CONST {
				continue
			}
			for _, spec := range gd.Specs {
				vs := spec.(*ast.ValueSpec)
				for i, id := range vs.Names {
					if len(id.Name) < 2 || id.Name[0] != 'E' || !unicode.IsUpper(rune(id.Name[1])) || i >= len(vs.Values) {
						continue
					}
					if lit, ok := vs.Values[i].(*ast.BasicLit); ok && lit.Kind == token.STRING {
						v, _ := strconv.Unquote(lit.Value)
						codes = append(codes, v)
					}
				}
			}
		}
	}
	if len(codes) < 10 {
		t.Fatalf("only %d codes found in package linkforge: %q", len(codes), codes)
	}
	raw, err := os.ReadFile("openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	doc := parseDoc(t, raw)
	problem := doc.root["components"].(map[string]any)["schemas"].(map[string]any)["Problem"].(map[string]any)
	enum := strings_(problem["properties"].(map[string]any)["code"].(map[string]any))
	slices.Sort(codes)
	slices.Sort(enum)
	if !slices.Equal(enum, codes) {
		t.Errorf("Problem.code enum %q, want the server's codes %q", enum, codes)
	}
	for _, c := range codes {
		if st := httpproblem.Status(c); st == http.StatusInternalServerError && c != linkforge.EInternal {
			t.Errorf("httpproblem.Status(%q) = 500: the code has no status of its own", c)
		}
	}
}
