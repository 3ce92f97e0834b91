package web

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/labstack/echo/v4"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/internal/httpproblem"
	"github.com/linkforge/linkforge/linkcache"
	"github.com/linkforge/linkforge/password"
	"github.com/linkforge/linkforge/redirect"
	"github.com/linkforge/linkforge/webhook"
)

// Abuse reports (docs/operations.md, "Abuse reports"): anyone may report
// a short URL, by the form at /report or POST /api/v1/reports; nothing
// answered names a link's target, or even whether the slug exists. The
// operator lists them and resolves each (block the link, or dismiss).
const (
	pathReport                = "/report"
	pathReports               = apiPrefix + "/reports"
	pathOperatorReports       = pathOperator + "/reports"
	pathOperatorReportResolve = pathOperatorReports + "/:id/resolve"
)

// Limits of the reports one client address may send: a sliding window,
// as the password guesses' (package password's Limiter).
const (
	reportsPerClient = 5
	reportsWindow    = 10 * time.Minute
)

// ReportWebhook is the operator's receiver of report.created (a POST of
// {"type","timestamp","data"} signed as tenants' webhooks are, when Secret
// is set); a zero URL: none.
type ReportWebhook struct {
	URL    string
	Secret string // whsec_...; "": unsigned
}

// reportsRouteTable registers the public report routes and the operator's.
func (s *Server) reportsRouteTable(r *router, op func(method, path string) []echo.MiddlewareFunc) {
	r.getHead(pathReport, s.reportPage)
	r.add(http.MethodPost, pathReport, true, s.reportForm)
	r.add(http.MethodPost, pathReports, true, s.createReport, limitBody, requireJSON)
	r.add(http.MethodGet, pathOperatorReports, false, s.operatorReports, op(http.MethodGet, pathOperatorReports)...)
	r.add(http.MethodPost, pathOperatorReportResolve, true, s.resolveReport,
		append(op(http.MethodPost, pathOperatorReportResolve), limitBody, requireJSON)...)
}

// reportInput is a report as sent, by the form or the API.
type reportInput struct{ url, reason, email string }

// check validates in into a Report for the link its URL names (LinkID 0
// when none does); an URL that is not a short URL of this server is
// EInvalid naming url.
func (s *Server) checkReport(ctx context.Context, in reportInput) (linkforge.Report, error) {
	var fe fieldErrors
	in.url, in.reason, in.email = strings.TrimSpace(in.url), strings.TrimSpace(in.reason), strings.TrimSpace(in.email)
	rep := linkforge.Report{URL: in.url, Reason: in.reason, Email: in.email}
	u, err := url.Parse(in.url)
	switch {
	case in.url == "":
		fe.add("url", "is required: the short URL you report")
	case len(in.url) > linkforge.MaxReportURL:
		fe.add("url", fmt.Sprintf("at most %d characters", linkforge.MaxReportURL))
	case err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "":
		fe.add("url", "must be an absolute http(s) short URL of this service")
	}
	switch n := utf8.RuneCountInString(in.reason); {
	case n == 0:
		fe.add("reason", "is required: say what is wrong with the link (phishing, malware, spam...)")
	case n > linkforge.MaxReportReason:
		fe.add("reason", fmt.Sprintf("at most %d characters", linkforge.MaxReportReason))
	}
	if in.email != "" && (len(in.email) > linkforge.MaxReportEmail || !strings.Contains(in.email, "@") ||
		strings.ContainsAny(in.email, " \t\r\n<>")) {
		fe.add("email", "must be an email address (or left out)")
	}
	if err := linkforge.InvalidFields(fe); err != nil {
		return rep, err
	}
	domainID := linkforge.PublicDomainID
	host := linkcache.RequestHost(u.Host)
	if d := s.cache.Host(ctx, host, s.now()); d != nil {
		domainID = d.ID
	} else if !strings.EqualFold(host, linkcache.RequestHost(s.publicHost())) {
		return rep, linkforge.InvalidField("url", "is not a short URL of this service")
	}
	slug := strings.TrimPrefix(u.Path, "/")
	if !linkforge.IsSlugShape(slug) {
		return rep, linkforge.InvalidField("url", "is not a short URL of this service (its path is not a slug)")
	}
	if l, err := s.store.LinkBySlug(ctx, domainID, slug); err == nil {
		rep.LinkID = l.ID
	} else if linkforge.ErrorCode(err) != linkforge.ENotFound {
		return rep, fmt.Errorf("report: %w", err)
	}
	return rep, nil
}

