package web_test

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/internal/testdb"
	"github.com/linkforge/linkforge/web"
)

// fullLinkBody sets every writable field of a link.
const fullLinkBody = `{"slug":"full","url":"https://example.com/full","title":"Every field",
	"tags":["a","b"],"expires_at":"2031-05-06T07:08:09Z","max_clicks":50,
	"fallback_url":"https://example.com/gone","password":"open sesame",
	"device_urls":{"ios":"https://apps.apple.com/x","android":"https://play.google.com/x","desktop":"https://example.com/desk"},
	"redirect_status":308,"forward_query":true,
	"rules":[{"conditions":[{"type":"country","value":"DE"},{"type":"os","value":"iOS"}],"url":"https://example.com/de"}],
	"variants":[{"url":"https://example.com/a","weight":30},{"url":"https://example.com/b","weight":70}],
	"og":{"title":"Card","description":"A card","image_url":"https://example.com/card.png"}}`

// linkMembers GETs a link and returns its members.
func (e *env) linkMembers(token, slug string) map[string]json.RawMessage {
	e.t.Helper()
	r := e.do(http.MethodGet, "/api/v1/links/"+slug, token, "")
	mustStatus(e.t, r, http.StatusOK)
	return mustJSON[map[string]json.RawMessage](e.t, r)
}

// TestExportImportAcrossDeployments: a link on the public host is exported
// with an empty domain (the source's public host is refused by any other
// deployment), and the CSV and JSON exports of one deployment import into
// another with a different public URL, keeping every field the API shows
// (each member compared on its own: rules, variants, og, redirect_status,
// forward_query, device URLs and the rest). The CSV carries each of them.
func TestExportImportAcrossDeployments(t *testing.T) {
	s := testdb.SQLite(t)
	a := newEnv(t, s)
	_, tokA := mustTenantToken(t, s, "acme")
	a.mustCreate(tokA, fullLinkBody)
	// An edit an hour later: updated_at is not created_at.
	a.clock.Add(time.Hour)
	mustStatus(t, a.do(http.MethodPatch, "/api/v1/links/full", tokA, `{"title":"Every field, edited"}`), http.StatusOK)
	want := a.linkMembers(tokA, "full")
	if bytes.Equal(want["updated_at"], want["created_at"]) {
		t.Fatalf("updated_at = created_at = %s", want["created_at"])
	}

	for _, format := range []string{"csv", "json"} {
		t.Run(format, func(t *testing.T) {
			r := a.do(http.MethodGet, "/api/v1/export?format="+format, tokA, "")
			mustStatus(t, r, http.StatusOK)
			if format == "csv" {
				rows, err := csv.NewReader(bytes.NewReader(r.body)).ReadAll()
				if err != nil || len(rows) != 2 {
					t.Fatalf("CSV export: %v\n%s", err, r.body)
				}
				for _, col := range []string{"redirect_status", "forward_query", "rules", "variants", "og", "device_ios", "device_android", "device_desktop"} {
					if !slices.Contains(rows[0], col) {
						t.Errorf("the CSV header lacks %s: %v", col, rows[0])
					}
				}
				if i := slices.Index(rows[0], "domain"); i < 0 || rows[1][i] != "" {
					t.Errorf("the public host's link exports domain %q, want an empty cell", rows[1][max(i, 0)])
				}
			} else {
				var links []map[string]any
				if err := json.Unmarshal(r.body, &links); err != nil || len(links) != 1 || links[0]["domain"] != "" {
					t.Errorf("JSON export's domain = %v (%v), want \"\"", links, err)
				}
			}

			other := testdb.SQLite(t)
			b := newEnv(t, other, func(c *web.Config) { c.PublicURL = mustURL(t, "https://other.test") })
			_, tokB := mustTenantToken(t, other, "acme")
			res := b.mustImport(tokB, format, r.body)
			if res.Created != 1 || res.Failed != 0 {
				t.Fatalf("import into another deployment = %+v", res)
			}
			got := b.linkMembers(tokB, "full")
			if string(got["domain"]) != `"other.test"` {
				t.Errorf("imported link's domain = %s, want other.test", got["domain"])
			}
			for name, v := range want {
				switch name {
				case "id", "short_url", "domain", "imported_clicks":
					continue
				}
				t.Run(name, func(t *testing.T) {
					if !bytes.Equal(got[name], v) {
						t.Errorf("%s after the %s round trip = %s, want %s", name, format, got[name], v)
					}
				})
			}
		})
	}
}

// shlinkWebClientCSV is what the Shlink web client exports: every line
// names the Shlink host, the default domain's links too.
const shlinkWebClientCSV = `createdAt,domain,shortCode,shortUrl,longUrl,title,tags,visits
2024-01-05T10:00:00+00:00,s.test,abc12,https://s.test/abc12,https://example.com/a,First,x|y,3
2024-01-06T10:00:00+00:00,s.test,def34,https://s.test/def34,https://example.com/b,,,0
`

// TestImportDomainMap: a Shlink web-client CSV, whose every line names the
// Shlink host, imports line by line: without a map each line is an error
// line saying how to map the host; with domain_map=s.test= (empty TO: the
// public host) every line is created there. A malformed map, or one to a
// host the tenant lacks, is a 400 before the file is read.
func TestImportDomainMap(t *testing.T) {
	s := testdb.SQLite(t)
	e := newEnv(t, s)
	tenant, token := mustTenantToken(t, s, "acme")
	post := func(query url.Values) response {
		t.Helper()
		query.Set("format", "shlink")
		req, err := http.NewRequest(http.MethodPost, e.url+"/api/v1/import?"+query.Encode(), strings.NewReader(shlinkWebClientCSV))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer "+token)
		return e.send(req)
	}

	r := post(url.Values{})
	mustStatus(t, r, http.StatusOK)
	res := mustJSON[importBody](t, r)
	if res.Created != 0 || res.Failed != 2 || len(res.Errors) != 2 {
		t.Fatalf("import without a map = %+v", res)
	}
	for _, le := range res.Errors {
		if p := le.Problem; len(p.Errors) != 1 || p.Errors[0].Field != "domain" || !strings.Contains(p.Errors[0].Detail, "domain_map") {
			t.Errorf("line %d: %+v, want the domain column and how to map it", le.Line, p)
		}
	}

	for _, bad := range []string{"s.test", "s.test=nope.example"} {
		r := post(url.Values{"domain_map": {bad}})
		if p := mustProblem(t, r, http.StatusBadRequest, "domain_map"); !strings.Contains(p.Detail, "domain_map") {
			t.Errorf("domain_map=%s: %+v", bad, p)
		}
	}
	if n := len(mustTenantLinks(t, s, tenant)); n != 0 {
		t.Fatalf("%d links before the mapped import", n)
	}

	r = post(url.Values{"domain_map": {"S.test="}})
	mustStatus(t, r, http.StatusOK)
	if res := mustJSON[importBody](t, r); res.Created != 2 || res.Failed != 0 {
		t.Fatalf("import with domain_map = %s", r.body)
	}
	for _, l := range mustTenantLinks(t, s, tenant) {
		if l.DomainID != linkforge.PublicDomainID {
			t.Errorf("%s went to domain %d, want the public host", l.Slug, l.DomainID)
		}
	}
}
