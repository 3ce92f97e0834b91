package client

import (
	"context"
	"net/http"
	"net/url"
	"time"
)

// The operator's API (/api/v1/operator/*): a Client made with an operator
// token (linkforge operator token create). A tenant's token gets 403
// (CodeForbidden) from every one of these methods.

// TenantSummary is one tenant as the operator sees it.
type TenantSummary struct {
	Name        string     `json:"name"`
	State       string     `json:"state"` // "active" or "suspended"
	SuspendedAt *time.Time `json:"suspended_at"`
	Links       int64      `json:"links"`
	ClicksMonth int64      `json:"clicks_this_month"`
	Users       int64      `json:"users"`
	CreatedAt   time.Time  `json:"created_at"`
}

// OperatorTenants lists every tenant by name (GET /api/v1/operator/tenants).
func (c *Client) OperatorTenants(ctx context.Context) ([]TenantSummary, error) {
	var out struct {
		Tenants []TenantSummary `json:"tenants"`
	}
	err := c.call(ctx, request{method: http.MethodGet, path: "/api/v1/operator/tenants", want: http.StatusOK}, &out)
	return out.Tenants, err
}

// SuspendTenant suspends a tenant: its links answer 451, its tokens and
// sessions 403 (POST /api/v1/operator/tenants/{name}/suspend).
func (c *Client) SuspendTenant(ctx context.Context, name string) (TenantSummary, error) {
	var out TenantSummary
	err := c.call(ctx, request{method: http.MethodPost, path: "/api/v1/operator/tenants/" + seg(name) + "/suspend", want: http.StatusOK}, &out)
	return out, err
}

// ResumeTenant lifts a suspension (POST /api/v1/operator/tenants/{name}/resume).
func (c *Client) ResumeTenant(ctx context.Context, name string) (TenantSummary, error) {
	var out TenantSummary
	err := c.call(ctx, request{method: http.MethodPost, path: "/api/v1/operator/tenants/" + seg(name) + "/resume", want: http.StatusOK}, &out)
	return out, err
}

// OperatorLink is a link of any tenant, with its tenant's name.
type OperatorLink struct {
	Link
	Tenant string `json:"tenant"`
}

// OperatorLinkOptions filter the operator's list; zero values: every link,
// newest first, 50 a page.
type OperatorLinkOptions struct {
	Q          string // substring of slug, url or title
	TargetHost string // the url's host
	State      string // "active", "disabled", "blocked" or "unsafe"
	Limit      int
	Cursor     string
}

// OperatorLinkPage is one page of OperatorLinks.
type OperatorLinkPage struct {
	Links      []OperatorLink `json:"links"`
	NextCursor string         `json:"next_cursor"`
}

// OperatorLinks returns one page of the links of every tenant (GET
// /api/v1/operator/links).
func (c *Client) OperatorLinks(ctx context.Context, o OperatorLinkOptions) (OperatorLinkPage, error) {
	q := url.Values{}
	strParam(q, "q", o.Q)
	strParam(q, "target_host", o.TargetHost)
	strParam(q, "state", o.State)
	intParam(q, "limit", o.Limit)
	strParam(q, "cursor", o.Cursor)
	var out OperatorLinkPage
	err := c.call(ctx, request{method: http.MethodGet, path: "/api/v1/operator/links", query: q, want: http.StatusOK}, &out)
	return out, err
}

// BlockLink blocks the link id (its Link.ID) with reason: it answers 451
// until UnblockLink (POST /api/v1/operator/links/{id}/block).
func (c *Client) BlockLink(ctx context.Context, id, reason string) (OperatorLink, error) {
	var out OperatorLink
	body := struct {
		Reason string `json:"reason"`
	}{reason}
	err := c.call(ctx, request{method: http.MethodPost, path: "/api/v1/operator/links/" + seg(id) + "/block", body: body, want: http.StatusOK}, &out)
	return out, err
}

// UnblockLink lifts a block (DELETE /api/v1/operator/links/{id}/block).
func (c *Client) UnblockLink(ctx context.Context, id string) (OperatorLink, error) {
	var out OperatorLink
	err := c.call(ctx, request{method: http.MethodDelete, path: "/api/v1/operator/links/" + seg(id) + "/block", want: http.StatusOK}, &out)
	return out, err
}

