package porting_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/internal/pgtest"
	"github.com/linkforge/linkforge/internal/testdb"
	"github.com/linkforge/linkforge/porting"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// sample reads a sample file of testdata/import.
func sample(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "testdata", "import", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// store is what these tests need of a real store.
type store interface {
	linkforge.Store
	porting.Store
	porting.ExportStore
}

func asStore(t *testing.T, s linkforge.Store) store {
	t.Helper()
	st, ok := s.(store)
	if !ok {
		t.Fatalf("%T does not implement porting.Store and porting.ExportStore", s)
	}
	return st
}

// lineErr is an expected error line: its line, problem code and the
// fields it names.
type lineErr struct {
	line   int
	code   string
	fields string // comma-separated
}

func gotErrors(res porting.Result) []lineErr {
	var out []lineErr
	for _, e := range res.Errors {
		var fields []string
		var ae *linkforge.Error
		if errors.As(e.Err, &ae) {
			for _, f := range ae.Fields {
				fields = append(fields, f.Field)
			}
		}
		out = append(out, lineErr{e.Line, linkforge.ErrorCode(e.Err), strings.Join(fields, ",")})
	}
	return out
}

var selfHosts = []string{"localhost:8080"}

// TestImportSampleFiles imports each format's sample file into a fresh
// store: the numbers created and skipped, and each error line with its
// line number, code and the file's own column name, are exact; then the
// links written are checked field by field.
func TestImportSampleFiles(t *testing.T) {
	cases := []struct {
		format  porting.Format
		file    string
		created int
		skipped int
		errors  []lineErr
		check   func(t *testing.T, get func(slug string) linkforge.Link, all []linkforge.Link)
	}{
		{
			format: porting.CSV, file: "csv.csv", created: 5, skipped: 1,
			errors: []lineErr{{6, linkforge.EInvalid, "url"}, {7, linkforge.EInvalid, "slug"}, {8, linkforge.EInvalid, "title"}},
			check: func(t *testing.T, get func(string) linkforge.Link, all []linkforge.Link) {
				l := get("launch")
				if l.URL != "https://example.com/launch" || l.Title != "Spring launch" || !slices.Equal(l.Tags, []string{"news", "launch"}) ||
					l.ImportedClicks != 42 || l.Clicks != 42 || !l.CreatedAt.Equal(time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)) {
					t.Errorf("launch = %+v", l)
				}
				d := get("docs")
				if d.URL != "https://example.com/docs?a=1,2" || d.Title != `Docs, "quoted" and commas` || d.MaxClicks == nil || *d.MaxClicks != 100 ||
					d.ExpiresAt == nil || !d.ExpiresAt.Equal(time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC)) ||
					!d.CreatedAt.Equal(time.Date(2026, 3, 2, 10, 30, 0, 123456000, time.UTC)) {
					t.Errorf("docs = %+v", d)
				}
				if c := get("cafe"); c.URL != "https://例え.jp/メニュー" || c.Title != "Café ☕ menu" || !slices.Equal(c.Tags, []string{"café", "menü"}) {
					t.Errorf("cafe = %+v", c)
				}
				if a := get("after"); a.ImportedClicks != 3 {
					t.Errorf("after = %+v", a)
				}
				var generated []linkforge.Link
				for _, l := range all {
					if l.URL == "https://example.com/no-slug" {
						generated = append(generated, l)
					}
				}
				if len(generated) != 1 || len(generated[0].Slug) != linkforge.SlugLength {
					t.Errorf("links of the row without a slug = %+v, want one with a generated slug", generated)
				}
				if get("launch").URL == "https://example.com/launch-again" {
					t.Error("the repeated slug overwrote the first")
				}
			},
		},
		{
			format: porting.JSON, file: "json.json", created: 4, skipped: 1,
			errors: []lineErr{{4, linkforge.EInvalid, "password_protected"}, {5, linkforge.EInvalid, "url"}, {7, linkforge.EInvalid, "element"}},
			check: func(t *testing.T, get func(string) linkforge.Link, all []linkforge.Link) {
				h := get("home")
				if h.URL != "https://example.com/" || h.Title != "Home" || h.ImportedClicks != 5 ||
					!h.UpdatedAt.Equal(time.Date(2026, 1, 2, 0, 0, 0, 0, time.UTC)) {
					t.Errorf("home = %+v", h)
				}
				e := get("exp")
				if e.MaxClicks == nil || *e.MaxClicks != 10 || e.FallbackURL != "https://example.com/gone" || e.ExpiresAt == nil {
					t.Errorf("exp = %+v", e)
				}
				d := get("dev")
				if d.DeviceURLs.IOS != "https://apps.apple.com/app/id1" || d.DeviceURLs.Android == "" || d.Title != `App — ünïcödé, "quoted"` || d.Clicks != 12 {
					t.Errorf("dev = %+v", d)
				}
				if len(all) != 4 {
					t.Errorf("%d links stored, want 4", len(all))
				}
			},
		},
		{
			format: porting.YOURLS, file: "yourls.csv", created: 5,
			errors: []lineErr{{5, linkforge.EInvalid, "url"}, {6, linkforge.EInvalid, "keyword"}},
			check: func(t *testing.T, get func(string) linkforge.Link, _ []linkforge.Link) {
				o := get("ozh")
				if o.URL != "http://ozh.org/" || o.ImportedClicks != 1204 || o.Clicks != 1204 ||
					!o.CreatedAt.Equal(time.Date(2009, 4, 23, 13, 51, 12, 0, time.UTC)) || o.Title != "Ozh RICHARD – WordPress & more" {
					t.Errorf("ozh = %+v", o)
				}
				if y := get("yourls"); y.Title != `YOURLS: Your Own URL Shortener, "the" one` {
					t.Errorf("yourls title = %q", y.Title)
				}
				if l := get("long"); len([]rune(l.Title)) != linkforge.MaxTitleLength || !strings.HasPrefix(l.Title, "A very long page title") {
					t.Errorf("long title = %q (%d characters), want it cut at %d", l.Title, len([]rune(l.Title)), linkforge.MaxTitleLength)
				}
				if n := get("nodate"); n.ImportedClicks != 0 || n.CreatedAt.IsZero() {
					t.Errorf("nodate = %+v", n)
				}
			},
		},
		{
			// The short code abc12 on another host of the file (line 6)
			// lands on the same domain without a domain map: an error
			// line, not a silent skip.
			format: porting.Shlink, file: "shlink.csv", created: 3,
			errors: []lineErr{{4, linkforge.EInvalid, "shortCode"}, {5, linkforge.EInvalid, "longUrl"}, {6, linkforge.EInvalid, "domain"}},
			check: func(t *testing.T, get func(string) linkforge.Link, _ []linkforge.Link) {
				a := get("abc12")
				if a.URL != "https://shlink.io/documentation/" || a.ImportedClicks != 310 || !slices.Equal(a.Tags, []string{"docs", "shlink"}) ||
					!a.CreatedAt.Equal(time.Date(2023, 11, 14, 12, 6, 0, 0, time.UTC)) {
					t.Errorf("abc12 = %+v", a)
				}
				if !a.Routes().ForwardQuery {
					t.Error("abc12 does not forward the query: Shlink's default (on) was lost")
				}
				if p := get("promo-2024"); p.URL != "https://shop.example/?utm_source=x&q=a,b" || p.Title != `Sale, 50% "off"` {
					t.Errorf("promo-2024 = %+v", p)
				}
				if e := get("emoji"); e.URL != "https://example.com/🎉" || e.Title != "Party 🎉" {
					t.Errorf("emoji = %+v", e)
				}
			},
		},
		{
			format: porting.Bitly, file: "bitly.csv", created: 3,
			errors: []lineErr{{4, linkforge.EInvalid, "link"}, {6, linkforge.EInvalid, "long_url"}, {7, linkforge.EInvalid, "link"}, {8, linkforge.EInvalid, "created"}},
			check: func(t *testing.T, get func(string) linkforge.Link, _ []linkforge.Link) {
				a := get("3AbCdEf")
				if a.URL != "https://www.example.com/article?id=1" || a.Title != "Article, part 1" || !slices.Equal(a.Tags, []string{"blog", "news"}) ||
					!a.CreatedAt.Equal(time.Date(2022, 5, 4, 10, 11, 12, 0, time.UTC)) {
					t.Errorf("3AbCdEf = %+v", a)
				}
				if x := get("xyZ789"); x.URL != "https://example.org/über-uns" {
					t.Errorf("xyZ789 = %+v", x)
				}
				if c := get("custom-name"); c.Title != `Custom "back-half"` {
					t.Errorf("custom-name = %+v", c)
				}
			},
		},
		{
			// Bitly's API link objects as columns: link wins over id;
			// id alone names the slug.
			format: porting.Bitly, file: "bitly-api.csv", created: 3,
			check: func(t *testing.T, get func(string) linkforge.Link, _ []linkforge.Link) {
				if a := get("3Xyz123"); a.URL != "https://www.example.com/spring" || !slices.Equal(a.Tags, []string{"sale", "spring"}) ||
					!a.CreatedAt.Equal(time.Date(2023, 3, 5, 14, 22, 10, 0, time.UTC)) {
					t.Errorf("3Xyz123 = %+v", a)
				}
				if o := get("onlyId"); o.Title != "Only an id" {
					t.Errorf("onlyId = %+v", o)
				}
				if w := get("linkWins"); w.URL != "https://www.example.com/wins" {
					t.Errorf("linkWins = %+v", w)
				}
			},
		},
		{
			format: porting.Dub, file: "dub.csv", created: 2,
			errors: []lineErr{{4, linkforge.EInvalid, "Short link"}},
			check: func(t *testing.T, get func(string) linkforge.Link, _ []linkforge.Link) {
				l := get("launch")
				if l.URL != "https://example.com/launch" || l.Title != "Spring launch" || l.ImportedClicks != 2 ||
					!slices.Equal(l.Tags, []string{"news", "launch"}) || !l.CreatedAt.Equal(time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)) {
					t.Errorf("launch = %+v", l)
				}
				if d := get("docs"); d.ImportedClicks != 1 {
					t.Errorf("docs = %+v", d)
				}
			},
		},
		{
			// password: false is no password; true is an error line.
			format: porting.Kutt, file: "kutt.json", created: 3,
			errors: []lineErr{{3, linkforge.EInvalid, "password"}},
			check: func(t *testing.T, get func(string) linkforge.Link, _ []linkforge.Link) {
				g := get("gh")
				if g.URL != "https://github.com/example" || g.Title != "GitHub profile" || g.ImportedClicks != 57 || g.PasswordHash != "" ||
					!g.CreatedAt.Equal(time.Date(2024, 2, 10, 8, 30, 0, 0, time.UTC)) {
					t.Errorf("gh = %+v", g)
				}
				if p := get("promo"); p.ExpiresAt == nil || !p.ExpiresAt.Equal(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)) || p.ImportedClicks != 3 {
					t.Errorf("promo = %+v", p)
				}
			},
		},
		{
			format: porting.Rebrandly, file: "rebrandly.json", created: 2,
			errors: []lineErr{{3, linkforge.EInvalid, "destination"}},
			check: func(t *testing.T, get func(string) linkforge.Link, _ []linkforge.Link) {
				l := get("launch")
				if l.URL != "https://www.example.com/launch?utm_source=rebrandly" || l.Title != "Product launch" || l.ImportedClicks != 128 ||
					!slices.Equal(l.Tags, []string{"product"}) || !l.CreatedAt.Equal(time.Date(2023, 8, 1, 10, 0, 0, 0, time.UTC)) {
					t.Errorf("launch = %+v", l)
				}
				if j := get("jobs"); j.ImportedClicks != 7 {
					t.Errorf("jobs = %+v", j)
				}
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.file, func(t *testing.T) {
			testdb.Each(t, func(t *testing.T, s linkforge.Store) {
				st := asStore(t, s)
				ctx := t.Context()
				tenant, err := st.EnsureTenant(ctx, "acme")
				if err != nil {
					t.Fatal(err)
				}
				var notified []string
				res, err := porting.Import(ctx, st, tc.format, bytes.NewReader(sample(t, tc.file)), porting.Options{
					TenantID: tenant.ID, SelfHosts: selfHosts, BatchSize: 2,
					Created: func(ls []linkforge.Link) {
						for _, l := range ls {
							notified = append(notified, l.Slug)
						}
					},
				})
				if err != nil {
					t.Fatalf("Import: %v", err)
				}
				if res.Created != tc.created || res.Skipped != tc.skipped || res.Failed != len(tc.errors) {
					t.Errorf("created %d, skipped %d, failed %d; want %d, %d, %d (errors %+v)",
						res.Created, res.Skipped, res.Failed, tc.created, tc.skipped, len(tc.errors), res.Errors)
				}
				if got := gotErrors(res); !slices.Equal(got, tc.errors) {
					t.Errorf("error lines = %+v, want %+v", got, tc.errors)
					for _, e := range res.Errors {
						t.Logf("line %d: %v", e.Line, e.Err)
					}
				}
				all := exportAll(t, st, tenant.ID)
				if len(all) != tc.created || len(notified) != tc.created {
					t.Errorf("%d links stored, %d reported created; want %d", len(all), len(notified), tc.created)
				}
				get := func(slug string) linkforge.Link {
					t.Helper()
					l, err := st.TenantLink(ctx, tenant.ID, linkforge.PublicDomainID, slug)
					if err != nil {
						t.Fatalf("link %q: %v", slug, err)
					}
					return l
				}
				tc.check(t, get, all)
			})
		})
	}
}

