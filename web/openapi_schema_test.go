package web_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/big"
	"mime"
	"net/http"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

// apiDoc is an OpenAPI 3.1 document decoded to plain values (numbers as
// json.Number), with what the conformance tests need: the operations by
// method and path, and a JSON Schema validator for the subset of draft
// 2020-12 that the document uses. The validator refuses a keyword it does
// not know rather than skip it, so that a schema it cannot check fails the
// test instead of passing it unread.
type apiDoc struct {
	root map[string]any
}

// servedDoc reads the OpenAPI document the server serves.
func servedDoc(t *testing.T, e *env) apiDoc {
	t.Helper()
	r := e.do(http.MethodGet, "/api/v1/openapi.json", "", "")
	mustStatus(t, r, http.StatusOK)
	return parseDoc(t, r.body)
}

func parseDoc(t *testing.T, raw []byte) apiDoc {
	t.Helper()
	var root map[string]any
	if err := decodeNumbers(raw, &root); err != nil {
		t.Fatalf("openapi.json: %v", err)
	}
	return apiDoc{root: root}
}

// decodeNumbers decodes JSON keeping numbers as json.Number, so that an
// integer and a fraction stay apart.
func decodeNumbers(raw []byte, v any) error {
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	if err := d.Decode(v); err != nil {
		return err
	}
	if d.More() {
		return fmt.Errorf("trailing data after the JSON value")
	}
	return nil
}

// operation returns the operation object of method and path (a path of
// the document, with its {templates}).
func (d apiDoc) operation(method, path string) map[string]any {
	item, _ := d.root["paths"].(map[string]any)[path].(map[string]any)
	op, _ := item[strings.ToLower(method)].(map[string]any)
	return op
}

// deref follows $ref until an object without one.
func (d apiDoc) deref(v map[string]any) map[string]any {
	for range 16 {
		ref, ok := v["$ref"].(string)
		if !ok {
			return v
		}
		var cur any = d.root
		for _, part := range strings.Split(strings.TrimPrefix(ref, "#/"), "/") {
			m, _ := cur.(map[string]any)
			cur = m[part]
		}
		next, ok := cur.(map[string]any)
		if !ok {
			return map[string]any{"$unresolved": ref}
		}
		v = next
	}
	return v
}

