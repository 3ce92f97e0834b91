package client

import (
	"context"
	"net/http"
	"net/url"
	"time"
)

// FlagLinkUnsafe flags the link id as unsafe with reason: its visitors
// get a warning page first (POST /api/v1/operator/links/{id}/unsafe).
func (c *Client) FlagLinkUnsafe(ctx context.Context, id, reason string) (OperatorLink, error) {
	var out OperatorLink
	body := struct {
		Reason string `json:"reason"`
	}{reason}
	err := c.call(ctx, request{method: http.MethodPost, path: "/api/v1/operator/links/" + seg(id) + "/unsafe", body: body, want: http.StatusOK}, &out)
	return out, err
}

// ClearLinkUnsafe clears a link's unsafe flag (DELETE
// /api/v1/operator/links/{id}/unsafe).
func (c *Client) ClearLinkUnsafe(ctx context.Context, id string) (OperatorLink, error) {
	var out OperatorLink
	err := c.call(ctx, request{method: http.MethodDelete, path: "/api/v1/operator/links/" + seg(id) + "/unsafe", want: http.StatusOK}, &out)
	return out, err
}

// CheckLink checks the link's targets now and returns it with its Health
// (POST /api/v1/links/{slug}/check).
func (c *Client) CheckLink(ctx context.Context, slug string) (Link, error) {
	var out Link
	err := c.call(ctx, request{method: http.MethodPost, path: "/api/v1/links/" + seg(slug) + "/check", want: http.StatusOK}, &out)
	return out, err
}

// ReportLink reports a short URL to the operator (POST /api/v1/reports);
// no credential is needed, email may be empty.
func (c *Client) ReportLink(ctx context.Context, shortURL, reason, email string) error {
	body := map[string]string{"url": shortURL, "reason": reason}
	if email != "" {
		body["email"] = email
	}
	return c.call(ctx, request{method: http.MethodPost, path: "/api/v1/reports", body: body, want: http.StatusAccepted}, nil)
}

// Report is an abuse report as the operator lists it.
type Report struct {
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

// Reports returns one page of abuse reports, newest first (GET
// /api/v1/operator/reports); open keeps the unresolved ones.
func (c *Client) Reports(ctx context.Context, open bool, limit int, cursor string) ([]Report, string, error) {
	q := url.Values{}
	if open {
		q.Set("state", "open")
	}
	intParam(q, "limit", limit)
	strParam(q, "cursor", cursor)
	var out struct {
		Reports    []Report `json:"reports"`
		NextCursor *string  `json:"next_cursor"`
	}
	err := c.call(ctx, request{method: http.MethodGet, path: "/api/v1/operator/reports", query: q, want: http.StatusOK}, &out)
	next := ""
	if out.NextCursor != nil {
		next = *out.NextCursor
	}
	return out.Reports, next, err
}

// ResolveReport resolves the report id with action "block" (the link
// answers 451) or "dismiss" (POST /api/v1/operator/reports/{id}/resolve).
func (c *Client) ResolveReport(ctx context.Context, id, action string) (Report, error) {
	var out Report
	body := struct {
		Action string `json:"action"`
	}{action}
	err := c.call(ctx, request{method: http.MethodPost, path: "/api/v1/operator/reports/" + seg(id) + "/resolve", body: body, want: http.StatusOK}, &out)
	return out, err
}