func exportAll(t *testing.T, st porting.ExportStore, tenantID int64) []linkforge.Link {
	t.Helper()
	var out []linkforge.Link
	for l, err := range porting.Links(t.Context(), st, tenantID, 3) {
		if err != nil {
			t.Fatalf("Links: %v", err)
		}
		out = append(out, l)
	}
	return out
}

// TestImportSkipsAndConflicts: importing a file again skips every line and
// changes nothing (not even a changed URL); the same file imported by
// another tenant of the same database is a 409 line for every link.
func TestImportSkipsAndConflicts(t *testing.T) {
	testdb.Each(t, func(t *testing.T, s linkforge.Store) {
		st := asStore(t, s)
		ctx := t.Context()
		acme, _ := st.EnsureTenant(ctx, "acme")
		other, _ := st.EnsureTenant(ctx, "other")
		file := "slug,url,title,tags,created_at,expires_at,max_clicks,clicks\n" +
			"one,https://example.com/1,,,,,,\n" +
			"two,https://example.com/2,,,,2030-01-01T00:00:00Z,,\n"
		imp := func(tenant int64, body string) porting.Result {
			t.Helper()
			res, err := porting.Import(ctx, st, porting.CSV, strings.NewReader(body), porting.Options{TenantID: tenant, SelfHosts: selfHosts})
			if err != nil {
				t.Fatalf("Import: %v", err)
			}
			return res
		}
		if res := imp(acme.ID, file); res.Created != 2 {
			t.Fatalf("first import: %+v", res)
		}
		changed := strings.ReplaceAll(file, "example.com/1", "example.com/changed")
		if res := imp(acme.ID, changed); res.Created != 0 || res.Skipped != 2 || res.Failed != 0 {
			t.Errorf("second import = %+v, want 2 skipped", res)
		}
		if l, _ := st.TenantLink(ctx, acme.ID, linkforge.PublicDomainID, "one"); l.URL != "https://example.com/1" {
			t.Errorf("skipped link's url = %q, want it unchanged", l.URL)
		}
		res := imp(other.ID, file)
		if res.Created != 0 || res.Skipped != 0 || res.Failed != 2 {
			t.Fatalf("import by another tenant = %+v, want 2 failed", res)
		}
		for i, e := range res.Errors {
			if e.Line != i+2 || linkforge.ErrorCode(e.Err) != linkforge.EConflict {
				t.Errorf("error %d = line %d %v, want line %d conflict", i, e.Line, e.Err, i+2)
			}
		}
		if links := exportAll(t, st, other.ID); len(links) != 0 {
			t.Errorf("other tenant has %d links", len(links))
		}
		// Only the first import's alarm exists: the refused lines wrote none.
		alarms, err := st.ListAlarms(ctx, other.ID, "", 10)
		if err != nil || len(alarms) != 0 {
			t.Errorf("other tenant's alarms = %v (%v), want none", alarms, err)
		}
		alarms, err = st.ListAlarms(ctx, acme.ID, "", 10)
		if err != nil || len(alarms) != 1 || alarms[0].Slug != "two" {
			t.Errorf("acme's alarms = %+v (%v), want the one of two", alarms, err)
		}
	})
}

