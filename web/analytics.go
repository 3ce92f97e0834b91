package web

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/linkforge/linkforge"
)

// Analytics API paths. Echo prefers a static segment to a parameter, so
// /stats/links is never taken for a dimension.
const (
	pathLinkBreakdown = pathLinkStats + "/:dimension"
	pathBreakdown     = pathStats + "/:dimension"
	pathTopLinks      = pathStats + "/links"
)

// breakdownJSON is the body of the two breakdown routes
// (GET /api/v1/links/{slug}/stats/{dimension}, GET /api/v1/stats/{dimension}).
type breakdownJSON struct {
	Dimension string      `json:"dimension"`
	From      time.Time   `json:"from"`
	To        time.Time   `json:"to"`
	Total     int64       `json:"total"`
	Values    []valueJSON `json:"values"`
	Rest      int64       `json:"rest"`
}

type valueJSON struct {
	Value string `json:"value"`
	Count int64  `json:"count"`
}

// topLinksJSON is the body of GET /api/v1/stats/links.
type topLinksJSON struct {
	Links []linkCountJSON `json:"links"`
	Total int64           `json:"total"`
}

// linkCountJSON is one ranked link: domain and short_url as its link body
// says them, since one slug can rank once per domain.
type linkCountJSON struct {
	Slug     string `json:"slug"`
	Domain   string `json:"domain"`
	ShortURL string `json:"short_url"`
	Count    int64  `json:"count"`
}

// defaultAnalyticsHours is the range of an analytics query without from:
// the last 24 hours, the current one included.
const defaultAnalyticsHours = 24

// analyticsRange is a parsed analytics query: the hours in [from, to).
type analyticsRange struct {
	from, to time.Time
	limit    int
	traffic  string // "", human or automated
}

// parseAnalyticsRange reads from, to and limit. The analytics counts are
// per hour, so from and to are rounded down to the start of their UTC hour
// (2026-12-01T10:30:00Z means 10:00); the default to is the end of the
// current hour, the default from 24 hours before to.
func (s *Server) parseAnalyticsRange(c echo.Context) (analyticsRange, error) {
	var fe fieldErrors
	r := analyticsRange{limit: linkforge.DefaultAnalyticsLimit}
	if v := c.QueryParam("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > linkforge.MaxAnalyticsLimit {
			fe.add("limit", fmt.Sprintf("must be an integer from 1 to %d", linkforge.MaxAnalyticsLimit))
		}
		r.limit = n
	}
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
		return t.UTC().Truncate(time.Hour), true
	}
	from, hasFrom := parse("from")
	to, hasTo := parse("to")
	r.traffic = c.QueryParam("traffic")
	if linkforge.CheckTraffic(r.traffic) != nil {
		fe.add("traffic", "must be human or automated")
	}
	if err := linkforge.InvalidFields(fe); err != nil {
		return analyticsRange{}, err
	}
	if !hasTo {
		to = s.now().UTC().Truncate(time.Hour).Add(time.Hour)
	}
	if !hasFrom {
		from = to.Add(-defaultAnalyticsHours * time.Hour)
	}
	if !from.Before(to) {
		if !hasTo {
			return analyticsRange{}, linkforge.InvalidField("from", "must be before to (default: the end of the current hour); both are rounded down to the hour")
		}
		return analyticsRange{}, linkforge.InvalidField("to", "must be after from; both are rounded down to the hour")
	}
	r.from, r.to = from, to
	return r, nil
}

// knownDimensions lists the dimension names for the problem of an unknown
// one.
var knownDimensions = func() string {
	var names []string
	for d := range linkforge.NumDimensions {
		if d.Public() {
			names = append(names, d.String())
		}
	}
	return strings.Join(names, ", ")
}()

// parseDimension reads the {dimension} path segment. An unknown one is a
// 404, as for any path that names no resource, with a problem that lists
// the dimensions there are.
func parseDimension(c echo.Context) (linkforge.Dimension, error) {
	name := c.Param("dimension")
	d, ok := linkforge.ParseDimension(name)
	if !ok || !d.Public() {
		detail := "no such dimension; known: " + knownDimensions
		return 0, &linkforge.Error{Code: linkforge.ENotFound,
			Message: fmt.Sprintf("no dimension %q; known: %s", truncate(name, 64), knownDimensions),
			Fields:  []linkforge.FieldError{{Field: "dimension", Detail: detail}}}
	}
	return d, nil
}

func (s *Server) linkBreakdown(c echo.Context) error {
	d, err := parseDimension(c)
	if err != nil {
		return err
	}
	r, err := s.parseAnalyticsRange(c)
	if err != nil {
		return err
	}
	// Another tenant's slug is ENotFound here, before any count is read.
	l, err := s.addressedLink(c)
	if err != nil {
		return fmt.Errorf("link breakdown: %w", err)
	}
	return s.breakdown(c, d, r, l.ID)
}

func (s *Server) tenantBreakdown(c echo.Context) error {
	d, err := parseDimension(c)
	if err != nil {
		return err
	}
	r, err := s.parseAnalyticsRange(c)
	if err != nil {
		return err
	}
	return s.breakdown(c, d, r, 0)
}

func (s *Server) breakdown(c echo.Context, d linkforge.Dimension, r analyticsRange, linkID int64) error {
	b, err := s.store.Breakdown(c.Request().Context(), linkforge.BreakdownQuery{
		TenantID: tenantID(c), LinkID: linkID, Dimension: d, From: r.from, To: r.to, Limit: r.limit,
		Traffic: r.traffic,
	})
	if err != nil {
		return fmt.Errorf("breakdown: %w", err)
	}
	out := breakdownJSON{
		Dimension: d.String(), From: r.from, To: r.to, Total: b.Total, Rest: b.Rest,
		Values: make([]valueJSON, len(b.Values)),
	}
	for i, v := range b.Values {
		out.Values[i] = valueJSON(v)
	}
	return c.JSON(http.StatusOK, out)
}

func (s *Server) topLinks(c echo.Context) error {
	r, err := s.parseAnalyticsRange(c)
	if err != nil {
		return err
	}
	top, err := s.store.TopLinks(c.Request().Context(), linkforge.TopLinksQuery{
		TenantID: tenantID(c), From: r.from, To: r.to, Limit: r.limit, Traffic: r.traffic,
	})
	if err != nil {
		return fmt.Errorf("top links: %w", err)
	}
	out := topLinksJSON{Total: top.Total, Links: make([]linkCountJSON, len(top.Links))}
	for i, l := range top.Links {
		base := s.linkBase(linkforge.Link{Slug: l.Slug, DomainID: l.DomainID})
		out.Links[i] = linkCountJSON{Slug: l.Slug, Domain: base.Host, ShortURL: base.URL + "/" + l.Slug, Count: l.Count}
	}
	return c.JSON(http.StatusOK, out)
}
