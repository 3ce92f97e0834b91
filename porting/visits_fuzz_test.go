package porting

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/linkforge/linkforge"
)

// The per-visit parsers never panic, number lines upwards, and fail a
// line or the file only with EInvalid or ETooLarge errors. The seeds are
// the sample files of testdata/import.
func FuzzParseShlinkVisitsCSV(f *testing.F)  { fuzzVisits(f, ShlinkVisits, "shlink-visits.csv") }
func FuzzParseShlinkVisitsJSON(f *testing.F) { fuzzVisits(f, ShlinkVisits, "shlink-visits.json") }
func FuzzParseYOURLSLog(f *testing.F)        { fuzzVisits(f, YOURLSLog, "yourls-log.csv") }
func FuzzParseDubEvents(f *testing.F)        { fuzzVisits(f, DubEvents, "dub-events.csv") }

func fuzzVisits(f *testing.F, format Format, seed string) {
	b, err := os.ReadFile(filepath.Join("..", "testdata", "import", seed))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(b)
	f.Add([]byte(""))
	f.Add([]byte("1,2026-01-01 00:00:00,abc,direct,,,\n"))
	f.Add([]byte(`[{"date":"2026-01-01T00:00:00Z","visitedUrl":"https://s.test/a"}]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := newVisitParser(format, bytes.NewReader(data))
		if err != nil {
			mustCode(t, err)
			return
		}
		last := 0
		for {
			v, err := p.Next()
			if errors.Is(err, io.EOF) {
				return
			}
			if err != nil {
				mustCode(t, err)
				return
			}
			if v.Line <= last {
				t.Fatalf("line %d after line %d", v.Line, last)
			}
			last = v.Line
			if v.Err != nil {
				mustCode(t, v.Err)
			}
		}
	})
}

func mustCode(t *testing.T, err error) {
	t.Helper()
	if c := linkforge.ErrorCode(err); c != linkforge.EInvalid && c != linkforge.ETooLarge {
		t.Fatalf("error %v has code %s", err, c)
	}
}

// TestYOURLSLogWithoutHeader: `mysql -B` and phpMyAdmin export the table
// without its header row; the columns are then the table's, in order.
func TestYOURLSLogWithoutHeader(t *testing.T) {
	p, err := newVisitParser(YOURLSLog, bytes.NewReader([]byte(
		"7,2026-11-25 09:00:10,ozh,https://example.org/,Mozilla/5.0,203.0.113.5,FR\n")))
	if err != nil {
		t.Fatal(err)
	}
	v, err := p.Next()
	if err != nil || v.Err != nil || v.Line != 1 || v.Slug != "ozh" || v.Referrer != "https://example.org/" ||
		v.UserAgent != "Mozilla/5.0" || v.Country != "FR" || v.At.Format("2006-01-02 15:04:05") != "2026-11-25 09:00:10" {
		t.Fatalf("visit = %+v, %v", v, err)
	}
	if _, err := p.Next(); !errors.Is(err, io.EOF) {
		t.Fatalf("after the only line: %v", err)
	}
}
