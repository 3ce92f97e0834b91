package web

import (
	"errors"
	"net/url"
	"slices"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/linkforge/linkforge"
)

// FuzzParseListQuery: whatever the query string, parseListQuery either
// returns a query every store can run (known sort and state, a bounded
// and printable q, normalized valid tags, a limit in range) or an EInvalid
// naming only parameters it reads.
func FuzzParseListQuery(f *testing.F) {
	for _, s := range []string{
		"", "q=spring&tag=launch&tag=Sale&state=active&sort=-clicks&limit=10",
		"q=%FF", "q=a%0Ab", "tag=", "tag=%20x%20&tag=X", "sort=size", "limit=1001", "limit=-1",
		"cursor=bDEgc2x1ZyA0IGFi", "sort=slug&cursor=bDEgc2x1ZyA0IGFi", "state=all&state=active",
	} {
		f.Add(s)
	}
	known := []string{"q", "tag", "state", "sort", "limit", "cursor"}
	f.Fuzz(func(t *testing.T, raw string) {
		v, err := url.ParseQuery(raw)
		if err != nil {
			return
		}
		q, err := parseListQuery(v)
		if err != nil {
			var e *linkforge.Error
			if !errors.As(err, &e) || e.Code != linkforge.EInvalid || len(e.Fields) == 0 {
				t.Fatalf("error %v, want an EInvalid naming fields", err)
			}
			for _, fe := range e.Fields {
				if !slices.Contains(known, fe.Field) {
					t.Fatalf("error names %q, not a parameter", fe.Field)
				}
			}
			return
		}
		if !utf8.ValidString(q.Q) || utf8.RuneCountInString(q.Q) > maxSearchLength || strings.IndexFunc(q.Q, unicode.IsControl) >= 0 {
			t.Fatalf("accepted q %q", q.Q)
		}
		if err := linkforge.ValidateTags(q.Tags); err != nil {
			t.Fatalf("accepted tags %q: %v", q.Tags, err)
		}
		for _, tag := range q.Tags {
			if linkforge.NormalizeTag(tag) != tag {
				t.Fatalf("tag %q is not normalized", tag)
			}
		}
		if q.Sort != "" && !q.Sort.Valid() || q.State != "" && !q.State.Valid() {
			t.Fatalf("accepted sort %q, state %q", q.Sort, q.State)
		}
		if q.Limit < 0 || q.Limit > linkforge.MaxListLimit {
			t.Fatalf("accepted limit %d", q.Limit)
		}
		if q.Cursor != "" {
			if _, err := linkforge.DecodeListCursor(cmpSort(q.Sort), q.Cursor); err != nil {
				t.Fatalf("accepted cursor %q: %v", q.Cursor, err)
			}
		}
	})
}
