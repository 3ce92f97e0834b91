package storetest

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/linkforge/linkforge"
)

// testNodeUniques: NodeUniques returns exactly the asking node's stored
// sketches of the keys asked, none for a key it has none of (another
// node's, another day's), across more keys than one statement reads.
func testNodeUniques(t *testing.T, s linkforge.Store) {
	u, ok := s.(linkforge.UniqueStore)
	if !ok {
		t.Skip("the store keeps no visitor sketches")
	}
	ctx := t.Context()
	acme := mustTenant(t, s, "uniq-acme")
	day := time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)
	const links = 1_200 // more than a statement's keys on SQLite
	var mine, theirs []linkforge.UniqueSketch
	var keys []linkforge.UniqueKey
	for i := range links {
		l := mustCreateLink(t, s, newLink(acme.ID, fmt.Sprintf("uniq-%d", i)))
		keys = append(keys, linkforge.UniqueKey{LinkID: l.ID, Day: day})
		if i%3 != 2 { // every third link has no sketch of this node
			mine = append(mine, linkforge.UniqueSketch{LinkID: l.ID, Day: day, Sketch: []byte(fmt.Sprintf("a-%d", i))})
		}
		theirs = append(theirs, linkforge.UniqueSketch{LinkID: l.ID, Day: day, Sketch: []byte(fmt.Sprintf("b-%d", i))})
		// Another day of this node, not asked for.
		mine = append(mine, linkforge.UniqueSketch{LinkID: l.ID, Day: day.AddDate(0, 0, -1), Sketch: []byte("old")})
	}
	if err := u.UpsertUniques(ctx, "node-a", mine); err != nil {
		t.Fatal(err)
	}
	if err := u.UpsertUniques(ctx, "node-b", theirs); err != nil {
		t.Fatal(err)
	}
	got, err := u.NodeUniques(ctx, "node-a", keys)
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, m := range mine {
		if m.Day.Equal(day) {
			want = append(want, fmt.Sprintf("%d %s node-a %s", m.LinkID, m.Day.Format(time.DateOnly), m.Sketch))
		}
	}
	var have []string
	for _, g := range got {
		have = append(have, fmt.Sprintf("%d %s %s %s", g.LinkID, g.Day.UTC().Format(time.DateOnly), g.NodeID, g.Sketch))
	}
	slices.Sort(want)
	slices.Sort(have)
	if !slices.Equal(have, want) {
		t.Fatalf("NodeUniques: %d sketches, want %d; first differences:\n%s", len(have), len(want), firstDiff(have, want))
	}
	if got, err := u.NodeUniques(ctx, "node-a", nil); err != nil || len(got) != 0 {
		t.Fatalf("NodeUniques of no key = %v, %v; want none", got, err)
	}
}

// firstDiff lists the first few lines in one list and not the other.
func firstDiff(have, want []string) string {
	var b strings.Builder
	n := 0
	for _, h := range have {
		if !slices.Contains(want, h) && n < 5 {
			fmt.Fprintf(&b, "  extra %s\n", h)
			n++
		}
	}
	for _, w := range want {
		if !slices.Contains(have, w) && n < 10 {
			fmt.Fprintf(&b, "  missing %s\n", w)
			n++
		}
	}
	return b.String()
}
