package web

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/linkforge/linkforge"
)

// Bounds of POST /api/v1/bulk/links.
const (
	maxBulkLinks = 1000
	// bulkChunk is the number of links stored per transaction: a bad
	// item never rolls back the others (it is answered before the
	// store sees it, and a taken slug inserts nothing), and a chunk
	// keeps SQLite's single writer for tens of milliseconds, not the
	// whole request.
	bulkChunk = 250
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

// slugAttempts bounds the retries of a generated slug that collides.
const slugAttempts = 5

// bulkItem is one link of the body on its way to the store.
type bulkItem struct {
	index     int
	link      linkforge.Link
	password  string
	generated bool // the slug is the server's: regenerated on a collision
}

// createLinks answers POST /api/v1/bulk/links: each link of {"links":[...]}
// is answered, in order, with the status POST /api/v1/links would give
// it. Items are validated first; the valid ones are stored bulkChunk at a
// time, one transaction each, where a taken slug (by anyone, or by an
// earlier item of the batch) answers 409 and does not stop the others.
func (s *Server) createLinks(c echo.Context) error {
	ctx := c.Request().Context()
	raws, err := decodeBulk(c)
	if err != nil {
		return err
	}
	tenant := tenantID(c)
	results := make([]bulkResult, len(raws))
	var (
		items []bulkItem
		taken = make(map[string]bool, len(raws)) // the batch's explicit slugs
	)
	for i, raw := range raws {
		nl, err := decodeCreateLink(bytes.NewReader(raw), s.selfHosts)
		if err != nil {
			results[i] = s.bulkError(c, err)
			continue
		}
		it := bulkItem{index: i, link: nl.link, password: nl.password}
		it.link.TenantID = tenant
		if it.link.Slug != "" {
			if taken[it.link.Slug] {
				results[i] = s.bulkError(c, slugTaken(it.link.Slug, nil))
				continue
			}
			taken[it.link.Slug] = true
		}
		items = append(items, it)
	}
	for i := range items {
		if items[i].link.Slug == "" {
			items[i].generated = true
			items[i].link.Slug = newBatchSlug(taken)
		}
	}
	if err := s.hashBulkPasswords(c, items); err != nil {
		return err
	}

	var earliest *time.Time
	for start := 0; start < len(items); start += bulkChunk {
		pending := items[start:min(start+bulkChunk, len(items))]
		// A generated slug that collides gets a new one, as a single
		// create does, up to slugAttempts tries.
		for attempt := 1; len(pending) > 0; attempt++ {
			links := make([]linkforge.Link, len(pending))
			for k, it := range pending {
				links[k] = it.link
			}
			stored, err := s.store.CreateLinks(ctx, links)
			if err != nil {
				// The chunk's transaction rolled back: none of its
				// links exists. Earlier chunks are stored; the answer
				// tells which.
				// One answer (and one log record) for the chunk.
				failed := s.bulkError(c, fmt.Errorf("bulk create links: %d links: %w", len(links), err))
				for _, it := range pending {
					results[it.index] = failed
				}
				break
			}
			var retry []bulkItem
			for k, it := range pending {
				r := stored[k]
				switch {
				case r.Err == nil:
					j := s.linkJSON(r.Link)
					results[it.index] = bulkResult{Status: http.StatusCreated, Link: &j}
					s.invalidateEverywhere(r.Link.Slug)
					s.publishLink(linkforge.LinkCreated, r.Link)
					if e := r.Link.ExpiresAt; e != nil && (earliest == nil || e.Before(*earliest)) {
						earliest = e
					}
				case linkforge.ErrorCode(r.Err) == linkforge.EConflict && it.generated && attempt < slugAttempts:
					it.link.Slug = newBatchSlug(taken)
					retry = append(retry, it)
				case linkforge.ErrorCode(r.Err) == linkforge.EConflict && !it.generated:
					results[it.index] = s.bulkError(c, slugTaken(it.link.Slug, r.Err))
				default:
					results[it.index] = s.bulkError(c, fmt.Errorf("bulk create links: %w", r.Err))
				}
			}
			pending = retry
		}
		s.extendWriteDeadline(c)
	}
	// The scheduler only needs the earliest new due time: it re-reads
	// the others when it wakes.
	s.rescheduleAlarm(earliest)
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

// bulkHashWorkers is how many of one bulk request's passwords are hashed
// at once. The hash slots are shared by every request of every tenant and
// served in arrival order: a request that queued all of its (up to 1,000)
// hashes at once would make every create behind it wait for all of them.
// With two at a time, concurrent bulks and single creates take turns.
const bulkHashWorkers = 2

// hashBulkPasswords hashes the passwords of items, bulkHashWorkers at a
// time, each in a password slot. Every hash done gives the answer the
// server's write timeout again (extendWriteDeadline): a bulk of a thousand
// password links takes longer than that to hash, and its links would be
// stored with no answer to tell the client.
func (s *Server) hashBulkPasswords(c echo.Context, items []bulkItem) error {
	ctx := c.Request().Context()
	var todo []*bulkItem
	for i := range items {
		if items[i].password != "" {
			todo = append(todo, &items[i])
		}
	}
	var (
		wg     sync.WaitGroup
		next   atomic.Int64
		failed atomic.Bool
		mu     sync.Mutex
		werr   error
	)
	for range min(bulkHashWorkers, len(todo)) {
		wg.Go(func() {
			for !failed.Load() {
				i := int(next.Add(1)) - 1
				if i >= len(todo) {
					return
				}
				it := todo[i]
				h, err := s.hashPassword(ctx, it.password)
				it.password = ""
				if err != nil {
					failed.Store(true)
					mu.Lock()
					werr = errors.Join(werr, err)
					mu.Unlock()
					return
				}
				it.link.PasswordHash = h
				s.extendWriteDeadline(c)
			}
		})
	}
	wg.Wait()
	if werr != nil {
		// The request's context ended, or hashing is broken: either
		// way, no link of the batch is stored.
		return fmt.Errorf("bulk create links: hash passwords: %w", werr)
	}
	return nil
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

// newBatchSlug returns a generated slug that no explicit slug of the batch
// uses, and records it.
func newBatchSlug(taken map[string]bool) string {
	for {
		s := linkforge.NewSlug()
		if !taken[s] {
			taken[s] = true
			return s
		}
	}
}

// slugTaken is the error of a create whose slug is in use, as
// POST /api/v1/links answers it.
func slugTaken(slug string, cause error) error {
	return &linkforge.Error{
		Code:    linkforge.EConflict,
		Message: fmt.Sprintf("slug %q is already taken", slug),
		Fields:  []linkforge.FieldError{{Field: "slug", Detail: "is already taken"}},
		Err:     cause,
	}
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
