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
