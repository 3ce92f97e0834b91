package web_test

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"math"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/internal/testdb"
	"github.com/linkforge/linkforge/porting"
)

// TestRoundTripKeepsPasswordAndTargets: a password link with a fallback and
// device URLs, exported as CSV and as JSON and imported into a fresh
// database, still asks for its password (the password page, not a
// redirect), takes the same password, and keeps its fallback and device
// URLs. The files carry the stored hash, never the password.
func TestRoundTripKeepsPasswordAndTargets(t *testing.T) {
	testdb.Each(t, func(t *testing.T, s linkforge.Store) {
		e := newEnv(t, s)
		tenant, token := mustTenantToken(t, s, "acme")
		const target = "https://example.com/secret-target"
		e.mustCreate(token, `{"slug":"locked","url":"`+target+`","password":"open sesame",
			"fallback_url":"https://example.com/gone",
			"device_urls":{"ios":"https://apps.example/ios","android":"https://play.example/a","desktop":"https://desk.example/d"}}`)
		src := mustTenantLink(t, s, tenant, "locked")
		if !strings.HasPrefix(src.PasswordHash, "$argon2id$") {
			t.Fatalf("source hash %q", src.PasswordHash)
		}
		for _, format := range []string{"csv", "json"} {
			r := e.do(http.MethodGet, "/api/v1/export?format="+format, token, "")
			mustStatus(t, r, http.StatusOK)
			if bytes.Contains(r.body, []byte("open sesame")) {
				t.Fatalf("%s export holds the password", format)
			}
			fresh := freshLike(t, s)
			e2 := newEnv(t, fresh)
			tenant2, token2 := mustTenantToken(t, fresh, "acme")
			if res := e2.mustImport(token2, format, r.body); res.Created != 1 || res.Failed != 0 {
				t.Fatalf("%s import = %+v\nfile:\n%s", format, res, r.body)
			}
			got := mustTenantLink(t, fresh, tenant2, "locked")
			if got.PasswordHash != src.PasswordHash || got.FallbackURL != src.FallbackURL || got.DeviceURLs != src.DeviceURLs {
				t.Errorf("%s: imported hash %q fallback %q devices %+v; want %q %q %+v", format,
					got.PasswordHash, got.FallbackURL, got.DeviceURLs, src.PasswordHash, src.FallbackURL, src.DeviceURLs)
			}
			form := e2.do(http.MethodGet, "/locked", "", "")
			mustHTML(t, form, http.StatusOK)
			if !strings.Contains(string(form.body), `name="password"`) {
				t.Errorf("%s: the imported link answers %s, not the password page", format, form)
			}
			mustNoTarget(t, form, target)
			if r := e2.postPassword("locked", "wrong", ""); r.status != http.StatusUnauthorized || unlockCookie(r) != nil {
				t.Errorf("%s: a wrong password answers %d, %v; want 401 without the unlock cookie", format, r.status, r.header)
			}
			if r := e2.postPassword("locked", "open sesame", ""); r.status != http.StatusSeeOther || unlockCookie(r) == nil {
				t.Errorf("%s: the right password answers %d, %v; want 303 with the unlock cookie", format, r.status, r.header)
			}
		}
	})
}

