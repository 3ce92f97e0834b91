package web

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/password"
)

// Shared stats (docs/analytics.md, "Shared stats"): an editor makes a
// link's or a tag's stats readable by anyone holding an unguessable URL,
// /share/{token} on the public host, optionally with a password and an
// expiry. The API names a share by its id, the token's first characters:
// the store keeps only the token's hash, so the full URL is shown once,
// when made. The page is server-rendered (no script, as every visitor
// page), from the store reads of the stats and breakdown routes.
const (
	pathLinkShares = pathLink + "/shares"
	pathLinkShare  = pathLinkShares + "/:id"
	pathTagShares  = pathTag + "/shares"
	pathTagShare   = pathTagShares + "/:id"
	// pathSharePage has two segments: no slug ("share" is reserved too)
	// can reach it.
	sharePrefix   = "/share/"
	pathSharePage = sharePrefix + ":token"
)

// Limits of the share pages per client address: views, and password
// guesses per share (as the link password form's).
const (
	shareViewsPerClient = 30
	shareViewsWindow    = time.Minute
)

// shareJSON is a share in the API: URL only in the create's answer.
type shareJSON struct {
	ID          string     `json:"id"`
	URL         string     `json:"url,omitempty"`
	Slug        string     `json:"slug,omitempty"`
	Tag         string     `json:"tag,omitempty"`
	ExpiresAt   *time.Time `json:"expires_at"`
	HasPassword bool       `json:"has_password"`
	CreatedAt   time.Time  `json:"created_at"`
}

func toShareJSON(sh linkforge.Share) shareJSON {
	return shareJSON{ID: sh.Prefix, Slug: sh.Slug, Tag: sh.Tag, ExpiresAt: sh.ExpiresAt,
		HasPassword: sh.PasswordHash != "", CreatedAt: sh.CreatedAt}
}

// sharesRouteTable registers the share API and the share page.
func (s *Server) sharesRouteTable(r *router) {
	api, withBody := r.api, r.withBody
	r.add(http.MethodPost, pathLinkShares, true, s.createShare, withBody(http.MethodPost, pathLinkShares)...)
	r.add(http.MethodGet, pathLinkShares, false, s.listShares, api(http.MethodGet, pathLinkShares)...)
	r.add(http.MethodDelete, pathLinkShare, false, s.deleteShare, api(http.MethodDelete, pathLinkShare)...)
	r.add(http.MethodPost, pathTagShares, true, s.createShare, withBody(http.MethodPost, pathTagShares)...)
	r.add(http.MethodGet, pathTagShares, false, s.listShares, api(http.MethodGet, pathTagShares)...)
	r.add(http.MethodDelete, pathTagShare, false, s.deleteShare, api(http.MethodDelete, pathTagShare)...)
	r.getHead(pathSharePage, s.sharePage)
	// The page's password form: a small form body, read within its limit.
	r.add(http.MethodPost, pathSharePage, true, s.sharePage)
}

// shareSubject is the link or the tag a share route addresses: the link
// (ID 0 for a tag) or the tag, which some link of the tenant must carry.
func (s *Server) shareSubject(c echo.Context) (linkforge.Link, string, error) {
	if c.Param("slug") != "" {
		l, err := s.addressedLink(c)
		return l, "", err
	}
	tag, err := tagParam(c)
	if err != nil {
		return linkforge.Link{}, "", err
	}
	counts, err := s.store.TagCounts(c.Request().Context(), tenantID(c))
	if err != nil {
		return linkforge.Link{}, "", err
	}
	for _, tc := range counts {
		if tc.Tag == tag {
			return linkforge.Link{}, tag, nil
		}
	}
	return linkforge.Link{}, "", linkforge.Errorf(linkforge.ENotFound, "no link carries the tag %q", truncate(tag, 64))
}

// createShare answers POST .../shares {"expires_at","password"}: 201 with
// the share and its URL, which is never shown again.
func (s *Server) createShare(c echo.Context) error {
	l, tag, err := s.shareSubject(c)
	if err != nil {
		return fmt.Errorf("create share: %w", err)
	}
	members, err := readObject(c.Request().Body)
	if err != nil {
		return err
	}
	var (
		fe fieldErrors
		pw string
		sh = linkforge.Share{TenantID: tenantID(c), LinkID: l.ID, Slug: l.Slug, Tag: tag}
	)
	for _, m := range members {
		switch m.name {
		case "expires_at":
			if isNull(m.value) {
				continue
			}
			if t, ok := fe.time(m); ok {
				if !t.After(s.now()) {
					fe.add("expires_at", "must be in the future")
				}
				sh.ExpiresAt = t
			}
		case "password":
			if !isNull(m.value) {
				pw, _ = fe.password(m)
			}
		default:
			fe.add(fieldName(m.name), `unknown field; the body is {"expires_at","password"}`)
		}
	}
	if err := linkforge.InvalidFields(fe); err != nil {
		return err
	}
	ctx := c.Request().Context()
	if pw != "" {
		if sh.PasswordHash, err = s.hashPassword(ctx, pw); err != nil {
			return fmt.Errorf("create share: %w", err)
		}
	}
	token, prefix, hash := linkforge.NewShareToken()
	sh.Prefix, sh.Hash = prefix, hash
	if sh, err = s.store.CreateShare(ctx, sh); err != nil {
		return fmt.Errorf("create share: %w", err)
	}
	out := toShareJSON(sh)
	out.URL = s.shortBase + sharePrefix + token
	return c.JSON(http.StatusCreated, out)
}

