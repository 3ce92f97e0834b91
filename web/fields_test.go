package web_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/internal/testdb"
	"github.com/linkforge/linkforge/password"
)

// testPasswordParams make argon2id cheap in the web tests.
var testPasswordParams = password.Params{Memory: 64, Time: 1, Threads: 1}

// TestLinkFieldsJSON: title, password and device_urls go in through POST and
// PATCH and come out as schema Link says: the password never (not even its
// hash), only password_protected; null on PATCH removes; device_urls is
// replaced as a whole.
func TestLinkFieldsJSON(t *testing.T) {
	testdb.Each(t, func(t *testing.T, s linkforge.Store) {
		t.Parallel()
		e := newEnv(t, s)
		tenant, tok := mustTenantToken(t, s, "acme")

		r := e.do(http.MethodPost, "/api/v1/links", tok, `{"slug":"f1","url":"https://example.com/x",
			"title":"Spring sale ✿","password":"s3cret pass",
			"device_urls":{"ios":"https://apps.apple.com/app/id1","android":"https://play.google.com/x","desktop":null}}`)
		mustStatus(t, r, http.StatusCreated)
		if strings.Contains(string(r.body), "s3cret") || strings.Contains(string(r.body), "argon2") {
			t.Errorf("the answer shows the password or its hash: %s", r.body)
		}
		var got map[string]any
		if err := json.Unmarshal(r.body, &got); err != nil {
			t.Fatal(err)
		}
		if _, ok := got["password"]; ok {
			t.Errorf("answer has a password member: %s", r.body)
		}
		want := map[string]any{
			"title":              "Spring sale ✿",
			"password_protected": true,
			"device_urls":        map[string]any{"ios": "https://apps.apple.com/app/id1", "android": "https://play.google.com/x"},
			"imported_clicks":    float64(0),
		}
		for k, v := range want {
			if gv, _ := json.Marshal(got[k]); string(gv) != jsonText(t, v) {
				t.Errorf("%s = %s, want %s", k, gv, jsonText(t, v))
			}
		}
		stored := mustTenantLink(t, s, tenant, "f1")
		if ok, err := password.Verify(stored.PasswordHash, "s3cret pass"); !ok || err != nil {
			t.Errorf("stored hash %q does not verify the password: %v, %v", stored.PasswordHash, ok, err)
		}
		if !strings.HasPrefix(stored.PasswordHash, "$argon2id$v=19$") {
			t.Errorf("stored hash %q is not an argon2id PHC string", stored.PasswordHash)
		}

		// GET shows the same; PATCH changes the password (a new hash),
		// replaces the device URLs and clears the title.
		r = e.do(http.MethodGet, "/api/v1/links/f1", tok, "")
		if strings.Contains(string(r.body), "argon2") || !strings.Contains(string(r.body), `"password_protected":true`) {
			t.Errorf("GET: %s", r.body)
		}
		r = e.do(http.MethodPatch, "/api/v1/links/f1", tok, `{"password":"other","title":null,"device_urls":{"desktop":"https://example.com/d"}}`)
		mustStatus(t, r, http.StatusOK)
		if !strings.Contains(string(r.body), `"title":null`) || !strings.Contains(string(r.body), `"device_urls":{"desktop":"https://example.com/d"}`) {
			t.Errorf("PATCH answer: %s", r.body)
		}
		after := mustTenantLink(t, s, tenant, "f1")
		if ok, _ := password.Verify(after.PasswordHash, "other"); !ok {
			t.Error("the new password does not verify")
		}
		if ok, _ := password.Verify(after.PasswordHash, "s3cret pass"); ok {
			t.Error("the old password still verifies")
		}
		// A PATCH without the password keeps it.
		mustStatus(t, e.do(http.MethodPatch, "/api/v1/links/f1", tok, `{"tags":["x"]}`), http.StatusOK)
		if l := mustTenantLink(t, s, tenant, "f1"); l.PasswordHash != after.PasswordHash {
			t.Error("a PATCH without password changed the hash")
		}
		// null removes the password and the device URLs.
		r = e.do(http.MethodPatch, "/api/v1/links/f1", tok, `{"password":null,"device_urls":null}`)
		mustStatus(t, r, http.StatusOK)
		if !strings.Contains(string(r.body), `"password_protected":false`) || !strings.Contains(string(r.body), `"device_urls":null`) {
			t.Errorf("PATCH null: %s", r.body)
		}
		if l := mustTenantLink(t, s, tenant, "f1"); l.PasswordHash != "" || !l.DeviceURLs.IsZero() {
			t.Errorf("after PATCH null: hash %q, device URLs %+v", l.PasswordHash, l.DeviceURLs)
		}
	})
}

func jsonText(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
