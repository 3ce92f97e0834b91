package client

import (
	"context"
	"net/http"
	"net/url"
	"time"
)

// Webhook is a subscription of a URL to events. Secret is set only in the
// answer of CreateWebhook: the server shows it once.
type Webhook struct {
	ID     string   `json:"id"`
	URL    string   `json:"url"`
	Events []string `json:"events"`
	Secret string   `json:"secret,omitempty"`
	// State is WebhookActive or WebhookDisabled: a receiver answering 410
	// Gone disables its webhook.
	State     string    `json:"state"`
	CreatedAt time.Time `json:"created_at"`
}

// Webhook states.
const (
	WebhookActive   = "active"
	WebhookDisabled = "disabled"
)

// Webhook event types (docs/webhooks.md).
const (
	EventLinkCreated      = "link.created"
	EventLinkUpdated      = "link.updated"
	EventLinkDeleted      = "link.deleted"
	EventLinkExpired      = "link.expired"
	EventLinkLimitReached = "link.limit_reached"
	EventLinkClicks       = "link.clicks"
	EventAlarmDead        = "alarm.dead"
)

// NewWebhook is the body of a webhook create.
type NewWebhook struct {
	URL    string   `json:"url"`
	Events []string `json:"events"`
}

// CreateWebhook subscribes a URL (POST /api/v1/webhooks). Keep the
// returned Secret: it verifies the deliveries' signatures and is not shown
// again.
func (c *Client) CreateWebhook(ctx context.Context, w NewWebhook) (Webhook, error) {
	var out Webhook
	err := c.call(ctx, request{method: http.MethodPost, path: "/api/v1/webhooks", body: w, want: http.StatusCreated}, &out)
	return out, err
}

// Webhooks lists the tenant's webhooks, without secrets (GET
// /api/v1/webhooks).
func (c *Client) Webhooks(ctx context.Context) ([]Webhook, error) {
	var out struct {
		Webhooks []Webhook `json:"webhooks"`
	}
	err := c.call(ctx, request{method: http.MethodGet, path: "/api/v1/webhooks", want: http.StatusOK}, &out)
	return out.Webhooks, err
}

// SetWebhookState enables (WebhookActive) or disables (WebhookDisabled) a
// webhook (PATCH /api/v1/webhooks/{id}), and returns it.
func (c *Client) SetWebhookState(ctx context.Context, id, state string) (Webhook, error) {
	var out Webhook
	body := struct {
		State string `json:"state"`
	}{state}
	err := c.call(ctx, request{method: http.MethodPatch, path: "/api/v1/webhooks/" + seg(id), body: body, want: http.StatusOK}, &out)
	return out, err
}

// DeleteWebhook deletes a webhook and cancels its pending deliveries
// (DELETE /api/v1/webhooks/{id}).
func (c *Client) DeleteWebhook(ctx context.Context, id string) error {
	return c.call(ctx, request{method: http.MethodDelete, path: "/api/v1/webhooks/" + seg(id), want: http.StatusNoContent}, nil)
}

// Delivery is one event's delivery to a webhook.
type Delivery struct {
	ID            string     `json:"id"`
	EventID       string     `json:"event_id"` // evt_..., the webhook-id header
	Event         string     `json:"event"`    // the event type
	Link          *string    `json:"link"`     // the slug of the event's link; nil for none
	State         string     `json:"state"`    // pending, retrying, delivered, dead
	Attempts      int        `json:"attempts"`
	LastStatus    *int       `json:"last_status"`
	NextAttemptAt *time.Time `json:"next_attempt_at"`
	CreatedAt     time.Time  `json:"created_at"`
	UpdatedAt     time.Time  `json:"updated_at"`
}

// DeliveryOptions filter a webhook's deliveries; zero values: every state,
// the server's default count.
type DeliveryOptions struct {
	State string // "pending", "retrying", "delivered" or "dead"
	Limit int
}

// Deliveries lists a webhook's deliveries (GET
// /api/v1/webhooks/{id}/deliveries).
func (c *Client) Deliveries(ctx context.Context, webhookID string, o DeliveryOptions) ([]Delivery, error) {
	q := url.Values{}
	strParam(q, "state", o.State)
	intParam(q, "limit", o.Limit)
	var out struct {
		Deliveries []Delivery `json:"deliveries"`
	}
	err := c.call(ctx, request{method: http.MethodGet, path: "/api/v1/webhooks/" + seg(webhookID) + "/deliveries", query: q, want: http.StatusOK}, &out)
	return out.Deliveries, err
}

// RetryDelivery replays a dead delivery (POST
// /api/v1/webhooks/deliveries/{id}/retry).
func (c *Client) RetryDelivery(ctx context.Context, id string) error {
	return c.call(ctx, request{method: http.MethodPost, path: "/api/v1/webhooks/deliveries/" + seg(id) + "/retry", want: http.StatusAccepted}, nil)
}

// Tenant is the token's tenant with its usage and quotas; a nil limit is
// none.
type Tenant struct {
	Name              string `json:"name"`
	Links             int64  `json:"links"`
	MaxLinks          *int64 `json:"max_links"`
	ClicksThisMonth   int64  `json:"clicks_this_month"`
	MaxClicksPerMonth *int64 `json:"max_clicks_per_month"`
	// TargetSchemes are the schemes the tenant's link targets may use
	// besides http and https (mailto, tel, an app's).
	TargetSchemes []string `json:"target_schemes"`
}

// SetTargetSchemes replaces the tenant's extra target schemes (PATCH
// /api/v1/tenant, owners; nil or empty: none) and returns the tenant.
func (c *Client) SetTargetSchemes(ctx context.Context, schemes []string) (Tenant, error) {
	if schemes == nil {
		schemes = []string{}
	}
	body := struct {
		TargetSchemes []string `json:"target_schemes"`
	}{schemes}
	var out Tenant
	err := c.call(ctx, request{method: http.MethodPatch, path: "/api/v1/tenant", body: body, want: http.StatusOK}, &out)
	return out, err
}

// Tenant returns the token's tenant (GET /api/v1/tenant).
func (c *Client) Tenant(ctx context.Context) (Tenant, error) {
	var out Tenant
	err := c.call(ctx, request{method: http.MethodGet, path: "/api/v1/tenant", want: http.StatusOK}, &out)
	return out, err
}
