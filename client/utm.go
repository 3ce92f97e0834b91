package client

import (
	"context"
	"net/http"
	"net/url"
	"time"
)

// UTM is a link's campaign parameters, appended to its targets at
// redirect (utm_source, ...) where a target has none of its own; empty
// values are not sent.
type UTM struct {
	Source   string `json:"source,omitempty"`
	Medium   string `json:"medium,omitempty"`
	Campaign string `json:"campaign,omitempty"`
	Term     string `json:"term,omitempty"`
	Content  string `json:"content,omitempty"`
}

// UTMTemplate is a tenant's named UTM parameters.
type UTMTemplate struct {
	ID        string    `json:"id"`
	Name      string    `json:"name"`
	UTM       UTM       `json:"utm"`
	CreatedAt time.Time `json:"created_at"`
}

// UTMTemplates lists the tenant's UTM templates by name (GET
// /api/v1/utm-templates).
func (c *Client) UTMTemplates(ctx context.Context) ([]UTMTemplate, error) {
	var out struct {
		Templates []UTMTemplate `json:"templates"`
	}
	err := c.call(ctx, request{method: http.MethodGet, path: "/api/v1/utm-templates", want: http.StatusOK}, &out)
	return out.Templates, err
}

// CreateUTMTemplate stores a template (POST /api/v1/utm-templates); a
// name the tenant has is a 409, CodeConflict.
func (c *Client) CreateUTMTemplate(ctx context.Context, name string, utm UTM) (UTMTemplate, error) {
	var out UTMTemplate
	body := struct {
		Name string `json:"name"`
		UTM  UTM    `json:"utm"`
	}{name, utm}
	err := c.call(ctx, request{method: http.MethodPost, path: "/api/v1/utm-templates", body: body, want: http.StatusCreated}, &out)
	return out, err
}

// DeleteUTMTemplate deletes the template id (DELETE
// /api/v1/utm-templates/{id}); links filled from it keep their utm.
func (c *Client) DeleteUTMTemplate(ctx context.Context, id string) error {
	return c.call(ctx, request{method: http.MethodDelete, path: "/api/v1/utm-templates/" + seg(id), want: http.StatusNoContent}, nil)
}

// CampaignOptions choose the range of Campaigns (zero: the server's
// default, the last 24 hours) and its traffic ("human", "automated"; "":
// both).
type CampaignOptions struct {
	From, To time.Time
	Traffic  string
}

// Campaign is one row of the campaigns report.
type Campaign struct {
	Campaign string `json:"campaign"`
	Source   string `json:"source"`
	Medium   string `json:"medium"`
	Links    int64  `json:"links"`
	Clicks   int64  `json:"clicks"`
}

// Campaigns returns the tenant's clicks of the range by their links'
// utm campaign, source and medium, most clicked first (GET
// /api/v1/stats/campaigns).
func (c *Client) Campaigns(ctx context.Context, o CampaignOptions) ([]Campaign, error) {
	q := url.Values{}
	timeParam(q, "from", o.From)
	timeParam(q, "to", o.To)
	strParam(q, "traffic", o.Traffic)
	var out struct {
		Campaigns []Campaign `json:"campaigns"`
	}
	err := c.call(ctx, request{method: http.MethodGet, path: "/api/v1/stats/campaigns", query: q, want: http.StatusOK}, &out)
	return out.Campaigns, err
}
