package linkforge

import (
	"context"
	"time"
)

// AddTraffic divides st's counts by traffic: automatedTotal is the
// automated part of Total, automated that of each bucket, by its start in
// unix seconds. A store reads both in the snapshot it read st from, from
// the traffic dimension's rows (for all time) and the rollup rows'
// automated part (for buckets), and the rest of each count is human: clicks counted before
// classification existed count as human, as in DimTraffic's default.
func AddTraffic(st *Stats, automatedTotal int64, automated map[int64]int64) {
	st.Automated = min(automatedTotal, st.Total)
	st.Human = st.Total - st.Automated
	for i := range st.Buckets {
		b := &st.Buckets[i]
		b.Automated = min(automated[b.Start.Unix()], b.Count)
		b.Human = b.Count - b.Automated
	}
}

// CheckTraffic answers EInvalid unless traffic is "" (both),
// TrafficHuman or TrafficAutomated: the traffic= of a query.
func CheckTraffic(traffic string) error {
	if _, ok := TrafficFilter(traffic); !ok {
		return InvalidField("traffic", "must be human or automated")
	}
	return nil
}

// TrafficFilter is how a read of dimension rows keeps the clicks of
// traffic: nil for both ("", the sum of a value's two rows), else whether
// the rows kept are the automated ones. False for a traffic the API does
// not know.
func TrafficFilter(traffic string) (automated *bool, ok bool) {
	switch traffic {
	case "":
		return nil, true
	case TrafficHuman, TrafficAutomated:
		a := traffic == TrafficAutomated
		return &a, true
	}
	return nil, false
}

// DailyDimRow is one link_dims_daily row as the stats export reads it: a
// link's clicks of one UTC day under one value of one stored dimension
// (summed over nodes).
type DailyDimRow struct {
	LinkID    int64
	Slug      string
	DomainID  int64  // the link's domain: PublicDomainID for the public host
	Dimension string // a public dimension's name
	Day       time.Time
	Value     string
	Count     int64
}

// DailyDimsExporter reads a tenant's daily dimension rows for the stats
// export (GET /api/v1/stats/export), in pages: rows of the days [from, to)
// whose dimension is in names, of traffic (TrafficFilter: "" sums both),
// ordered by (link id, dimension, day, value)
// in byte order, after the key of after (nil: from the start), at most
// limit. Both stores implement it; it is apart from AnalyticsStore so that
// a Store written elsewhere need not.
type DailyDimsExporter interface {
	ExportDailyDims(ctx context.Context, tenantID int64, from, to time.Time, names []string, traffic string, after *DailyDimRow, limit int) ([]DailyDimRow, error)
}