// publicHost is the public URL's host (with its port).
func (s *Server) publicHost() string {
	u, err := url.Parse(s.shortBase)
	if err != nil {
		return ""
	}
	return u.Host
}

// takeReport stores in for the client of c, within the client's limit,
// and tells the operator's receiver.
func (s *Server) takeReport(c echo.Context, in reportInput) error {
	req := c.Request()
	rep, err := s.checkReport(req.Context(), in)
	if err != nil {
		return err // a report refused stores nothing, and is not counted
	}
	if wait, ok := s.limits.reports.Begin(password.KeyFor(0, s.redirects.ClientAddr(req)), s.now()); !ok {
		c.Response().Header().Set("Retry-After", strconv.FormatInt(int64((wait+time.Second-1)/time.Second), 10))
		return linkforge.Errorf(linkforge.ERateLimited, "too many reports from this address: try again later")
	}
	if rep, err = s.store.CreateReport(req.Context(), rep); err != nil {
		return fmt.Errorf("create report: %w", err)
	}
	s.notifyReport(rep)
	return nil
}

// createReport answers POST /api/v1/reports {"url","reason","email"}:
// 202, whatever the link (a report names nothing back).
func (s *Server) createReport(c echo.Context) error {
	members, err := readObject(c.Request().Body)
	if err != nil {
		return err
	}
	var (
		in reportInput
		fe fieldErrors
	)
	for _, m := range members {
		switch m.name {
		case "url":
			fe.str(m, &in.url)
		case "reason":
			fe.str(m, &in.reason)
		case "email":
			fe.str(m, &in.email)
		default:
			fe.add(fieldName(m.name), `unknown field; the body is {"url","reason","email"}`)
		}
	}
	if err := linkforge.InvalidFields(fe); err != nil {
		return err
	}
	if err := s.takeReport(c, in); err != nil {
		return err
	}
	return c.JSON(http.StatusAccepted, map[string]string{"status": "received"})
}

// writeReportPage answers the report form (with msg, an error, above it)
// or, when done, its thanks.
func writeReportPage(c echo.Context, status int, in reportInput, msg string, done bool) error {
	var body strings.Builder
	title := "Report a link"
	if done {
		title = "Thank you"
		body.WriteString(`<p id="report-done">Your report was received. The operator of this service will review the link.</p>`)
	} else {
		body.WriteString(`<p>Tell the operator of this service about a short link used for phishing, malware, spam or other abuse.</p>`)
		if msg != "" {
			body.WriteString(`<p class="alert" role="alert" id="report-error">` + html.EscapeString(msg) + `</p>`)
		}
		body.WriteString(`<form method="post" action="` + pathReport + `">
<label for="url">Short URL</label><input id="url" name="url" type="url" required maxlength="2048" value="` + html.EscapeString(in.url) + `">
<label for="reason">What is wrong with it?</label><textarea id="reason" name="reason" required maxlength="1000" rows="4">` + html.EscapeString(in.reason) + `</textarea>
<label for="email">Your email (optional, for questions)</label><input id="email" name="email" type="email" maxlength="254" value="` + html.EscapeString(in.email) + `">
<button type="submit" id="send">Send report</button>
</form>`)
	}
	p := redirect.PageOf(status, redirect.Document(title, body.String()))
	return redirect.WriteForm(c, &p)
}

// reportPage answers GET /report?url=SHORT_URL: the form, its URL filled.
func (s *Server) reportPage(c echo.Context) error {
	return writeReportPage(c, http.StatusOK, reportInput{url: c.QueryParam("url")}, "", false)
}

