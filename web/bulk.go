package web

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/links"
)

// Bounds of POST /api/v1/bulk/links.
const (
	maxBulkLinks = 1000
	// maxBulkBodyBytes admits 1,000 links of about 10 KiB each (a link
	// with long url, fallback_url and device URLs); the single-link
	// routes keep maxBodyBytes.
	maxBulkBodyBytes = 10 << 20
)

// bulkResult is one element of the answer's results: the status a single
// create would have got, with the link (201) or the problem.
type bulkResult struct {
	Status  int       `json:"status"`
	Link    *linkJSON `json:"link,omitempty"`
	Problem *problem  `json:"problem,omitempty"`
}

// createLinks answers POST /api/v1/bulk/links: each link of {"links":[...]}
// is answered, in order, with the status POST /api/v1/links would give
// it. Items are decoded and validated here; the valid ones are created by
// links.Service.CreateMany, where a taken slug (by anyone, or by an
// earlier item of the batch) answers 409 and does not stop the others.
func (s *Server) createLinks(c echo.Context) error {
	raws, err := decodeBulk(c)
	if err != nil {
		return err
	}
	tenant := tenantID(c)
	results := make([]bulkResult, len(raws))
	var (
		batch []links.NewLink
		at    []int // batch[k] is the body's link at[k]
	)
	self := s.cache.LoopHosts(c.Request().Context())
	schemes, err := s.store.TargetSchemes(c.Request().Context(), tenant)
	if err != nil {
		return fmt.Errorf("bulk create: %w", err)
	}
	for i, raw := range raws {
		nl, err := decodeCreateLinkFor(bytes.NewReader(raw), self, schemes)
		if err != nil {
			results[i] = s.bulkError(c, err)
			continue
		}
		nl.link.TenantID = tenant
		t, err := s.domains.Resolve(c.Request().Context(), tenant, "domain", nl.domain, true)
		if err != nil {
			results[i] = s.bulkError(c, err)
			continue
		}
		nl.link.DomainID = t.ID
		if nl.findIfExists {
			found, ok, err := s.findLink(c.Request().Context(), nl)
			if err != nil {
				return err
			}
			if ok {
				j := s.linkJSON(found)
				results[i] = bulkResult{Status: http.StatusOK, Link: &j}
				continue
			}
		}
		batch = append(batch, links.NewLink{Link: nl.link, Password: nl.password})
		at = append(at, i)
	}
	created, err := s.links.CreateMany(c.Request().Context(), batch, func() { s.extendWriteDeadline(c) })
	if err != nil {
		return err
	}
	var (
		lastErr    error
		lastResult bulkResult
	)
	for k, r := range created {
		switch {
		case r.Err == nil:
			j := s.linkJSON(r.Link)
			results[at[k]] = bulkResult{Status: http.StatusCreated, Link: &j}
		case r.Err == lastErr: //nolint:errorlint // the same value, not an equal one
			// A failed chunk's links share one error value: one answer,
			// and one log record, for the chunk. (The service's errors
			// are pointers: comparable.)
			results[at[k]] = lastResult
		default:
			lastErr, lastResult = r.Err, s.bulkError(c, r.Err)
			results[at[k]] = lastResult
		}
	}
	return c.JSON(http.StatusOK, map[string][]bulkResult{"results": results})
}

// decodeBulk reads {"links":[...]}: exactly that member, an array of 1 to
// maxBulkLinks elements, each left raw for decodeCreateLink.
func decodeBulk(c echo.Context) ([]json.RawMessage, error) {
	members, err := readObject(c.Request().Body)
	if err != nil {
		if linkforge.ErrorCode(err) == linkforge.ETooLarge {
			return nil, linkforge.Errorf(linkforge.ETooLarge, "request body exceeds %d MiB", maxBulkBodyBytes>>20)
		}
		return nil, err
	}
	var (
		raws []json.RawMessage
		fe   fieldErrors
		has  bool
	)
	for _, m := range members {
		if m.name != "links" {
			fe.add(fieldName(m.name), "unknown field; the body is {\"links\":[...]}")
			continue
		}
		has = true
		if err := json.Unmarshal(m.value, &raws); err != nil || isNull(m.value) {
			fe.add("links", "must be an array of link objects")
			continue
		}
		if len(raws) == 0 || len(raws) > maxBulkLinks {
			fe.add("links", fmt.Sprintf("must hold 1 to %d links, not %d", maxBulkLinks, len(raws)))
		}
	}
	if !has {
		fe.add("links", "is required")
	}
	if err := linkforge.InvalidFields(fe); err != nil {
		return nil, err
	}
	return raws, nil
}

// extendWriteDeadline gives the answer of a long request the server's
// whole write timeout again, from now. The http.Server's WriteTimeout
// counts from the end of the request's headers, and cuts the connection
// of a handler still working when it passes, even one about to answer.
// Called as the work progresses, it keeps a request that makes progress
// answered, while one that stalls, or a client that does not read the
// answer, is still cut. Wall-clock time, as the connection's deadline is.
func (s *Server) extendWriteDeadline(c echo.Context) {
	if s.writeTimeout <= 0 {
		return
	}
	// Not supported only by writers that are no connection (tests'
	// recorders): nothing to extend there.
	_ = http.NewResponseController(c.Response()).SetWriteDeadline(time.Now().Add(s.writeTimeout))
}

// bulkError returns the result of an item that failed with err: the
// problem writeError would send for it alone.
func (s *Server) bulkError(c echo.Context, err error) bulkResult {
	p := problem{Type: "about:blank", Status: http.StatusInternalServerError, Code: linkforge.EInternal, Detail: "internal error"}
	var ae *linkforge.Error
	if errors.As(err, &ae) {
		p.Status, p.Code, p.Detail, p.Errors = statusOf(ae.Code), ae.Code, ae.Message, ae.Fields
		if len(p.Errors) > maxFieldErrors {
			p.Errors, p.Detail = capFieldErrors(p.Errors)
		}
	}
	if p.Status == http.StatusInternalServerError {
		s.logInternal(c, err)
		p.Code, p.Detail = linkforge.EInternal, "internal error"
	}
	p.Title = http.StatusText(p.Status)
	return bulkResult{Status: p.Status, Problem: &p}
}

// limitBulkBody is limitBody with the bulk route's larger bound.
func limitBulkBody(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		req := c.Request()
		if req.ContentLength > maxBulkBodyBytes {
			return linkforge.Errorf(linkforge.ETooLarge, "request body exceeds %d MiB", maxBulkBodyBytes>>20)
		}
		req.Body = http.MaxBytesReader(c.Response().Writer, req.Body, maxBulkBodyBytes)
		return next(c)
	}
}