// TestImportRefusesWhatItCannotCarry: a row that would lose its protection
// is an error line and writes nothing: a JSON link marked
// password_protected without its hash, a plaintext password (column or
// member), a hash that is not an argon2id PHC string, or one whose cost
// would let a file make every unlock expensive.
func TestImportRefusesWhatItCannotCarry(t *testing.T) {
	s := testdb.SQLite(t)
	e := newEnv(t, s)
	tenant, token := mustTenantToken(t, s, "acme")
	const salt, key = "c2FsdHNhbHRzYWx0c2FsdA", "a2V5a2V5a2V5a2V5a2V5a2V5a2V5a2V5a2V5a2V5a2U"
	costly := "$argon2id$v=19$m=262144,t=16,p=1$" + salt + "$" + key
	for i, tt := range []struct {
		name, format, file, field string
	}{
		{"json protected without hash", "json", `[{"slug":"SLUG","url":"https://example.com/","password_protected":true}]`, "password_protected"},
		{"json plaintext", "json", `[{"slug":"SLUG","url":"https://example.com/","password":"pw"}]`, "password"},
		{"json bcrypt hash", "json", `[{"slug":"SLUG","url":"https://example.com/","password_hash":"$2a$10$abcdefghijklmnopqrstuv"}]`, "password_hash"},
		{"json costly hash", "json", `[{"slug":"SLUG","url":"https://example.com/","password_hash":"` + costly + `"}]`, "password_hash"},
		{"json hash not a string", "json", `[{"slug":"SLUG","url":"https://example.com/","password_hash":7}]`, "password_hash"},
		{"csv plaintext column", "csv", "slug,url,password\nSLUG,https://example.com/,pw\n", "password"},
		{"csv malformed hash", "csv", "slug,url,password_hash\nSLUG,https://example.com/,hunter2\n", "password_hash"},
		{"csv costly hash", "csv", "slug,url,password_hash\nSLUG,https://example.com/,\"" + costly + "\"\n", "password_hash"},
	} {
		res := e.mustImport(token, tt.format, []byte(strings.ReplaceAll(tt.file, "SLUG", fmt.Sprint("s", i))))
		if res.Created != 0 || res.Failed != 1 || len(res.Errors) != 1 {
			t.Errorf("%s: import = %+v, want one error line", tt.name, res)
			continue
		}
		p := res.Errors[0].Problem
		if p.Status != http.StatusBadRequest || len(p.Errors) == 0 || p.Errors[0].Field != tt.field {
			t.Errorf("%s: problem = %+v, want a 400 naming %s", tt.name, p, tt.field)
		}
	}
	if links := mustTenantLinks(t, s, tenant); len(links) != 0 {
		t.Errorf("%d links after refused rows", len(links))
	}
}

// TestImportNormalizesTags: imported tags are stored as the API stores
// them (trimmed, lower-cased, repeats dropped), so that ?tag= finds them.
func TestImportNormalizesTags(t *testing.T) {
	s := testdb.SQLite(t)
	e := newEnv(t, s)
	tenant, token := mustTenantToken(t, s, "acme")
	csvFile := "slug,url,tags\nc1,https://example.com/1,Launch|LAUNCH|Q4 Plans\n"
	if res := e.mustImport(token, "csv", []byte(csvFile)); res.Created != 1 {
		t.Fatalf("csv import = %+v", res)
	}
	jsonFile := `[{"slug":"j1","url":"https://example.com/2","tags":["Launch","ÉTÉ"]}]`
	if res := e.mustImport(token, "json", []byte(jsonFile)); res.Created != 1 {
		t.Fatalf("json import = %+v", res)
	}
	shlink := "shortCode,longUrl,tags\ns1,https://example.com/3,Launch\n"
	if res := e.mustImport(token, "shlink", []byte(shlink)); res.Created != 1 {
		t.Fatalf("shlink import = %+v", res)
	}
	for slug, want := range map[string]string{"c1": "launch|q4 plans", "j1": "launch|été", "s1": "launch"} {
		if got := strings.Join(mustTenantLink(t, s, tenant, slug).Tags, "|"); got != want {
			t.Errorf("%s tags = %q, want %q", slug, got, want)
		}
	}
	r := e.do(http.MethodGet, "/api/v1/links?tag=launch", token, "")
	mustStatus(t, r, http.StatusOK)
	if list := mustJSON[listBody](t, r); len(list.Links) != 3 {
		t.Errorf("?tag=launch finds %d links, want 3", len(list.Links))
	}
}