// reportForm answers the form's POST /report: the thanks, or the form
// again with what was wrong.
func (s *Server) reportForm(c echo.Context) error {
	if err := redirect.ReadForm(c, "send the report as an application/x-www-form-urlencoded form"); err != nil {
		return err
	}
	f := c.Request().PostForm
	in := reportInput{url: f.Get("url"), reason: f.Get("reason"), email: f.Get("email")}
	err := s.takeReport(c, in)
	var le *linkforge.Error
	switch {
	case err == nil:
		return writeReportPage(c, http.StatusAccepted, in, "", true)
	case errors.As(err, &le) && (le.Code == linkforge.EInvalid || le.Code == linkforge.ERateLimited):
		msg := le.Message
		if len(le.Fields) > 0 {
			msg = le.Fields[0].Field + " " + le.Fields[0].Detail
		}
		return writeReportPage(c, httpproblem.Status(le.Code), in, msg, false)
	}
	return err
}

// reportJSON is a report as the operator lists it (schema Report).
type reportJSON struct {
	ID         string     `json:"id"`
	URL        string     `json:"url"`
	Reason     string     `json:"reason"`
	Email      *string    `json:"email"`
	LinkID     *string    `json:"link_id"`
	Slug       *string    `json:"slug"`
	Tenant     *string    `json:"tenant"`
	CreatedAt  time.Time  `json:"created_at"`
	State      string     `json:"state"` // open, blocked or dismissed
	ResolvedAt *time.Time `json:"resolved_at"`
}

func toReportJSON(r linkforge.Report) reportJSON {
	j := reportJSON{ID: strconv.FormatInt(r.ID, 10), URL: r.URL, Reason: r.Reason, CreatedAt: r.CreatedAt.UTC(),
		State: "open", ResolvedAt: r.ResolvedAt}
	if r.Email != "" {
		j.Email = &r.Email
	}
	if r.LinkID != 0 {
		id := strconv.FormatInt(r.LinkID, 10)
		j.LinkID, j.Slug, j.Tenant = &id, &r.Slug, &r.Tenant
	}
	switch r.Resolution {
	case linkforge.ReportBlock:
		j.State = "blocked"
	case linkforge.ReportDismiss:
		j.State = "dismissed"
	}
	return j
}

// operatorReports answers GET /api/v1/operator/reports?state=open|all.
func (s *Server) operatorReports(c echo.Context) error {
	limit := defaultAuditLimit
	if v := c.QueryParam("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > maxAuditLimit {
			return linkforge.InvalidField("limit", fmt.Sprintf("must be an integer from 1 to %d", maxAuditLimit))
		}
		limit = n
	}
	var before int64
	if v := c.QueryParam("cursor"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 1 {
			return linkforge.InvalidField("cursor", "must be the next_cursor of a previous page")
		}
		before = n
	}
	open := false
	switch c.QueryParam("state") {
	case "", "all":
	case "open":
		open = true
	default:
		return linkforge.InvalidField("state", "must be open or all")
	}
	reps, err := s.store.Reports(c.Request().Context(), open, limit+1, before)
	if err != nil {
		return fmt.Errorf("operator reports: %w", err)
	}
	out := struct {
		Reports    []reportJSON `json:"reports"`
		NextCursor *string      `json:"next_cursor"`
	}{Reports: make([]reportJSON, 0, min(len(reps), limit))}
	for i, r := range reps {
		if i == limit {
			next := strconv.FormatInt(reps[i-1].ID, 10)
			out.NextCursor = &next
			break
		}
		out.Reports = append(out.Reports, toReportJSON(r))
	}
	return c.JSON(http.StatusOK, out)
}