// listShares answers GET .../shares: the shares, oldest first, by id.
func (s *Server) listShares(c echo.Context) error {
	l, tag, err := s.shareSubject(c)
	if err != nil {
		return fmt.Errorf("list shares: %w", err)
	}
	shares, err := s.store.ListShares(c.Request().Context(), tenantID(c), l.ID, tag)
	if err != nil {
		return fmt.Errorf("list shares: %w", err)
	}
	out := make([]shareJSON, len(shares))
	for i, sh := range shares {
		out[i] = toShareJSON(sh)
	}
	return c.JSON(http.StatusOK, map[string][]shareJSON{"shares": out})
}

// deleteShare answers DELETE .../shares/{id}: the page answers 404 from
// then on.
func (s *Server) deleteShare(c echo.Context) error {
	l, tag, err := s.shareSubject(c)
	if err != nil {
		return fmt.Errorf("delete share: %w", err)
	}
	if err := s.store.DeleteShare(c.Request().Context(), tenantID(c), l.ID, l.Slug, tag, c.Param("id")); err != nil {
		return fmt.Errorf("delete share: %w", err)
	}
	return c.NoContent(http.StatusNoContent)
}

// shareStats is what a share page shows: the all-time totals and the
// range's days and breakdowns, summed over the share's links.
type shareStats struct {
	total, human, automated, imported int64
	// links is how many links were summed; more, that the tag has more
	// than maxShareLinks.
	links int
	more  bool
	r     statsRange
	days  []bucketJSON
	dims  []shareDim
}

// shareDim is one breakdown of the page.
type shareDim struct {
	title string
	b     linkforge.Breakdown
}

// maxShareLinks bounds the links a tag's page sums (each is one stats
// query and one per breakdown).
const maxShareLinks = 500

// shareDimensions are the breakdowns a share page shows.
var shareDimensions = []struct {
	d     linkforge.Dimension
	title string
}{
	{linkforge.DimCountry, "Countries"},
	{linkforge.DimReferrer, "Referrers"},
	{linkforge.DimDevice, "Devices"},
	{linkforge.DimBrowser, "Browsers"},
}

// shareTopValues is how many values each breakdown lists.
const shareTopValues = 8

// collectShareStats reads the stats of the share's links over the last
// days UTC days: the same store reads as the stats and breakdown routes
// (Stats, Breakdown), once per link and summed.
func (s *Server) collectShareStats(ctx context.Context, sh linkforge.Share, days int) (shareStats, error) {
	var links []linkforge.Link
	out := shareStats{}
	if sh.LinkID != 0 {
		l, err := s.store.TenantLink(ctx, sh.TenantID, sh.DomainID, sh.Slug)
		if err != nil {
			return out, err
		}
		links = []linkforge.Link{l}
	} else {
		page, err := s.store.QueryLinks(ctx, linkforge.ListQuery{TenantID: sh.TenantID, Tags: []string{sh.Tag},
			Archived: linkforge.ArchivedAll, Limit: maxShareLinks})
		if err != nil {
			return out, err
		}
		links, out.more = page.Links, page.NextCursor != ""
	}
	out.links = len(links)
	to := s.now().UTC().Truncate(24 * time.Hour).Add(24 * time.Hour)
	out.r = statsRange{from: to.AddDate(0, 0, -days), to: to, interval: linkforge.Day, n: days}
	out.days = out.r.dense(linkforge.Stats{})
	merged := make([]map[string]int64, len(shareDimensions))
	totals := make([]int64, len(shareDimensions))
	for i := range merged {
		merged[i] = map[string]int64{}
	}
	limit := shareTopValues
	if len(links) > 1 {
		limit = linkforge.MaxAnalyticsLimit
	}
	for _, l := range links {
		st, err := s.store.Stats(ctx, linkforge.StatsQuery{TenantID: sh.TenantID, LinkID: l.ID,
			From: out.r.from, To: out.r.to, Interval: linkforge.Day})
		if err != nil {
			return out, err
		}
		out.total += st.Total + l.ImportedClicks
		out.imported += l.ImportedClicks
		out.human += st.Human
		out.automated += st.Automated
		for i, b := range out.r.dense(st) {
			out.days[i].Count += b.Count
			out.days[i].Human += b.Human
			out.days[i].Automated += b.Automated
		}
		for i, d := range shareDimensions {
			b, err := s.store.Breakdown(ctx, linkforge.BreakdownQuery{TenantID: sh.TenantID, LinkID: l.ID,
				Dimension: d.d, From: out.r.from, To: out.r.to, Limit: limit})
			if err != nil {
				return out, err
			}
			totals[i] += b.Total
			for _, v := range b.Values {
				merged[i][v.Value] += v.Count
			}
		}
	}
	for i, d := range shareDimensions {
		out.dims = append(out.dims, shareDim{title: d.title, b: topValues(merged[i], totals[i], shareTopValues)})
	}
	return out, nil
}

