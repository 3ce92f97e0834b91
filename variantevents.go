package linkforge

import "time"

// VariantHour is one hour of a link's A/B test in a link.clicks event: the
// absolute clicks per variant value ("0", "1", ..., and "none" for the
// clicks a rule or a device URL sent elsewhere), summed over nodes, so a
// receiver upserts them as it does the minutes.
type VariantHour struct {
	Start  time.Time        `json:"start"` // the UTC hour
	Counts map[string]int64 `json:"counts"`
}

// VariantRow is one (link, hour, variant value) total a store reads for
// the click events of a flush, from the variant dimension's rows.
type VariantRow struct {
	LinkID int64
	Hour   time.Time
	Value  string
	Count  int64
}

// WithVariants sets, on the first ClickRow of each link, the variant hours
// rows give it (rows sorted by link, hour and value). An hour whose clicks
// all went to "none" is not an hour of a test and is left out, so a link
// without variants gets none.
func WithVariants(crs []ClickRow, rows []VariantRow) {
	byLink := map[int64][]VariantHour{}
	for i := 0; i < len(rows); {
		r := rows[i]
		h := VariantHour{Start: r.Hour.UTC(), Counts: map[string]int64{}}
		tested := false
		for ; i < len(rows) && rows[i].LinkID == r.LinkID && rows[i].Hour.Equal(r.Hour); i++ {
			h.Counts[rows[i].Value] += rows[i].Count
			tested = tested || rows[i].Value != DimVariant.Default()
		}
		if tested {
			byLink[r.LinkID] = append(byLink[r.LinkID], h)
		}
	}
	for i := range crs {
		if i > 0 && crs[i-1].LinkID == crs[i].LinkID {
			continue
		}
		crs[i].Variants = byLink[crs[i].LinkID]
	}
}