// resolveReport answers POST /api/v1/operator/reports/{id}/resolve
// {"action":"block|dismiss"}: block blocks the reported link with the
// report's reason (451 from this answer on), dismiss closes the report.
func (s *Server) resolveReport(c echo.Context) error {
	id, err := strconv.ParseInt(c.Param("id"), 10, 64)
	if err != nil || id < 1 {
		return linkforge.Errorf(linkforge.ENotFound, "report not found")
	}
	members, err := readObject(c.Request().Body)
	if err != nil {
		return err
	}
	var (
		action string
		fe     fieldErrors
	)
	for _, m := range members {
		if m.name != "action" {
			fe.add(fieldName(m.name), `unknown field; the body is {"action":"block|dismiss"}`)
			continue
		}
		fe.str(m, &action)
	}
	if len(fe) == 0 && action != linkforge.ReportBlock && action != linkforge.ReportDismiss {
		fe.add("action", "must be block or dismiss")
	}
	if err := linkforge.InvalidFields(fe); err != nil {
		return err
	}
	ctx := c.Request().Context()
	reps, err := s.store.Reports(ctx, false, 1, id+1)
	if err != nil {
		return fmt.Errorf("resolve report: %w", err)
	}
	if len(reps) == 0 || reps[0].ID != id {
		return linkforge.Errorf(linkforge.ENotFound, "report not found")
	}
	rep := reps[0]
	if rep.ResolvedAt != nil {
		return linkforge.Errorf(linkforge.EConflict, "the report is resolved already (%s)", rep.Resolution)
	}
	if action == linkforge.ReportBlock {
		if rep.LinkID == 0 {
			return &linkforge.Error{Code: linkforge.EConflict, Message: "the report names no link (none, or deleted since): dismiss it",
				Fields: []linkforge.FieldError{{Field: "action", Detail: "the report names no link to block"}}}
		}
		reason := fmt.Sprintf("abuse report %d: %s", rep.ID, strings.Join(strings.Fields(rep.Reason), " "))
		if utf8.RuneCountInString(reason) > linkforge.MaxBlockReason {
			reason = string([]rune(reason)[:linkforge.MaxBlockReason])
		}
		if _, err := s.links.Block(ctx, rep.LinkID, reason); err != nil {
			return err
		}
	}
	if rep, err = s.store.ResolveReport(ctx, id, action); err != nil {
		return err
	}
	return c.JSON(http.StatusOK, toReportJSON(rep))
}

// notifyReport sends report.created to the operator's receiver, in the
// background: up to three attempts, 2 and 8 seconds apart; a failure is
// logged (the report is stored whatever happens).
func (s *Server) notifyReport(r linkforge.Report) {
	if s.reportHook.URL == "" {
		return
	}
	at := s.now().UTC()
	body, err := json.Marshal(struct {
		Type      string     `json:"type"`
		Timestamp time.Time  `json:"timestamp"`
		Data      reportJSON `json:"data"`
	}{"report.created", at, toReportJSON(r)})
	if err != nil {
		s.logger.Error("report.created", "error", err)
		return
	}
	id := "evt_report_" + strconv.FormatInt(r.ID, 10)
	go func() {
		for attempt, wait := range []time.Duration{0, 2 * time.Second, 8 * time.Second} {
			time.Sleep(wait)
			err := s.sendReportHook(id, at, body)
			if err == nil {
				return
			}
			s.logger.Warn("report.created delivery failed", "attempt", attempt+1, "report_id", r.ID, "error", err)
		}
	}()
}

func (s *Server) sendReportHook(id string, at time.Time, body []byte) error {
	ctx, cancel := context.WithTimeout(context.Background(), webhook.DefaultTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.reportHook.URL, bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("report hook: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "LinkForge-Webhook")
	req.Header.Set("webhook-id", id)
	req.Header.Set("webhook-timestamp", strconv.FormatInt(at.Unix(), 10))
	if s.reportHook.Secret != "" {
		sig, err := webhook.Sign(s.reportHook.Secret, id, at, body)
		if err != nil {
			return fmt.Errorf("report hook: %w", err)
		}
		req.Header.Set("webhook-signature", sig)
	}
	resp, err := s.reportClient.Do(req)
	if err != nil {
		return fmt.Errorf("report hook: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return fmt.Errorf("report hook: HTTP %d", resp.StatusCode)
	}
	return nil
}
