package web

import (
	"bytes"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/linkforge/linkforge"
)

var fuzzSelfHosts = []string{"localhost:8080"}

// FuzzDecodeCreateLink checks that the create-link decoder never panics,
// answers every bad body with an EInvalid naming at least one field, and
// accepts only a single JSON object whose fields are all valid. Seeds:
// testdata/fuzz/FuzzDecodeCreateLink.
func FuzzDecodeCreateLink(f *testing.F) {
	for _, s := range []string{
		`{"url":"https://example.com/"}`,
		`{"slug":"abc","url":"https://example.com/","expires_at":"2026-12-01T00:00:00Z","max_clicks":5,"fallback_url":"https://example.com/x","tags":["a"]}`,
		`{"url":"javascript:alert(1)"}`,
		`{"url":"https://example.com","url":"https://example.org"}`,
		`[{"url":"https://example.com"}]`,
		`{"url":"https://example.com"} {}`,
		`{"url":null,"slug":null,"tags":null}`,
		`{"max_clicks":-1,"expires_at":"x","tags":[1]}`,
		`{"url":"https://example.com","title":"T","password":"pw","device_urls":{"ios":"https://apps.apple.com/x","android":null}}`,
		`{"url":"https://example.com","device_urls":{"web":"x"},"password":""}`,
		``,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		nl, err := decodeCreateLink(bytes.NewReader(body), fuzzSelfHosts)
		l := nl.link
		if err != nil {
			var e *linkforge.Error
			if !errors.As(err, &e) || e.Code != linkforge.EInvalid {
				t.Fatalf("error %v is not an EInvalid *linkforge.Error", err)
			}
			if len(e.Fields) == 0 {
				t.Fatalf("error %v names no field", err)
			}
			for _, fe := range e.Fields {
				if fe.Field == "" || fe.Detail == "" {
					t.Fatalf("field error %+v lacks a name or detail", fe)
				}
			}
			return
		}
		trimmed := bytes.TrimSpace(body)
		if !json.Valid(body) || len(trimmed) == 0 || trimmed[0] != '{' {
			t.Fatalf("accepted %q, which is not one JSON object", body)
		}
		if err := linkforge.ValidateTargetURL("url", l.URL, fuzzSelfHosts); err != nil {
			t.Fatalf("accepted url %q: %v", l.URL, err)
		}
		if l.Slug != "" {
			if err := linkforge.ValidateSlug(l.Slug); err != nil {
				t.Fatalf("accepted slug %q: %v", l.Slug, err)
			}
		}
		if l.FallbackURL != "" {
			if err := linkforge.ValidateTargetURL("fallback_url", l.FallbackURL, fuzzSelfHosts); err != nil {
				t.Fatalf("accepted fallback_url %q: %v", l.FallbackURL, err)
			}
		}
		if l.MaxClicks != nil && *l.MaxClicks < 0 {
			t.Fatalf("accepted max_clicks %d", *l.MaxClicks)
		}
		if l.ExpiresAt != nil && l.ExpiresAt.Location() != time.UTC {
			t.Fatalf("expires_at %v is not UTC", l.ExpiresAt)
		}
		if l.Tags == nil {
			t.Fatal("tags are nil")
		}
		if err := linkforge.ValidateTags(l.Tags); err != nil {
			t.Fatalf("accepted tags %q: %v", l.Tags, err)
		}
		if nl.password != "" {
			if err := linkforge.ValidatePassword(nl.password); err != nil {
				t.Fatalf("accepted password %q: %v", nl.password, err)
			}
		}
		if err := linkforge.ValidateLink(&l, fuzzSelfHosts); err != nil {
			t.Fatalf("accepted a link ValidateLink refuses: %v", err)
		}
	})
}

// TestDecodeCreateLinkReportsEveryField: one answer lists every bad field.
func TestDecodeCreateLinkReportsEveryField(t *testing.T) {
	_, err := decodeCreateLink(bytes.NewReader([]byte(
		`{"url":"ftp://x","slug":"a/b","max_clicks":-2,"expires_at":"soon","tags":"x","extra":1}`)), nil)
	var e *linkforge.Error
	if !errors.As(err, &e) {
		t.Fatalf("err = %v", err)
	}
	var got []string
	for _, f := range e.Fields {
		got = append(got, f.Field)
	}
	want := []string{"url", "slug", "max_clicks", "expires_at", "tags", "extra"}
	if len(got) != len(want) {
		t.Fatalf("fields = %q, want %q", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("fields = %q, want %q", got, want)
			break
		}
	}
}

func TestDecodeCreateLinkTruncatesLongFieldNames(t *testing.T) {
	long := string(bytes.Repeat([]byte("é"), 100))
	_, err := decodeCreateLink(bytes.NewReader([]byte(`{"url":"https://example.com","`+long+`":1}`)), nil)
	var e *linkforge.Error
	if !errors.As(err, &e) || len(e.Fields) != 1 {
		t.Fatalf("err = %v", err)
	}
	if n := len(e.Fields[0].Field); n > 64+len("…") {
		t.Errorf("field name echoed with %d bytes", n)
	}
}