// TestImportBadLinesWriteNothing: a batch of good and bad lines writes the
// good ones only, and each bad one is an error line; a file whose header
// lacks a required column writes nothing at all.
func TestImportBadLinesWriteNothing(t *testing.T) {
	testdb.Each(t, func(t *testing.T, s linkforge.Store) {
		st := asStore(t, s)
		ctx := t.Context()
		acme, _ := st.EnsureTenant(ctx, "acme")
		file := "slug,url,title,tags,created_at,expires_at,max_clicks,clicks\n" +
			"good1,https://example.com/1,,,,,,\n" +
			"bad1,https://example.com/2,,,,2030-01-01T00:00:00Z,-1,\n" + // negative max_clicks
			"bad2,https://example.com/3,,,,soon,,\n" + // expires_at not a time
			"bad3,https://localhost:8080/loop,,,,,,\n" + // the server itself
			"good2,https://example.com/4,,,,,,\n"
		res, err := porting.Import(ctx, st, porting.CSV, strings.NewReader(file), porting.Options{TenantID: acme.ID, SelfHosts: selfHosts})
		if err != nil {
			t.Fatal(err)
		}
		want := []lineErr{{3, linkforge.EInvalid, "max_clicks"}, {4, linkforge.EInvalid, "expires_at"}, {5, linkforge.EInvalid, "url"}}
		if got := gotErrors(res); res.Created != 2 || !slices.Equal(got, want) {
			t.Errorf("result %+v, errors %+v; want 2 created and %+v", res, got, want)
		}
		for _, slug := range []string{"bad1", "bad2", "bad3"} {
			if _, err := st.LinkBySlug(ctx, linkforge.PublicDomainID, slug); linkforge.ErrorCode(err) != linkforge.ENotFound {
				t.Errorf("bad line's slug %s: %v, want not found", slug, err)
			}
		}
		if alarms, _ := st.ListAlarms(ctx, acme.ID, "", 10); len(alarms) != 0 {
			t.Errorf("alarms %+v, want none (the only expiring line was bad)", alarms)
		}

		_, err = porting.Import(ctx, st, porting.Shlink, strings.NewReader("shortCode,title\nx,y\n"), porting.Options{TenantID: acme.ID})
		if linkforge.ErrorCode(err) != linkforge.EInvalid || !strings.Contains(err.Error(), "longUrl") {
			t.Errorf("header without longUrl: %v, want an EInvalid naming longUrl", err)
		}
	})
}

