package client

import (
	"context"
	"net/http"
	"time"
)

// Share is a shared stats page of a link or a tag. URL is set only in
// CreateLinkShare's and CreateTagShare's answers: the server keeps only
// its hash.
type Share struct {
	ID          string     `json:"id"`
	URL         string     `json:"url,omitempty"`
	Slug        string     `json:"slug,omitempty"`
	Tag         string     `json:"tag,omitempty"`
	ExpiresAt   *time.Time `json:"expires_at"`
	HasPassword bool       `json:"has_password"`
	CreatedAt   time.Time  `json:"created_at"`
}

// NewShare are a share's options; zero values: no expiry, no password.
type NewShare struct {
	ExpiresAt *time.Time `json:"expires_at,omitempty"`
	Password  string     `json:"password,omitempty"`
}

// CreateLinkShare shares the link's stats (POST
// /api/v1/links/{slug}/shares).
func (c *Client) CreateLinkShare(ctx context.Context, slug string, o NewShare) (Share, error) {
	return c.createShare(ctx, "/api/v1/links/"+seg(slug)+"/shares", o)
}

// CreateTagShare shares the stats of the links carrying tag, summed (POST
// /api/v1/tags/{name}/shares).
func (c *Client) CreateTagShare(ctx context.Context, tag string, o NewShare) (Share, error) {
	return c.createShare(ctx, "/api/v1/tags/"+seg(tag)+"/shares", o)
}

func (c *Client) createShare(ctx context.Context, path string, o NewShare) (Share, error) {
	var out Share
	err := c.call(ctx, request{method: http.MethodPost, path: path, body: o, want: http.StatusCreated}, &out)
	return out, err
}

// LinkShares lists the link's shares, without URLs.
func (c *Client) LinkShares(ctx context.Context, slug string) ([]Share, error) {
	return c.listShares(ctx, "/api/v1/links/"+seg(slug)+"/shares")
}

// TagShares lists the tag's shares, without URLs.
func (c *Client) TagShares(ctx context.Context, tag string) ([]Share, error) {
	return c.listShares(ctx, "/api/v1/tags/"+seg(tag)+"/shares")
}

func (c *Client) listShares(ctx context.Context, path string) ([]Share, error) {
	var out struct {
		Shares []Share `json:"shares"`
	}
	err := c.call(ctx, request{method: http.MethodGet, path: path, want: http.StatusOK}, &out)
	return out.Shares, err
}

// DeleteLinkShare deletes the link's share id: its page answers 404.
func (c *Client) DeleteLinkShare(ctx context.Context, slug, id string) error {
	return c.call(ctx, request{method: http.MethodDelete, path: "/api/v1/links/" + seg(slug) + "/shares/" + seg(id), want: http.StatusNoContent}, nil)
}

// DeleteTagShare deletes the tag's share id.
func (c *Client) DeleteTagShare(ctx context.Context, tag, id string) error {
	return c.call(ctx, request{method: http.MethodDelete, path: "/api/v1/tags/" + seg(tag) + "/shares/" + seg(id), want: http.StatusNoContent}, nil)
}