// checkResponse returns what is wrong with r, the answer to the operation
// at method and path, against the document: a status the operation does
// not declare, a media type its response does not declare, a body where
// none is declared, or a JSON body its schema refuses.
func (d apiDoc) checkResponse(method, path string, r response) []string {
	op := d.operation(method, path)
	if op == nil {
		return []string{fmt.Sprintf("no operation %s %s in the document", method, path)}
	}
	responses, _ := op["responses"].(map[string]any)
	status := strconv.Itoa(r.status)
	declared, ok := responses[status].(map[string]any)
	if !ok {
		declared, ok = responses[status[:1]+"XX"].(map[string]any)
	}
	if !ok {
		declared, ok = responses["default"].(map[string]any)
	}
	if !ok {
		keys := make([]string, 0, len(responses))
		for k := range responses {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		return []string{fmt.Sprintf("status %d is not declared (declared: %s); answer %s", r.status, strings.Join(keys, " "), r)}
	}
	declared = d.deref(declared)
	content, _ := declared["content"].(map[string]any)
	ct := r.header.Get("Content-Type")
	if len(content) == 0 {
		if len(r.body) > 0 {
			return []string{fmt.Sprintf("status %d declares no content, got %q with %d bytes", r.status, ct, len(r.body))}
		}
		return nil
	}
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil {
		return []string{fmt.Sprintf("status %d: Content-Type %q: %v", r.status, ct, err)}
	}
	media, ok := content[mt].(map[string]any)
	if !ok {
		keys := make([]string, 0, len(content))
		for k := range content {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		return []string{fmt.Sprintf("status %d: media type %s is not declared (declared: %s)", r.status, mt, strings.Join(keys, " "))}
	}
	if r.method == http.MethodHead || !isJSONMedia(mt) {
		return nil
	}
	schema, ok := media["schema"]
	if !ok {
		return nil
	}
	var body any
	if err := decodeNumbers(r.body, &body); err != nil {
		return []string{fmt.Sprintf("status %d: %s body does not parse: %v", r.status, mt, err)}
	}
	var errs []string
	for _, e := range d.validate(schema, body, "body") {
		errs = append(errs, fmt.Sprintf("status %d: %s", r.status, e))
	}
	return errs
}

func isJSONMedia(mt string) bool {
	return mt == "application/json" || strings.HasSuffix(mt, "+json")
}

// annotations are the keywords that constrain nothing (format is an
// annotation in draft 2020-12 unless a vocabulary asserts it).
var annotations = map[string]bool{
	"description": true, "title": true, "examples": true, "example": true, "default": true,
	"format": true, "deprecated": true, "readOnly": true, "writeOnly": true, "$comment": true,
	"discriminator": true,
}

// validate returns where v breaks schema, each error prefixed with at, the
// JSON path of v.
func (d apiDoc) validate(schema, v any, at string) []string {
	switch s := schema.(type) {
	case bool:
		if !s {
			return []string{at + ": no value is allowed here"}
		}
		return nil
	case map[string]any:
		return d.validateObject(s, v, at)
	}
	return []string{fmt.Sprintf("%s: schema %T is not a schema", at, schema)}
}

func (d apiDoc) validateObject(s map[string]any, v any, at string) []string {
	var errs []string
	fail := func(format string, args ...any) { errs = append(errs, at+": "+fmt.Sprintf(format, args...)) }
	for k, kv := range s {
		if annotations[k] || strings.HasPrefix(k, "x-") {
			continue
		}
		switch k {
		case "$ref":
			target := d.deref(map[string]any{"$ref": kv})
			if _, bad := target["$unresolved"]; bad {
				fail("$ref %v does not resolve", kv)
				continue
			}
			errs = append(errs, d.validateObject(target, v, at)...)
		case "type":
			if !hasType(kv, v) {
				fail("%s is not of type %v", short(v), kv)
			}
		case "enum":
			if !slices.ContainsFunc(kv.([]any), func(x any) bool { return jsonEqual(x, v) }) {
				fail("%s is not one of %v", short(v), kv)
			}
		case "const":
			if !jsonEqual(kv, v) {
				fail("%s is not %v", short(v), kv)
			}
		case "properties":
			if m, ok := v.(map[string]any); ok {
				for name, sub := range kv.(map[string]any) {
					if x, ok := m[name]; ok {
						errs = append(errs, d.validate(sub, x, at+"."+name)...)
					}
				}
			}
		case "additionalProperties":
			if m, ok := v.(map[string]any); ok {
				props, _ := s["properties"].(map[string]any)
				for name, x := range m {
					if _, named := props[name]; !named {
						errs = append(errs, d.validate(kv, x, at+"."+name)...)
					}
				}
			}
		case "required":
			if m, ok := v.(map[string]any); ok {
				for _, name := range kv.([]any) {
					if _, ok := m[name.(string)]; !ok {
						fail("required member %q is missing", name)
					}
				}
			}
		case "items":
			if a, ok := v.([]any); ok {
				for i, x := range a {
					errs = append(errs, d.validate(kv, x, fmt.Sprintf("%s[%d]", at, i))...)
				}
			}
		case "minItems", "maxItems":
			if a, ok := v.([]any); ok {
				n, _ := kv.(json.Number).Int64()
				if k == "minItems" && int64(len(a)) < n || k == "maxItems" && int64(len(a)) > n {
					fail("%d items, %s is %d", len(a), k, n)
				}
			}
		case "uniqueItems":
			if a, ok := v.([]any); ok && kv == true {
				for i := range a {
					for j := range i {
						if jsonEqual(a[i], a[j]) {
							fail("items %d and %d are equal", j, i)
						}
					}
				}
			}
		case "minLength", "maxLength":
			if str, ok := v.(string); ok {
				n, _ := kv.(json.Number).Int64()
				l := int64(utf8.RuneCountInString(str))
				if k == "minLength" && l < n || k == "maxLength" && l > n {
					fail("%d characters, %s is %d", l, k, n)
				}
			}
		case "pattern":
			if str, ok := v.(string); ok {
				re, err := regexp.Compile(kv.(string))
				if err != nil {
					fail("pattern %q does not compile: %v", kv, err)
				} else if !re.MatchString(str) {
					fail("%s does not match %q", short(v), kv)
				}
			}
		case "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum":
			if n, ok := v.(json.Number); ok {
				x, _ := new(big.Rat).SetString(n.String())
				bound, _ := new(big.Rat).SetString(kv.(json.Number).String())
				c := x.Cmp(bound)
				if k == "minimum" && c < 0 || k == "maximum" && c > 0 || k == "exclusiveMinimum" && c <= 0 || k == "exclusiveMaximum" && c >= 0 {
					fail("%s breaks %s %s", n, k, kv)
				}
			}
		case "allOf":
			for _, sub := range kv.([]any) {
				errs = append(errs, d.validate(sub, v, at)...)
			}
		case "anyOf", "oneOf":
			matched := 0
			var first []string
			for i, sub := range kv.([]any) {
				e := d.validate(sub, v, at)
				if len(e) == 0 {
					matched++
				} else if i == 0 || len(e) < len(first) {
					first = e
				}
			}
			switch {
			case matched == 0:
				fail("%s matches none of %s (closest: %s)", short(v), k, strings.Join(first, "; "))
			case k == "oneOf" && matched > 1:
				fail("%s matches %d branches of oneOf", short(v), matched)
			}
		case "not":
			if len(d.validate(kv, v, at)) == 0 {
				fail("%s matches the schema of not", short(v))
			}
		default:
			fail("the test's validator does not know the keyword %q: teach it", k)
		}
	}
	return errs
}

// hasType reports whether v is of the JSON Schema type t (a name or a
// list of names).
func hasType(t, v any) bool {
	if list, ok := t.([]any); ok {
		return slices.ContainsFunc(list, func(x any) bool { return hasType(x, v) })
	}
	switch t {
	case "null":
		return v == nil
	case "boolean":
		_, ok := v.(bool)
		return ok
	case "string":
		_, ok := v.(string)
		return ok
	case "object":
		_, ok := v.(map[string]any)
		return ok
	case "array":
		_, ok := v.([]any)
		return ok
	case "number":
		_, ok := v.(json.Number)
		return ok
	case "integer":
		n, ok := v.(json.Number)
		if !ok {
			return false
		}
		r, ok := new(big.Rat).SetString(n.String())
		return ok && r.IsInt()
	}
	return false
}

// jsonEqual compares two decoded JSON values, numbers by value.
func jsonEqual(a, b any) bool {
	na, aok := a.(json.Number)
	nb, bok := b.(json.Number)
	if aok || bok {
		if !aok || !bok {
			return false
		}
		x, ok1 := new(big.Rat).SetString(na.String())
		y, ok2 := new(big.Rat).SetString(nb.String())
		return ok1 && ok2 && x.Cmp(y) == 0
	}
	return reflect.DeepEqual(a, b)
}

// short renders v for a message, cut to a readable length.
func short(v any) string {
	b, _ := json.Marshal(v)
	if len(b) > 120 {
		return string(b[:117]) + "..."
	}
	return string(b)
}

// TestSchemaValidatorRefuses: the validator refuses what it should, so
// that the conformance tests' silence means something.
func TestSchemaValidatorRefuses(t *testing.T) {
	d := parseDoc(t, []byte(`{"components":{"schemas":{
		"P":{"type":"object","required":["code"],"additionalProperties":false,
		     "properties":{"code":{"type":"string","enum":["a","b"]},"n":{"type":"integer","minimum":1},
		                   "l":{"type":"array","minItems":2,"maxItems":3,"items":{"type":"string","pattern":"^x"}}}}}}}`))
	ref := map[string]any{"$ref": "#/components/schemas/P"}
	for body, want := range map[string]string{
		`{"code":"a","n":1,"l":["x","xy"]}`:  "",
		`{"code":"c"}`:                       "is not one of",
		`{}`:                                 "required member",
		`{"code":"a","n":1.5}`:               "is not of type",
		`{"code":"a","n":0}`:                 "breaks minimum",
		`{"code":"a","l":["x"]}`:             "minItems",
		`{"code":"a","l":["x","x","x","x"]}`: "maxItems",
		`{"code":"a","l":["x","y"]}`:         "does not match",
		`{"code":"a","z":1}`:                 "no value is allowed",
		`[]`:                                 "is not of type",
	} {
		var v any
		if err := decodeNumbers([]byte(body), &v); err != nil {
			t.Fatal(err)
		}
		errs := strings.Join(d.validate(ref, v, "body"), "; ")
		if want == "" && errs != "" || !strings.Contains(errs, want) {
			t.Errorf("%s: %q, want an error with %q", body, errs, want)
		}
	}
	if errs := d.validate(map[string]any{"if": true}, nil, "body"); len(errs) != 1 {
		t.Errorf("an unknown keyword gives %q, want it refused", errs)
	}
}