// TestImportBrokenJSONKeepsWhatCameBefore: a JSON file that breaks off
// imports the elements before the break and reports the break as the line
// after the last element read.
func TestImportBrokenJSONKeepsWhatCameBefore(t *testing.T) {
	st := asStore(t, testdb.SQLite(t))
	ctx := t.Context()
	acme, _ := st.EnsureTenant(ctx, "acme")
	body := `[{"slug":"a","url":"https://example.com/a"},{"slug":"b","url":"https://example.com/b"},{"slug":"c",`
	res, err := porting.Import(ctx, st, porting.JSON, strings.NewReader(body), porting.Options{TenantID: acme.ID})
	if err != nil {
		t.Fatal(err)
	}
	if got := gotErrors(res); res.Created != 2 || len(got) != 1 || got[0].line != 3 || got[0].code != linkforge.EInvalid {
		t.Errorf("result %+v errors %+v, want 2 created and line 3 invalid", res, got)
	}
}

// TestImportErrorsAreCapped: the listed error lines stop at MaxErrors,
// Failed counts them all.
func TestImportErrorsAreCapped(t *testing.T) {
	st := asStore(t, testdb.SQLite(t))
	var b strings.Builder
	b.WriteString("slug,url\n")
	for range 30 {
		b.WriteString("x,not-a-url\n")
	}
	res, err := porting.Import(context.Background(), st, porting.CSV, strings.NewReader(b.String()), porting.Options{TenantID: 1, MaxErrors: 10})
	if err != nil {
		t.Fatal(err)
	}
	if res.Failed != 30 || len(res.Errors) != 10 || res.Errors[9].Line != 11 {
		t.Errorf("failed %d, listed %d, want 30 and 10", res.Failed, len(res.Errors))
	}
}
