package web

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/visitor"
)

// maxBuckets bounds one stats answer: 10,000 buckets are a week by minute
// or 27 years by day, and about 400 KiB of JSON.
const maxBuckets = 10_000

// defaultStatsBuckets is how many intervals a query without from spans.
const defaultStatsBuckets = 60

// statsJSON is the body of both stats routes.
type statsJSON struct {
	// Total is all time: the counted clicks and the imported ones.
	Total    int64        `json:"total"`
	Interval string       `json:"interval"`
	From     time.Time    `json:"from"`
	To       time.Time    `json:"to"`
	Buckets  []bucketJSON `json:"buckets"`
	// Human and Automated divide Total with Imported (schema Stats:
	// total = human + automated + imported).
	Human     int64 `json:"human"`
	Automated int64 `json:"automated"`
	// Imported is the part of Total an import brought: counted by another
	// shortener, so in no bucket and neither human nor automated.
	Imported int64 `json:"imported"`
}

type bucketJSON struct {
	Start     time.Time `json:"start"`
	Count     int64     `json:"count"`
	Human     int64     `json:"human"`
	Automated int64     `json:"automated"`
	// Unique: day buckets only (estimateUniques).
	Unique *int64 `json:"unique,omitempty"`
}

// statsRange is a parsed stats query: buckets start at From (aligned to the
// interval in UTC) and every interval start before To has one.
type statsRange struct {
	from, to time.Time
	interval linkforge.Interval
	n        int // number of buckets
}

// parseStatsRange reads from, to and interval. The defaults are the last 60
// intervals by minute, the current (partial) minute included.
func (s *Server) parseStatsRange(c echo.Context) (statsRange, error) {
	var fe fieldErrors
	r := statsRange{interval: linkforge.Minute}
	if v := c.QueryParam("interval"); v != "" {
		r.interval = linkforge.Interval(v)
		if !r.interval.Valid() {
			fe.add("interval", "must be minute, hour or day")
			r.interval = linkforge.Minute
		}
	}
	width := r.interval.Duration()
	parse := func(name string) (time.Time, bool) {
		v := c.QueryParam(name)
		if v == "" {
			return time.Time{}, false
		}
		t, err := time.Parse(time.RFC3339Nano, v)
		if err != nil {
			fe.add(name, "must be an RFC 3339 timestamp, such as 2026-12-01T00:00:00Z")
			return time.Time{}, false
		}
		return t.UTC(), true
	}
	to, hasTo := parse("to")
	from, hasFrom := parse("from")
	if err := linkforge.InvalidFields(fe); err != nil {
		return statsRange{}, err
	}
	if !hasTo {
		// The end of the current interval, so the default window holds
		// whole buckets and ends with the one being counted now.
		to = s.now().UTC().Truncate(width).Add(width)
	}
	if !hasFrom {
		from = to.Add(-defaultStatsBuckets * width)
	}
	r.from, r.to = from.Truncate(width), to
	if !r.from.Before(r.to) {
		if !hasTo {
			return statsRange{}, linkforge.InvalidField("from", "must be before to (default: the end of the current interval)")
		}
		return statsRange{}, linkforge.InvalidField("to", "must be after from")
	}
	// Sub saturates at about 292 years, which still counts as too many.
	span := r.to.Sub(r.from)
	n := int64(span / width)
	if span%width != 0 {
		n++
	}
	if n > maxBuckets {
		return statsRange{}, linkforge.InvalidField("from", fmt.Sprintf(
			"the range from %s to %s holds more than %d %s buckets; narrow it or use a wider interval",
			r.from.Format(time.RFC3339), r.to.Format(time.RFC3339), maxBuckets, r.interval))
	}
	r.n = int(n)
	return r, nil
}

// dense returns one bucket per interval of r, zero where st has none.
func (r statsRange) dense(st linkforge.Stats) []bucketJSON {
	width := r.interval.Duration()
	out := make([]bucketJSON, r.n)
	for i := range out {
		out[i].Start = r.from.Add(time.Duration(i) * width)
	}
	for _, b := range st.Buckets {
		i := int(b.Start.Sub(r.from) / width)
		if b.Start.Before(r.from) || i >= len(out) {
			continue // outside the range the store was asked for
		}
		out[i].Count += b.Count
		out[i].Human += b.Human
		out[i].Automated += b.Automated
	}
	return out
}

func (s *Server) linkStats(c echo.Context) error {
	r, err := s.parseStatsRange(c)
	if err != nil {
		return err
	}
	tenant := tenantID(c)
	// Another tenant's slug is ENotFound here, before any stats are read.
	l, err := s.addressedLink(c)
	if err != nil {
		return fmt.Errorf("link stats: %w", err)
	}
	return s.stats(c, r, linkforge.StatsQuery{TenantID: tenant, LinkID: l.ID}, l.ImportedClicks)
}

func (s *Server) tenantStats(c echo.Context) error {
	r, err := s.parseStatsRange(c)
	if err != nil {
		return err
	}
	var imported int64
	if is, ok := s.store.(linkforge.ImportedClickStore); ok {
		if imported, err = is.TenantImportedClicks(c.Request().Context(), tenantID(c)); err != nil {
			return fmt.Errorf("tenant stats: %w", err)
		}
	}
	return s.stats(c, r, linkforge.StatsQuery{TenantID: tenantID(c)}, imported)
}

// stats answers q; imported is the scope's imported clicks, which the
// all-time total includes (the link's clicks, the export's clicks column
// and the dashboard's totals do too) but no bucket holds.
func (s *Server) stats(c echo.Context, r statsRange, q linkforge.StatsQuery, imported int64) error {
	q.From, q.To, q.Interval = r.from, r.to, r.interval
	st, err := s.store.Stats(c.Request().Context(), q)
	if err != nil {
		return fmt.Errorf("stats: %w", err)
	}
	buckets := r.dense(st)
	if err := s.estimateUniques(c.Request().Context(), r, q, buckets); err != nil {
		return fmt.Errorf("stats: %w", err)
	}
	return c.JSON(http.StatusOK, statsJSON{
		Total:     st.Total + imported,
		Imported:  imported,
		Interval:  string(r.interval),
		From:      r.from,
		To:        r.to,
		Buckets:   buckets,
		Human:     st.Human,
		Automated: st.Automated,
	})
}

// estimateUniques sets the unique visitors of day buckets: per day, the
// estimate of the union of every node's sketch of the link (of every link
// of the tenant, for the tenant's stats: a visitor of two links that day
// counts once). A range of days is never merged into one figure: a visitor
// is only "the same" within a UTC day, so several days are the sum of the
// daily uniques (docs/adr/024-visitor-hash.md).
func (s *Server) estimateUniques(ctx context.Context, r statsRange, q linkforge.StatsQuery, buckets []bucketJSON) error {
	us, ok := s.store.(linkforge.UniqueStore)
	if r.interval != linkforge.Day || !ok {
		return nil
	}
	rows, err := us.DailyUniques(ctx, q.TenantID, q.LinkID, r.from, r.to)
	if err != nil {
		return err
	}
	byDay := make(map[int64][][]byte)
	for _, u := range rows {
		byDay[u.Day.Unix()] = append(byDay[u.Day.Unix()], u.Sketch)
	}
	for i := range buckets {
		n, err := visitor.UnionEstimate(byDay[buckets[i].Start.Unix()])
		if err != nil {
			return err
		}
		buckets[i].Unique = &n
	}
	return nil
}