// TestCSVExportNeutralizesFormulas: a cell a spreadsheet would run as a
// formula (= + - @, or a tab or carriage return first) is written with a
// leading apostrophe, and the CSV import takes it off again, so the round
// trip is exact, a title that itself starts with an apostrophe included.
func TestCSVExportNeutralizesFormulas(t *testing.T) {
	s := testdb.SQLite(t)
	e := newEnv(t, s)
	tenant, token := mustTenantToken(t, s, "acme")
	links := []linkforge.Link{
		{Slug: "-dash", URL: "https://example.com/1", Title: `=HYPERLINK("https://evil.example/","x")`, Tags: []string{"+cmd", "ok"}},
		{Slug: "plain", URL: "https://example.com/2", Title: "'=already quoted", Tags: []string{"@sum", "-minus"}},
		{Slug: "quote", URL: "https://example.com/3", Title: "'just a quote'", Tags: []string{"'=t"}},
	}
	for _, l := range links {
		l.TenantID = tenant
		mustStoreLink(t, s, l)
	}
	want := keepAll(mustTenantLinks(t, s, tenant), false)
	r := e.do(http.MethodGet, "/api/v1/export?format=csv", token, "")
	mustStatus(t, r, http.StatusOK)
	rows, err := csv.NewReader(bytes.NewReader(r.body)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	for _, row := range rows {
		for _, cell := range row {
			if cell != "" && strings.ContainsRune("=+-@\t\r", rune(cell[0])) {
				t.Errorf("cell %q starts a formula", cell)
			}
		}
	}
	if rows[1][0] != "'-dash" || rows[1][2] != `'=HYPERLINK("https://evil.example/","x")` || rows[2][2] != "''=already quoted" || rows[3][2] != "'just a quote'" {
		t.Errorf("rows = %q", rows[1:])
	}
	fresh := testdb.SQLite(t)
	e2 := newEnv(t, fresh)
	tenant2, token2 := mustTenantToken(t, fresh, "acme")
	if res := e2.mustImport(token2, "csv", r.body); res.Created != 3 || res.Failed != 0 {
		t.Fatalf("import = %+v", res)
	}
	got := keepAll(mustTenantLinks(t, fresh, tenant2), false)
	for i := range got {
		if got[i] != want[i] {
			t.Errorf("round trip:\n got %+v\nwant %+v", got[i], want[i])
		}
	}
}

// TestImportedClicksAreBounded: an imported count is at most
// porting.MaxImportedClicks; one above it (2^63-1 included) is an error
// line, also for the store's own ImportLinks. A link imported at the
// maximum keeps working after clicks are flushed onto it: list, stats,
// export, GET and DELETE answer, and the totals are exact.
func TestImportedClicksAreBounded(t *testing.T) {
	testdb.Each(t, func(t *testing.T, s linkforge.Store) {
		e := newEnv(t, s)
		tenant, token := mustTenantToken(t, s, "acme")
		maxN := int64(linkforge.MaxImportedClicks)
		file := fmt.Sprintf("slug,url,clicks\nbig,https://example.com/big,%d\nover,https://example.com/over,%d\nhuge,https://example.com/huge,%d\n",
			maxN, maxN+1, int64(math.MaxInt64))
		res := e.mustImport(token, "csv", []byte(file))
		if res.Created != 1 || res.Failed != 2 || len(res.Errors) != 2 {
			t.Fatalf("import = %+v, want big created and 2 error lines", res)
		}
		for i, le := range res.Errors {
			if le.Line != i+3 || le.Problem.Status != http.StatusBadRequest || len(le.Problem.Errors) != 1 || le.Problem.Errors[0].Field != "clicks" {
				t.Errorf("error %d = %+v, want line %d naming clicks", i, le, i+3)
			}
		}
		jsonFile := fmt.Sprintf(`[{"slug":"jhuge","url":"https://example.com/j","clicks":%d}]`, int64(math.MaxInt64))
		if res := e.mustImport(token, "json", []byte(jsonFile)); res.Created != 0 || res.Failed != 1 {
			t.Errorf("json import of 2^63-1 clicks = %+v", res)
		}
		st := s.(porting.Store)
		err := st.ImportLinks(t.Context(), []linkforge.Link{{TenantID: tenant, Slug: "direct", URL: "https://example.com/d", Tags: []string{}, ImportedClicks: math.MaxInt64}})
		if linkforge.ErrorCode(err) != linkforge.EInvalid {
			t.Errorf("store ImportLinks of 2^63-1 clicks: %v, want %s", err, linkforge.EInvalid)
		}

		big := mustTenantLink(t, s, tenant, "big")
		bucket := e.clock.Now().Truncate(time.Hour)
		if err := s.UpsertRollup(t.Context(), "node-a", []linkforge.RollupRow{{LinkID: big.ID, Bucket: bucket, Count: 5}}); err != nil {
			t.Fatalf("flush onto the imported maximum: %v", err)
		}
		wantTotal := maxN + 5
		if l := mustJSON[linkBody](t, e.do(http.MethodGet, "/api/v1/links/big", token, "")); l.Clicks != wantTotal {
			t.Errorf("GET clicks %d, want %d", l.Clicks, wantTotal)
		}
		for _, path := range []string{"/api/v1/links", "/api/v1/links?sort=clicks", "/api/v1/links/big/stats",
			"/api/v1/export?format=csv", "/api/v1/export?format=json"} {
			r := e.do(http.MethodGet, path, token, "")
			mustStatus(t, r, http.StatusOK)
			if !strings.Contains(string(r.body), fmt.Sprint(wantTotal)) && !strings.Contains(path, "stats") {
				t.Errorf("%s does not show %d clicks: %s", path, wantTotal, r.body)
			}
		}
		mustStatus(t, e.do(http.MethodDelete, "/api/v1/links/big", token, ""), http.StatusNoContent)
	})
}
