package main

import (
	"math/rand/v2"
	"time"

	"github.com/linkforge/linkforge"
)

// statsValues are the values the stats scenario's synthetic clicks take in
// each dimension, drawn Zipf-distributed (the first the most frequent), so
// that a tenant's breakdowns look like real traffic: a few countries and
// referrers with most clicks and a long tail.
var statsValues = func() [linkforge.NumDimensions][]string {
	var v [linkforge.NumDimensions][]string
	countries := []string{"US", "DE", "GB", "FR", "IN", "BR", "JP", "CA", "NL", "ES", "IT", "PL", "SE", "AU", "MX",
		"KR", "TR", "CH", "AT", "BE", "DK", "NO", "FI", "IE", "PT", "CZ", "RO", "HU", "GR", "AR", "CL", "CO", "ZA",
		"NG", "EG", "ID", "PH", "VN", "TH", "MY", "SG", "NZ", "IL", "AE", "SA", "UA", "RU", "CN", "TW", "unknown"}
	v[linkforge.DimCountry] = countries
	refs := []string{"direct", "google.com", "t.co", "facebook.com", "linkedin.com", "reddit.com", "news.ycombinator.com",
		"instagram.com", "youtube.com", "bing.com", "duckduckgo.com", "mail.google.com", "outlook.live.com", "github.com"}
	for i := range 86 {
		refs = append(refs, "blog"+itoa(i)+".example.org")
	}
	v[linkforge.DimReferrer] = refs
	v[linkforge.DimDevice] = []string{"mobile", "desktop", "tablet", "other"}
	v[linkforge.DimBrowser] = []string{"Chrome", "Safari", "Firefox", "Edge", "Samsung Internet", "Opera", "other"}
	v[linkforge.DimOS] = []string{"Android", "iOS", "Windows", "macOS", "Linux", "ChromeOS", "other"}
	utm := []string{"none", "newsletter", "twitter", "facebook", "linkedin", "instagram", "partner", "ads"}
	for i := range 12 {
		utm = append(utm, "campaign-"+itoa(i))
	}
	v[linkforge.DimUTMSource] = utm
	v[linkforge.DimTraffic] = []string{linkforge.TrafficHuman, linkforge.TrafficAutomated}
	// Links without an A/B test: every click is the variant default.
	v[linkforge.DimVariant] = []string{linkforge.DimVariant.Default()}
	// Most clicks come by the link, some by its QR code.
	v[linkforge.DimSource] = []string{linkforge.SourceLink, linkforge.SourceQR}
	return v
}()

func itoa(i int) string {
	if i < 10 {
		return string(rune('0' + i)) //nolint:gosec // G115: i < 10 here
	}
	return itoa(i/10) + string(rune('0'+i%10))
}

// statsGen generates the stats scenario's clicks: clicks spread evenly over
// the minutes of [start, start+days), each on a Zipf-drawn link and with
// Zipf-drawn values, aggregated as the counter would flush them: one rollup
// row per (link, minute) and one click_dims row per (link, hour, dimension,
// value), all of one node.
type statsGen struct {
	clicks int64
	links  int
	start  time.Time
	days   int
	seed   uint64
	// noDims: no click_dims rows (--stats-dims=false). The values are
	// still drawn, so the minute rows are those of the full load.
	noDims bool
}

// run calls minute once per (link, minute) with clicks and dim once per
// (link, hour, dimension, value), hour by hour, in time order.
func (g statsGen) run(minute func(link int, bucket time.Time, n int64) error,
	dim func(link int, hour time.Time, d linkforge.Dimension, value string, n int64) error) error {
	r := rand.New(rand.NewPCG(g.seed, g.seed^0x51ed27))
	perm := r.Perm(g.links)
	linkZipf := rand.NewZipf(r, 1.4, 1, uint64(g.links-1)) //nolint:gosec // G115: g.links >= 1
	var valueZipf [linkforge.NumDimensions]*rand.Zipf
	for d := range linkforge.NumDimensions {
		if len(statsValues[d]) == 0 {
			continue
		}
		valueZipf[d] = rand.NewZipf(r, 2, 1, uint64(len(statsValues[d])-1)) //nolint:gosec // G115: the list is non-empty
	}
	minutes := int64(g.days) * 24 * 60
	type dimKey struct {
		link  int
		d     linkforge.Dimension
		value uint16
	}
	perMinute := map[int]int64{}
	perHour := map[dimKey]int64{}
	var done int64
	for m := range minutes {
		// Clicks of minute m: the share that keeps the running total exact.
		n := g.clicks*(m+1)/minutes - done
		done += n
		clear(perMinute)
		for range n {
			link := perm[linkZipf.Uint64()]
			perMinute[link]++
			for d := range linkforge.NumDimensions {
				if len(statsValues[d]) == 0 {
					continue // an internal per-traffic copy: not generated
				}
				perHour[dimKey{link, d, uint16(valueZipf[d].Uint64())}]++ //nolint:gosec // G115: below len(statsValues[d]), a few dozen
			}
		}
		bucket := g.start.Add(time.Duration(m) * time.Minute)
		for link, c := range perMinute {
			if err := minute(link, bucket, c); err != nil {
				return err
			}
		}
		if (m+1)%60 == 0 && !g.noDims {
			hour := bucket.Truncate(time.Hour)
			for k, c := range perHour {
				if err := dim(k.link, hour, k.d, statsValues[k.d][k.value], c); err != nil {
					return err
				}
			}
			clear(perHour)
		}
	}
	return nil
}
