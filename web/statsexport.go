package web

import (
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/linkforge/linkforge"
)

const (
	pathStatsExport = pathStats + "/export"
	// statsExportPage is how many rows one read of the export takes: the
	// memory an export holds, whatever its size.
	statsExportPage = 1000
	// defaultExportDays is the range of an export without from.
	defaultExportDays = 30
)

// statsExport streams the tenant's daily counts as CSV
// (day,domain,slug,dimension,value,count), one page of rows at a time, so
// that its memory does not grow with the tenant. from and to are rounded
// down to the UTC day; the default is the last 30 days, today included.
// traffic=human|automated keeps one traffic's clicks. domain is the host
// of the link's domain: the public URL's, or one of the tenant's own.
func (s *Server) statsExport(c echo.Context) error {
	from, to, traffic, err := s.parseExportRange(c)
	if err != nil {
		return err
	}
	var names []string
	for d := linkforge.Dimension(0); d.Public(); d++ {
		names = append(names, d.String())
	}
	ex, ok := s.store.(linkforge.DailyDimsExporter)
	if !ok {
		return &linkforge.Error{Code: linkforge.EInternal, Message: "stats export: the store cannot export"}
	}
	w := c.Response()
	rc := http.NewResponseController(w)
	h := w.Header()
	h.Set("Cache-Control", "no-store")
	h.Set(echo.HeaderContentType, "text/csv; charset=utf-8")
	h.Set("Content-Disposition", `attachment; filename="linkforge-stats.csv"`)
	ctx := c.Request().Context()
	cw := csv.NewWriter(w)
	err = cw.Write([]string{"day", "domain", "slug", "dimension", "value", "count"})
	var after *linkforge.DailyDimRow
	for err == nil {
		var page []linkforge.DailyDimRow
		if page, err = ex.ExportDailyDims(ctx, tenantID(c), from, to, names, traffic, after, statsExportPage); err != nil || len(page) == 0 {
			break
		}
		for _, r := range page {
			if err = cw.Write([]string{r.Day.Format(time.DateOnly), s.linkBase(linkforge.Link{DomainID: r.DomainID}).Host, r.Slug, r.Dimension,
				r.Value, strconv.FormatInt(r.Count, 10)}); err != nil {
				break
			}
		}
		after = &page[len(page)-1]
		cw.Flush()
		if err == nil {
			err = cw.Error()
		}
		_ = rc.SetWriteDeadline(time.Now().Add(exportIdle))
		_ = rc.Flush()
	}
	if err == nil {
		cw.Flush()
		err = cw.Error()
	}
	if err == nil {
		return nil
	}
	if !w.Committed {
		return fmt.Errorf("stats export: %w", err)
	}
	// Part of the file is sent: cut the connection so that the client
	// sees an incomplete body rather than a CSV that looks whole.
	if !errors.Is(err, context.Canceled) {
		s.logger.Error("stats export failed after the answer began", "error", err, "tenant_id", tenantID(c))
	}
	panic(http.ErrAbortHandler)
}

// parseExportRange reads from, to (RFC 3339, rounded down to the UTC day)
// and traffic.
func (s *Server) parseExportRange(c echo.Context) (from, to time.Time, traffic string, err error) {
	const day = 24 * time.Hour
	var fe fieldErrors
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
		return t.UTC().Truncate(day), true
	}
	from, hasFrom := parse("from")
	to, hasTo := parse("to")
	traffic = c.QueryParam("traffic")
	if linkforge.CheckTraffic(traffic) != nil {
		fe.add("traffic", "must be human or automated")
	}
	if err := linkforge.InvalidFields(fe); err != nil {
		return time.Time{}, time.Time{}, "", err
	}
	if !hasTo {
		to = s.now().UTC().Truncate(day).Add(day)
	}
	if !hasFrom {
		from = to.Add(-defaultExportDays * day)
	}
	if !from.Before(to) {
		return time.Time{}, time.Time{}, "", linkforge.InvalidField("to", "must be after from; both are rounded down to the day")
	}
	return from, to, traffic, nil
}
