package porting_test

import (
	"bytes"
	"errors"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/internal/testdb"
	"github.com/linkforge/linkforge/porting"
)

// TestImportShlinkAPIJSON imports a Shlink API answer with each short
// URL's redirect rules, on both backends: the rules LinkForge can express
// are kept in Shlink's priority order, the others are notes of the line
// (the link is still created), and a bad line is an error line named with
// Shlink's own member.
func TestImportShlinkAPIJSON(t *testing.T) {
	testdb.Each(t, func(t *testing.T, s linkforge.Store) {
		st := asStore(t, s)
		ctx := t.Context()
		tenant, err := st.EnsureTenant(ctx, "acme")
		if err != nil {
			t.Fatal(err)
		}
		res, err := porting.Import(ctx, st, porting.Shlink, bytes.NewReader(sample(t, "shlink-api.json")),
			porting.Options{TenantID: tenant.ID, SelfHosts: selfHosts})
		if err != nil {
			t.Fatalf("Import: %v", err)
		}
		if res.Created != 3 || res.Failed != 1 {
			t.Fatalf("created %d, failed %d; want 3, 1 (errors %+v)", res.Created, res.Failed, res.Errors)
		}
		if got := gotErrors(res); !slices.Equal(got, []lineErr{{4, linkforge.EInvalid, "longUrl"}}) {
			t.Errorf("error lines = %+v", got)
		}
		var notes []string
		for _, n := range res.Notes {
			var ae *linkforge.Error
			if !errors.As(n.Err, &ae) {
				t.Fatalf("note of line %d: %v", n.Line, n.Err)
			}
			for _, f := range ae.Fields {
				notes = append(notes, strings.Join([]string{itoa(n.Line), f.Field}, " "))
				if !strings.Contains(f.Detail, "not imported") {
					t.Errorf("note %s: %q does not say what happened", f.Field, f.Detail)
				}
			}
		}
		want := []string{"1 redirectRules[2].conditions[0]", "1 redirectRules[5].conditions[0]"}
		if !slices.Equal(notes, want) {
			t.Errorf("notes = %q, want %q", notes, want)
		}

		spring, err := st.TenantLink(ctx, tenant.ID, linkforge.PublicDomainID, "spring")
		if err != nil {
			t.Fatal(err)
		}
		r := spring.Routes()
		wantRules := []linkforge.Rule{
			{URL: "https://shop.example/mail", Conditions: []linkforge.Condition{{Type: "query", Value: "utm_source=mail"}}},
			{URL: "https://shop.example/de/fruehling", Conditions: []linkforge.Condition{{Type: "language", Value: "de"}, {Type: "country", Value: "DE"}}},
			{URL: "https://shop.example/android", Conditions: []linkforge.Condition{{Type: "os", Value: "Android"}}},
			{URL: "https://shop.example/office", Conditions: []linkforge.Condition{{Type: "ip", Value: "192.168.10.0/24"}, {Type: "query", Value: "staff"}}},
		}
		if !reflect.DeepEqual(r.Rules, wantRules) {
			t.Errorf("spring rules = %+v\nwant %+v", r.Rules, wantRules)
		}
		if !r.ForwardQuery || spring.DeviceURLs.IOS != "https://apps.apple.com/app/id123" || spring.ImportedClicks != 1520 ||
			spring.Title != "Spring campaign" || !slices.Equal(spring.Tags, []string{"campaign", "spring"}) ||
			spring.ExpiresAt == nil || !spring.ExpiresAt.Equal(time.Date(2030, 6, 1, 0, 0, 0, 0, time.UTC)) ||
			!spring.CreatedAt.Equal(time.Date(2024, 3, 1, 8, 0, 0, 0, time.UTC)) {
			t.Errorf("spring = %+v", spring)
		}

		docs, err := st.TenantLink(ctx, tenant.ID, linkforge.PublicDomainID, "docs")
		if err != nil {
			t.Fatal(err)
		}
		wantRules = []linkforge.Rule{
			{URL: "https://shlink.io/documentation/es/", Conditions: []linkforge.Condition{{Type: "language", Value: "es-ES"}}},
			{URL: "https://shlink.io/documentation/desktop/", Conditions: []linkforge.Condition{{Type: "device", Value: "desktop"}, {Type: "query", Value: "print="}}},
		}
		if d := docs.Routes(); !reflect.DeepEqual(d.Rules, wantRules) || d.ForwardQuery || docs.MaxClicks == nil || *docs.MaxClicks != 500 ||
			docs.ValidSince == nil || !docs.ValidSince.Equal(time.Date(2023, 12, 1, 0, 0, 0, 0, time.UTC)) {
			t.Errorf("docs = %+v, rules %+v", docs, d.Rules)
		}
		// Shlink 2's visitsCount, and forwardQuery absent: Shlink's default, on.
		old, err := st.TenantLink(ctx, tenant.ID, linkforge.PublicDomainID, "old")
		if err != nil {
			t.Fatal(err)
		}
		if old.ImportedClicks != 42 || !old.Routes().ForwardQuery || len(old.Routes().Rules) != 0 {
			t.Errorf("old = %+v", old)
		}
	})
}

// TestImportShlinkJSONShapes: the bare array of short URLs imports too,
// the CSV still does, and JSON that is neither is refused as a whole.
func TestImportShlinkJSONShapes(t *testing.T) {
	st := asStore(t, testdb.SQLite(t))
	ctx := t.Context()
	tenant, err := st.EnsureTenant(ctx, "acme")
	if err != nil {
		t.Fatal(err)
	}
	res, err := porting.Import(ctx, st, porting.Shlink, strings.NewReader("\xEF\xBB\xBF\n [{\"shortCode\":\"a1\",\"longUrl\":\"https://example.com/\","+
		"\"redirectRules\":[{\"longUrl\":\"https://example.com/n\",\"priority\":1,\"conditions\":[{\"type\":\"before-date\",\"matchKey\":null,\"matchValue\":\"2030-01-01T00:00:00+02:00\"}]}]}]"),
		porting.Options{TenantID: tenant.ID})
	if err != nil || res.Created != 1 {
		t.Fatalf("array: %+v, %v", res, err)
	}
	a, err := st.TenantLink(ctx, tenant.ID, linkforge.PublicDomainID, "a1")
	if err != nil {
		t.Fatal(err)
	}
	if r := a.Routes().Rules; len(r) != 1 || r[0].Conditions[0] != (linkforge.Condition{Type: "before", Value: "2029-12-31T22:00:00Z"}) {
		t.Errorf("a1 rules = %+v", r)
	}
	if res, err := porting.Import(ctx, st, porting.Shlink, strings.NewReader("shortCode,longUrl\nc1,https://example.com/c\n"),
		porting.Options{TenantID: tenant.ID}); err != nil || res.Created != 1 {
		t.Errorf("csv: %+v, %v", res, err)
	}
	for _, body := range []string{`{"shortUrls":{"pagination":{}}}`, `{"data":[]}`, `{"shortUrls":{"data":{}}}`} {
		if _, err := porting.Import(ctx, st, porting.Shlink, strings.NewReader(body), porting.Options{TenantID: tenant.ID}); linkforge.ErrorCode(err) != linkforge.EInvalid {
			t.Errorf("%s: err %v, want EInvalid", body, err)
		}
	}
}

func itoa(n int) string { return strconv.Itoa(n) }