// OperatorAuditEvent is an event of the operator's log, with the tenant
// it concerned.
type OperatorAuditEvent struct {
	AuditEvent
	Tenant string `json:"tenant"`
}

// OperatorAudit returns one page of the operator's audit log, newest first
// (GET /api/v1/operator/audit), paged as Audit.
func (c *Client) OperatorAudit(ctx context.Context, limit int, cursor string) ([]OperatorAuditEvent, string, error) {
	q := url.Values{}
	intParam(q, "limit", limit)
	strParam(q, "cursor", cursor)
	var out struct {
		Events     []OperatorAuditEvent `json:"events"`
		NextCursor *string              `json:"next_cursor"`
	}
	err := c.call(ctx, request{method: http.MethodGet, path: "/api/v1/operator/audit", query: q, want: http.StatusOK}, &out)
	next := ""
	if out.NextCursor != nil {
		next = *out.NextCursor
	}
	return out.Events, next, err
}

// TargetEntry is an entry of the operator's blocklist or allowlist: Host
// (canonical: ASCII, lowercase) and the hosts under it.
type TargetEntry struct {
	Host      string    `json:"host"`
	Note      string    `json:"note"`
	CreatedAt time.Time `json:"created_at"`
}

// Blocklist lists the operator's blocklist (GET /api/v1/operator/blocklist):
// no link may point to these hosts or the hosts under them (CodeBlockedTarget).
func (c *Client) Blocklist(ctx context.Context) ([]TargetEntry, error) {
	return c.targetEntries(ctx, "blocklist")
}

// Allowlist lists the operator's allowlist (GET /api/v1/operator/allowlist),
// which wins over every blocklist entry.
func (c *Client) Allowlist(ctx context.Context) ([]TargetEntry, error) {
	return c.targetEntries(ctx, "allowlist")
}

// AddBlocklistEntry adds host (any spelling, or a URL) to the blocklist
// (POST /api/v1/operator/blocklist).
func (c *Client) AddBlocklistEntry(ctx context.Context, host, note string) (TargetEntry, error) {
	return c.addTargetEntry(ctx, "blocklist", host, note)
}

// AddAllowlistEntry adds host to the allowlist (POST /api/v1/operator/allowlist).
func (c *Client) AddAllowlistEntry(ctx context.Context, host, note string) (TargetEntry, error) {
	return c.addTargetEntry(ctx, "allowlist", host, note)
}

// DeleteBlocklistEntry removes host from the blocklist
// (DELETE /api/v1/operator/blocklist?host=).
func (c *Client) DeleteBlocklistEntry(ctx context.Context, host string) error {
	return c.deleteTargetEntry(ctx, "blocklist", host)
}

// DeleteAllowlistEntry removes host from the allowlist
// (DELETE /api/v1/operator/allowlist?host=).
func (c *Client) DeleteAllowlistEntry(ctx context.Context, host string) error {
	return c.deleteTargetEntry(ctx, "allowlist", host)
}

func (c *Client) targetEntries(ctx context.Context, list string) ([]TargetEntry, error) {
	var out struct {
		Entries []TargetEntry `json:"entries"`
	}
	err := c.call(ctx, request{method: http.MethodGet, path: "/api/v1/operator/" + list, want: http.StatusOK}, &out)
	return out.Entries, err
}

func (c *Client) addTargetEntry(ctx context.Context, list, host, note string) (TargetEntry, error) {
	var out TargetEntry
	body := struct {
		Host string `json:"host"`
		Note string `json:"note,omitempty"`
	}{host, note}
	err := c.call(ctx, request{method: http.MethodPost, path: "/api/v1/operator/" + list, body: body, want: http.StatusCreated}, &out)
	return out, err
}

func (c *Client) deleteTargetEntry(ctx context.Context, list, host string) error {
	return c.call(ctx, request{method: http.MethodDelete, path: "/api/v1/operator/" + list,
		query: url.Values{"host": {host}}, want: http.StatusNoContent}, nil)
}
