package storetest

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/linkforge/linkforge"
)

// BenchmarkListing loads n links into one tenant of s (and a few into
// another), a tenth of them with clicks, once, then measures QueryLinks
// pages of 50 for the orders and filters of GET /api/v1/links. s must be
// fresh and have ImportLinks. Run it with -benchtime small: the load is
// the long part (it is not timed).
func BenchmarkListing(b *testing.B, s linkforge.Store, n int) {
	ctx := context.Background()
	imp, ok := s.(importer)
	if !ok {
		b.Skip("this store has no ImportLinks")
	}
	start := time.Now()
	big, err := s.EnsureTenant(ctx, "big")
	if err != nil {
		b.Fatal(err)
	}
	small, err := s.EnsureTenant(ctx, "small")
	if err != nil {
		b.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	slugs := make([]string, n)
	seen := make(map[string]bool, n)
	const batch = 50_000
	created := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	links := make([]linkforge.Link, 0, batch)
	for i := range n {
		for slugs[i] = benchSlug(rng); seen[slugs[i]]; slugs[i] = benchSlug(rng) {
		}
		seen[slugs[i]] = true
		links = append(links, linkforge.Link{TenantID: big.ID, Slug: slugs[i],
			URL:       fmt.Sprintf("https://example.com/landing/%d?utm_source=bench", i),
			Title:     fmt.Sprintf("Landing page %d", i),
			Tags:      []string{fmt.Sprintf("t%d", i%100)},
			CreatedAt: created.Add(time.Duration(i) * time.Second)})
		if len(links) == batch || i == n-1 {
			if err := imp.ImportLinks(ctx, links); err != nil {
				b.Fatal(err)
			}
			links = links[:0]
		}
	}
	for i := range 100 {
		links = append(links, linkforge.Link{TenantID: small.ID, Slug: fmt.Sprintf("small-%d", i), URL: "https://example.com/small"})
	}
	if err := imp.ImportLinks(ctx, links); err != nil {
		b.Fatal(err)
	}
	// Clicks for a tenth of the links, through the rollup as a flush
	// writes them (the trigger keeps the totals).
	bucket := time.Now().UTC().Truncate(time.Minute)
	rows := make([]linkforge.RollupRow, 0, 10_000)
	for i := 0; i < n; i += 10 {
		l, err := s.LinkBySlug(ctx, linkforge.PublicDomainID, slugs[i])
		if err != nil {
			b.Fatal(err)
		}
		rows = append(rows, linkforge.RollupRow{LinkID: l.ID, Bucket: bucket, Count: 1 + rng.Int64N(1000)})
		if len(rows) == cap(rows) || i+10 >= n {
			if err := s.UpsertRollup(ctx, "bench", rows); err != nil {
				b.Fatal(err)
			}
			rows = rows[:0]
		}
	}
	b.Logf("loaded %d links in %v", n, time.Since(start).Round(time.Millisecond))

	// A cursor deep in the listing: the 10,000th page's start costs what
	// the first does.
	deep := ""
	{
		q := linkforge.ListQuery{TenantID: big.ID, Limit: 1000}
		for range min(n/1000-1, 10) {
			p, err := s.QueryLinks(ctx, q)
			if err != nil {
				b.Fatal(err)
			}
			q.Cursor = p.NextCursor
		}
		deep = q.Cursor
	}
	cases := []struct {
		name string
		q    linkforge.ListQuery
	}{
		{"list", linkforge.ListQuery{}},
		{"list-deep-cursor", linkforge.ListQuery{Cursor: deep}},
		{"sort=-clicks", linkforge.ListQuery{Sort: linkforge.SortClicksDesc}},
		{"sort=clicks", linkforge.ListQuery{Sort: linkforge.SortClicks}},
		{"sort=slug", linkforge.ListQuery{Sort: linkforge.SortSlug}},
		{"q=slug-prefix", linkforge.ListQuery{Q: slugs[n/2][:4]}},
		{"q=slug", linkforge.ListQuery{Q: slugs[n/3]}},
		{"q=common", linkforge.ListQuery{Q: "landing"}},
		{"q=none", linkforge.ListQuery{Q: "zzzzzz"}},
		{"q=2-chars", linkforge.ListQuery{Q: "Zq"}},
		{"tag", linkforge.ListQuery{Tags: []string{"t42"}}},
		{"state=active", linkforge.ListQuery{State: linkforge.StateActive}},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			q := c.q
			q.TenantID, q.Limit = big.ID, 50
			for b.Loop() {
				if _, err := s.QueryLinks(ctx, q); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	b.Run("tags", func(b *testing.B) {
		for b.Loop() {
			if _, err := s.TagCounts(ctx, big.ID); err != nil {
				b.Fatal(err)
			}
		}
	})
}

const benchAlphabet = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"

// benchSlug returns a random 8-character slug, the shape of generated
// ones; collisions are negligible at a million.
func benchSlug(rng *rand.Rand) string {
	b := make([]byte, 8)
	for i := range b {
		b[i] = benchAlphabet[rng.IntN(len(benchAlphabet))]
	}
	return string(b)
}