// topValues is the Breakdown of the n largest of counts (ties by value),
// Rest what they leave of total.
func topValues(counts map[string]int64, total int64, n int) linkforge.Breakdown {
	b := linkforge.Breakdown{Total: total, Values: make([]linkforge.ValueCount, 0, len(counts))}
	for v, c := range counts {
		b.Values = append(b.Values, linkforge.ValueCount{Value: v, Count: c})
	}
	sortValues(b.Values)
	if len(b.Values) > n {
		b.Values = b.Values[:n]
	}
	b.Rest = total
	for _, v := range b.Values {
		b.Rest -= v.Count
	}
	return b
}

// sharePage answers GET (and the password form's POST) /share/{token}:
// the read-only stats page, never counted as a click, never indexed,
// limited per client address. An unknown token is 404, an expired share
// 410; a share with a password asks for it.
func (s *Server) sharePage(c echo.Context) error {
	req := c.Request()
	now := s.now()
	addr := s.redirects.ClientAddr(req)
	if wait, ok := s.limits.shareViews.Begin(password.KeyFor(0, addr), now); !ok {
		c.Response().Header().Set("Retry-After", fmt.Sprint(int64((wait+time.Second-1)/time.Second)))
		return writeSharePage(c, http.StatusTooManyRequests, "Too many requests",
			`<p>Too many requests from this address. Please try again in a minute.</p>`)
	}
	ctx := req.Context()
	sh, err := s.store.ShareByHash(ctx, linkforge.ShareHash(c.Param("token")))
	if linkforge.ErrorCode(err) == linkforge.ENotFound {
		return writeSharePage(c, http.StatusNotFound, "Stats not found",
			`<p>This stats page does not exist, or its owner removed it.</p>`)
	}
	if err != nil {
		return fmt.Errorf("share page: %w", err)
	}
	if sh.Expired(now) {
		return writeSharePage(c, http.StatusGone, "Stats page expired",
			`<p>This stats page has expired. Ask its owner for a new link.</p>`)
	}
	days := shareDays(c)
	if sh.PasswordHash != "" {
		if ok, err := s.shareUnlocked(c, sh, addr, now); err != nil || !ok {
			return err
		}
	}
	st, err := s.collectShareStats(ctx, sh, days)
	if err != nil {
		return fmt.Errorf("share page: %w", err)
	}
	pw := ""
	if sh.PasswordHash != "" {
		pw = req.PostForm.Get("password")
	}
	return writeSharePage(c, http.StatusOK, shareTitle(sh), renderShareStats(sh, st, days, pw))
}

// shareDays is the page's range in days: 7, 30 (the default) or 90.
func shareDays(c echo.Context) int {
	v := c.QueryParam("days")
	if c.Request().Method == http.MethodPost {
		v = c.Request().PostForm.Get("days")
	}
	switch v {
	case "7":
		return 7
	case "90":
		return 90
	}
	return 30
}

// shareUnlocked checks the password of a protected share: a GET, or a
// wrong password, answers the form (401) and false. Guesses are limited
// per share and client address, as a link's password form's.
func (s *Server) shareUnlocked(c echo.Context, sh linkforge.Share, addr netipAddr, now time.Time) (bool, error) {
	req := c.Request()
	if req.Method != http.MethodPost {
		return false, writeShareForm(c, http.StatusUnauthorized, shareDays(c), "")
	}
	if err := readShareForm(c); err != nil {
		return false, err
	}
	days := shareDays(c)
	key := password.KeyFor(sh.ID, addr)
	if wait, ok := s.limits.shareGuesses.Begin(key, now); !ok {
		c.Response().Header().Set("Retry-After", fmt.Sprint(int64((wait+time.Second-1)/time.Second)))
		return false, writeShareForm(c, http.StatusTooManyRequests, days, "Too many wrong passwords. Please try again in a minute.")
	}
	var (
		match bool
		verr  error
	)
	if err := s.withPasswordSlot(req.Context(), password.KindVerify, func() {
		match, verr = password.Verify(sh.PasswordHash, req.PostForm.Get("password"))
	}); err != nil {
		return false, fmt.Errorf("share password: %w", err)
	}
	if verr != nil {
		return false, fmt.Errorf("share password: %w", verr)
	}
	if !match {
		return false, writeShareForm(c, http.StatusUnauthorized, days, "Wrong password.")
	}
	s.limits.shareGuesses.Succeeded(key, now)
	return true, nil
}
