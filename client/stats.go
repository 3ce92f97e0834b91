package client

import (
	"context"
	"net/http"
	"net/url"
	"time"
)

// StatsOptions select the buckets of a time series; zero values are the
// server's defaults (the last 60 minutes by minute).
type StatsOptions struct {
	From, To time.Time
	Interval string // "minute", "hour" or "day"
}

func (o StatsOptions) query() url.Values {
	q := url.Values{}
	timeParam(q, "from", o.From)
	timeParam(q, "to", o.To)
	strParam(q, "interval", o.Interval)
	return q
}

// Stats is a click time series. Total counts all time, not only the
// buckets, the imported clicks included.
type Stats struct {
	Total    int64     `json:"total"`
	Interval string    `json:"interval"`
	From     time.Time `json:"from"`
	To       time.Time `json:"to"`
	Buckets  []Bucket  `json:"buckets"`
	// Human, Automated and Imported divide Total: Total = Human +
	// Automated + Imported, the clicks imports brought (in no bucket).
	Human     int64 `json:"human"`
	Automated int64 `json:"automated"`
	Imported  int64 `json:"imported"`
}

// Bucket is the clicks of one interval starting at Start.
type Bucket struct {
	Start time.Time `json:"start"`
	Count int64     `json:"count"`
	// Human and Automated divide Count.
	Human     int64 `json:"human"`
	Automated int64 `json:"automated"`
}

// LinkStats returns a link's clicks over time (GET
// /api/v1/links/{slug}/stats).
func (c *Client) LinkStats(ctx context.Context, slug string, o StatsOptions) (Stats, error) {
	var out Stats
	err := c.call(ctx, request{method: http.MethodGet, path: "/api/v1/links/" + seg(slug) + "/stats", query: o.query(), want: http.StatusOK}, &out)
	return out, err
}

// TenantStats returns the clicks of all the tenant's links over time (GET
// /api/v1/stats).
func (c *Client) TenantStats(ctx context.Context, o StatsOptions) (Stats, error) {
	var out Stats
	err := c.call(ctx, request{method: http.MethodGet, path: "/api/v1/stats", query: o.query(), want: http.StatusOK}, &out)
	return out, err
}

// Dimensions of the breakdowns (docs/api.md, "Stats and breakdowns").
const (
	DimCountry   = "country"
	DimReferrer  = "referrer"
	DimDevice    = "device"
	DimBrowser   = "browser"
	DimOS        = "os"
	DimUTMSource = "utm_source"
	DimVariant   = "variant" // the A/B variant: "0", "1", ... in the link's order, or "none"
	DimTraffic   = "traffic" // human or automated
	DimSource    = "source"  // "qr" (a scan of the link's QR code) or "link"
)

// RangeOptions select the hours of a breakdown or of the top links; zero
// values are the server's defaults (the last 24 hours, 10 values).
type RangeOptions struct {
	From, To time.Time
	Limit    int // at most 100
}

func (o RangeOptions) query() url.Values {
	q := url.Values{}
	timeParam(q, "from", o.From)
	timeParam(q, "to", o.To)
	intParam(q, "limit", o.Limit)
	return q
}

// Breakdown is the clicks of a range by one dimension's values, by count
// descending. The counts of Values plus Rest always sum to Total.
type Breakdown struct {
	Dimension string       `json:"dimension"`
	From      time.Time    `json:"from"`
	To        time.Time    `json:"to"`
	Total     int64        `json:"total"`
	Values    []ValueCount `json:"values"`
	Rest      int64        `json:"rest"`
}

// ValueCount is one value of a dimension and its clicks.
type ValueCount struct {
	Value string `json:"value"`
	Count int64  `json:"count"`
}

// LinkBreakdown returns a link's clicks by dimension (GET
// /api/v1/links/{slug}/stats/{dimension}).
func (c *Client) LinkBreakdown(ctx context.Context, slug, dimension string, o RangeOptions) (Breakdown, error) {
	var out Breakdown
	err := c.call(ctx, request{method: http.MethodGet, path: "/api/v1/links/" + seg(slug) + "/stats/" + seg(dimension), query: o.query(), want: http.StatusOK}, &out)
	return out, err
}

// TenantBreakdown returns the tenant's clicks by dimension (GET
// /api/v1/stats/{dimension}).
func (c *Client) TenantBreakdown(ctx context.Context, dimension string, o RangeOptions) (Breakdown, error) {
	var out Breakdown
	err := c.call(ctx, request{method: http.MethodGet, path: "/api/v1/stats/" + seg(dimension), query: o.query(), want: http.StatusOK}, &out)
	return out, err
}

// TopLinks is the tenant's most clicked links of a range.
type TopLinks struct {
	Links []SlugCount `json:"links"`
	Total int64       `json:"total"`
}

// SlugCount is one link's clicks in a range. One slug can be listed once
// per domain: Domain and ShortURL (as the link's body says them) tell
// those apart.
type SlugCount struct {
	Slug     string `json:"slug"`
	Domain   string `json:"domain"`
	ShortURL string `json:"short_url"`
	Count    int64  `json:"count"`
}

// TopLinks returns the links with the most clicks in the range (GET
// /api/v1/stats/links).
func (c *Client) TopLinks(ctx context.Context, o RangeOptions) (TopLinks, error) {
	var out TopLinks
	err := c.call(ctx, request{method: http.MethodGet, path: "/api/v1/stats/links", query: o.query(), want: http.StatusOK}, &out)
	return out, err
}
