package linkforge_test

import (
	"slices"
	"testing"
	"time"

	"github.com/linkforge/linkforge"
)

func TestNormalizeTags(t *testing.T) {
	for _, c := range []struct {
		name     string
		in, want []string
	}{
		{"nil", nil, []string{}},
		{"trim and lower", []string{"  Launch ", "Q4"}, []string{"launch", "q4"}},
		{"merge equal, keep first position", []string{"b", "Launch", "B", "launch "}, []string{"b", "launch"}},
		{"unicode", []string{"ÉTÉ", "Größe"}, []string{"été", "größe"}},
		{"inner space kept", []string{"Spring Sale"}, []string{"spring sale"}},
		{"empty stays for the validator", []string{" ", ""}, []string{"", ""}},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := linkforge.NormalizeTags(c.in)
			if got == nil || !slices.Equal(got, c.want) {
				t.Errorf("NormalizeTags(%q) = %#v, want %q", c.in, got, c.want)
			}
		})
	}
}

func TestListCursorRoundTrip(t *testing.T) {
	l := linkforge.Link{ID: 42, Slug: "Spring-1", Clicks: 7,
		CreatedAt: time.Date(2026, 3, 1, 12, 0, 0, 123456000, time.UTC)}
	for _, s := range []linkforge.ListSort{linkforge.SortCreatedDesc, linkforge.SortCreated,
		linkforge.SortClicksDesc, linkforge.SortClicks, linkforge.SortSlug} {
		c, err := linkforge.DecodeListCursor(s, linkforge.EncodeListCursor(s, l))
		if err != nil {
			t.Fatalf("%s: %v", s, err)
		}
		want := linkforge.ListCursor{Sort: s, ID: 42}
		switch s {
		case linkforge.SortCreated, linkforge.SortCreatedDesc:
			want.CreatedAt = l.CreatedAt
		case linkforge.SortClicks, linkforge.SortClicksDesc:
			want.Clicks = 7
		default:
			want.Slug = "Spring-1"
		}
		if c != want {
			t.Errorf("%s: decoded %+v, want %+v", s, c, want)
		}
		for _, other := range []linkforge.ListSort{linkforge.SortSlug, linkforge.SortClicks, linkforge.SortCreated} {
			if other == s {
				continue
			}
			if _, err := linkforge.DecodeListCursor(other, linkforge.EncodeListCursor(s, l)); linkforge.ErrorCode(err) != linkforge.EInvalid {
				t.Errorf("a %s cursor decoded for %s: %v", s, other, err)
			}
		}
	}
}

// FuzzDecodeListCursor: any string decodes to a usable position or an
// EInvalid naming "cursor", and a decoded cursor encodes back to itself.
func FuzzDecodeListCursor(f *testing.F) {
	f.Add("slug", linkforge.EncodeListCursor(linkforge.SortSlug, linkforge.Link{ID: 1, Slug: "a"}))
	f.Add("-clicks", linkforge.EncodeListCursor(linkforge.SortClicksDesc, linkforge.Link{ID: 9, Clicks: 3}))
	f.Add("-created", "bDEgLWNyZWF0ZWQgMSAtNQ")
	f.Add("created", "%%%")
	f.Fuzz(func(t *testing.T, sort, cursor string) {
		s := linkforge.ListSort(sort)
		if !s.Valid() {
			return
		}
		c, err := linkforge.DecodeListCursor(s, cursor)
		if err != nil {
			if linkforge.ErrorCode(err) != linkforge.EInvalid {
				t.Fatalf("error %v, want EInvalid", err)
			}
			return
		}
		if c.ID <= 0 || c.Sort != s || c.Clicks < 0 {
			t.Fatalf("decoded %+v", c)
		}
		l := linkforge.Link{ID: c.ID, Slug: c.Slug, Clicks: c.Clicks, CreatedAt: c.CreatedAt}
		again, err := linkforge.DecodeListCursor(s, linkforge.EncodeListCursor(s, l))
		if err != nil || again != c {
			t.Fatalf("round trip of %+v: %+v, %v", c, again, err)
		}
	})
}
