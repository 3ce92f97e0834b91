package linkforge

import (
	"slices"
	"testing"
)

// TestRankCandidates: the first step of TopLinks is exact only when no
// link after the candidates can enter the list or tie with its last entry.
func TestRankCandidates(t *testing.T) {
	c := func(id int64, slug string, bound, count int64) TopLinkCandidate {
		return TopLinkCandidate{LinkID: id, Slug: slug, Bound: bound, Count: count}
	}
	cases := []struct {
		name  string
		cands []TopLinkCandidate
		limit int
		n     int
		want  []LinkCount
		exact bool
	}{
		{"every link read", []TopLinkCandidate{c(1, "a", 9, 1), c(2, "b", 5, 0)}, 3, 4,
			[]LinkCount{{1, "a", 0, 1}}, true},
		{"the limit-th beats the last bound", []TopLinkCandidate{c(1, "a", 90, 50), c(2, "b", 80, 70), c(3, "c", 40, 3)}, 2, 3,
			[]LinkCount{{2, "b", 0, 70}, {1, "a", 0, 50}}, true},
		{"a later link could tie", []TopLinkCandidate{c(1, "b", 90, 50), c(2, "c", 80, 70), c(3, "d", 50, 3)}, 2, 3,
			[]LinkCount{{2, "c", 0, 70}, {1, "b", 0, 50}}, false},
		{"a later link could enter", []TopLinkCandidate{c(1, "a", 90, 0), c(2, "b", 80, 0), c(3, "c", 40, 3)}, 2, 3,
			[]LinkCount{{3, "c", 0, 3}}, false},
		{"no later link has clicks", []TopLinkCandidate{c(1, "a", 90, 4), c(2, "b", 0, 0)}, 2, 2,
			[]LinkCount{{1, "a", 0, 4}}, true},
		{"ties by slug in byte order", []TopLinkCandidate{c(1, "a", 9, 5), c(2, "Z", 8, 5), c(3, "b", 7, 6)}, 2, 3,
			[]LinkCount{{3, "b", 0, 6}, {2, "Z", 0, 5}}, false},
		{"one slug on two domains, ties by domain", []TopLinkCandidate{
			{LinkID: 1, Slug: "s", DomainID: 7, Bound: 9, Count: 5}, {LinkID: 2, Slug: "s", Bound: 8, Count: 5}}, 2, 3,
			[]LinkCount{{2, "s", 0, 5}, {1, "s", 7, 5}}, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, exact := RankCandidates(tc.cands, tc.limit, tc.n)
			if !slices.Equal(got, tc.want) || exact != tc.exact {
				t.Errorf("RankCandidates = %v, %v; want %v, %v", got, exact, tc.want, tc.exact)
			}
		})
	}
}
