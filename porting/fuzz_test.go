package porting_test

import (
	"bytes"
	"errors"
	"io"
	"slices"
	"testing"
	"time"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/porting"
)

// The parsers read files from outside. Each fuzz target checks, for any
// input: no panic; a whole-file error or a broken stream is an EInvalid
// *linkforge.Error (the input is in memory: no other error can happen);
// line numbers start at 1 and only grow; a line without error has a valid
// slug or none and a non-negative click count; a line error names a field.
// The seeds are the sample files of testdata/import.

func FuzzParseCSV(f *testing.F)        { fuzzParse(f, porting.CSV, "csv.csv") }
func FuzzParseJSON(f *testing.F)       { fuzzParse(f, porting.JSON, "json.json") }
func FuzzParseYOURLS(f *testing.F)     { fuzzParse(f, porting.YOURLS, "yourls.csv") }
func FuzzParseShlink(f *testing.F)     { fuzzParse(f, porting.Shlink, "shlink.csv") }
func FuzzParseShlinkJSON(f *testing.F) { fuzzParse(f, porting.Shlink, "shlink-api.json") }
func FuzzParseBitly(f *testing.F)      { fuzzParse(f, porting.Bitly, "bitly.csv") }
func FuzzParseBitlyAPI(f *testing.F)   { fuzzParse(f, porting.Bitly, "bitly-api.csv") }
func FuzzParseDub(f *testing.F)        { fuzzParse(f, porting.Dub, "dub.csv") }
func FuzzParseKutt(f *testing.F)       { fuzzParse(f, porting.Kutt, "kutt.json") }
func FuzzParseRebrandly(f *testing.F)  { fuzzParse(f, porting.Rebrandly, "rebrandly.json") }

func fuzzParse(f *testing.F, format porting.Format, seed string) {
	f.Add(sample(f, seed))
	f.Add([]byte(""))
	f.Add([]byte("\uFEFF"))
	f.Add([]byte("slug,url\n\"unterminated,https://example.com\n"))
	f.Add([]byte("[{\"slug\":\"a\",\"slug\":\"b\"}]"))
	f.Add([]byte("slug,url,title,tags,fallback_url,device_ios,password_hash\n'-a,https://example.com/,'=t,'+x|''=y,https://example.com/f,https://example.com/i,$argon2id$v=19$m=64$s$k\n"))
	f.Add([]byte("slug,url,created_at,updated_at,expires_at,expired_at,redirect_status,forward_query,rules,variants,og\n" +
		"r1,https://example.com/,2026-01-01T00:00:00Z,2026-01-02T00:00:00Z,2026-02-01T00:00:00Z,2026-02-01T00:00:01Z,308,true," +
		"\"[{\"\"conditions\"\":[{\"\"type\"\":\"\"country\"\",\"\"value\"\":\"\"DE\"\"}],\"\"url\"\":\"\"https://example.com/de\"\"}]\"," +
		"\"[{\"\"url\"\":\"\"https://example.com/a\"\",\"\"weight\"\":1},{\"\"url\"\":\"\"https://example.com/b\"\",\"\"weight\"\":2}]\"," +
		"\"{\"\"title\"\":\"\"Card\"\"}\"\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		recs := parseAll(t, format, data)
		if format != porting.CSV {
			return
		}
		// LinkForge's own CSV: the links that would be imported write
		// back to a CSV that parses to the same links.
		var valid []linkforge.Link
		for _, r := range recs {
			if r.Err == nil && linkforge.ValidateLink(&r.Link, nil) == nil {
				valid = append(valid, r.Link)
			}
		}
		var buf bytes.Buffer
		w := porting.NewCSVWriter(&buf)
		for i := range valid {
			l := valid[i]
			l.Clicks = l.ImportedClicks
			if err := w.Write(&l); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		again := parseAll(t, format, buf.Bytes())
		if len(again) != len(valid) {
			t.Fatalf("%d links written, %d read back from\n%s", len(valid), len(again), buf.Bytes())
		}
		for i, r := range again {
			a, b := valid[i], r.Link
			if r.Err != nil || a.Slug != b.Slug || a.URL != b.URL || a.Title != b.Title || !slices.Equal(a.Tags, b.Tags) ||
				!a.CreatedAt.Equal(b.CreatedAt) || !equalTime(a.ExpiresAt, b.ExpiresAt) || !equalInt(a.MaxClicks, b.MaxClicks) ||
				a.ImportedClicks != b.ImportedClicks || a.FallbackURL != b.FallbackURL || a.DeviceURLs != b.DeviceURLs ||
				a.PasswordHash != b.PasswordHash || !a.UpdatedAt.Equal(b.UpdatedAt) || !equalTime(a.ExpiredAt, b.ExpiredAt) ||
				a.RedirectCode() != b.RedirectCode() || a.Routes().ForwardQuery != b.Routes().ForwardQuery ||
				linkforge.EncodeRouting(&a) != linkforge.EncodeRouting(&b) {
				t.Fatalf("link %d: wrote %+v, read %+v (%v)", i, a, b, r.Err)
			}
		}
	})
}

func parseAll(t *testing.T, format porting.Format, data []byte) []porting.Record {
	p, err := porting.NewParser(format, bytes.NewReader(data))
	if err != nil {
		mustInvalid(t, err)
		return nil
	}
	var recs []porting.Record
	last := 0
	for {
		r, err := p.Next()
		if errors.Is(err, io.EOF) {
			return recs
		}
		if err != nil {
			mustInvalid(t, err)
			return recs
		}
		if r.Line <= last {
			t.Fatalf("line %d after line %d", r.Line, last)
		}
		last = r.Line
		if r.Err != nil {
			mustInvalid(t, r.Err)
			continue
		}
		if r.Link.Slug != "" {
			if err := linkforge.ValidateSlug(r.Link.Slug); err != nil {
				t.Fatalf("line %d: slug %q accepted: %v", r.Line, r.Link.Slug, err)
			}
		}
		if r.Link.ImportedClicks < 0 || (r.Link.MaxClicks != nil && *r.Link.MaxClicks < 0) {
			t.Fatalf("line %d: negative count %+v", r.Line, r.Link)
		}
		if format != porting.CSV && format != porting.JSON {
			// Other shorteners' titles are made to fit.
			if err := linkforge.ValidateTitle(r.Link.Title); err != nil {
				t.Fatalf("line %d: cleaned title %q: %v", r.Line, r.Link.Title, err)
			}
		}
		recs = append(recs, r)
	}
}

func mustInvalid(t *testing.T, err error) {
	t.Helper()
	var e *linkforge.Error
	if !errors.As(err, &e) || e.Code != linkforge.EInvalid || len(e.Fields) == 0 || e.Fields[0].Field == "" {
		t.Fatalf("error %v (%T), want an EInvalid naming a field", err, err)
	}
}

func equalTime(a, b *time.Time) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return a.Equal(*b)
}

func equalInt(a, b *int64) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return *a == *b
}
