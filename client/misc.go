package client

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"time"
)

// TagCount is one of the tenant's tags and how many links carry it.
type TagCount struct {
	Tag   string `json:"tag"`
	Links int64  `json:"links"`
}

// Tags returns the tenant's tags with their link counts (GET /api/v1/tags).
func (c *Client) Tags(ctx context.Context) ([]TagCount, error) {
	var out struct {
		Tags []TagCount `json:"tags"`
	}
	err := c.call(ctx, request{method: http.MethodGet, path: "/api/v1/tags", want: http.StatusOK}, &out)
	return out.Tags, err
}

// RenameTag renames tag to name on every link carrying it, merging it
// into name where a link has both (PATCH /api/v1/tags/{name}), and
// returns name with the number of links now carrying it.
func (c *Client) RenameTag(ctx context.Context, tag, name string) (TagCount, error) {
	var out TagCount
	body := struct {
		Name string `json:"name"`
	}{name}
	err := c.call(ctx, request{method: http.MethodPatch, path: "/api/v1/tags/" + seg(tag), body: body, want: http.StatusOK}, &out)
	return out, err
}

// DeleteTag removes tag from every link carrying it (DELETE
// /api/v1/tags/{name}); the links stay.
func (c *Client) DeleteTag(ctx context.Context, tag string) error {
	return c.call(ctx, request{method: http.MethodDelete, path: "/api/v1/tags/" + seg(tag), want: http.StatusNoContent}, nil)
}

// QROptions choose the QR code's image; zero values are the server's
// defaults (PNG, 256 px).
type QROptions struct {
	Format string // "svg" or "png"
	Size   int    // pixels, 64..2048
	// The look; "" and nil take the domain's or tenant's defaults
	// (QRDefaults), then the server's.
	FG, BG string // hex colours, "#rgb" or "#rrggbb"
	EC     string // error correction: "L", "M", "Q" or "H"
	Margin *int   // quiet zone in modules, 0..16
	Domain string // the link's domain (a host); "": the tenant's default
}

// maxQRBytes bounds the image read: a 2048 px PNG is far smaller.
const maxQRBytes = 16 << 20

// QR returns the image of a QR code of the link's short URL with ?qr=1
// (GET /api/v1/links/{slug}/qr) and its content type.
func (c *Client) QR(ctx context.Context, slug string, o QROptions) ([]byte, string, error) {
	q := url.Values{}
	strParam(q, "format", o.Format)
	intParam(q, "size", o.Size)
	strParam(q, "fg", o.FG)
	strParam(q, "bg", o.BG)
	strParam(q, "ec", o.EC)
	if o.Margin != nil {
		q.Set("margin", strconv.Itoa(*o.Margin))
	}
	strParam(q, "domain", o.Domain)
	path := "/api/v1/links/" + seg(slug) + "/qr"
	resp, err := c.do(ctx, request{method: http.MethodGet, path: path, query: q, want: http.StatusOK})
	if err != nil {
		return nil, "", err
	}
	defer resp.Body.Close()
	img, err := io.ReadAll(io.LimitReader(resp.Body, maxQRBytes))
	if err != nil {
		return nil, "", fmt.Errorf("client: GET %s: read image: %w", path, err)
	}
	return img, resp.Header.Get("Content-Type"), nil
}

// Export writes every link of the tenant to w as the server streams it
// (GET /api/v1/export), in format "csv" or "json" (empty: csv), and
// returns the bytes written.
func (c *Client) Export(ctx context.Context, format string, w io.Writer) (int64, error) {
	q := url.Values{}
	strParam(q, "format", format)
	resp, err := c.do(ctx, request{method: http.MethodGet, path: "/api/v1/export", query: q, want: http.StatusOK})
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	n, err := io.Copy(w, resp.Body)
	if err != nil {
		return n, fmt.Errorf("client: GET /api/v1/export: %w", err)
	}
	return n, nil
}

// ImportResult is the summary of an import. Failed counts every error
// line; Errors lists the first of them.
type ImportResult struct {
	Created int         `json:"created"`
	Skipped int         `json:"skipped"`
	Failed  int         `json:"failed"`
	Errors  []LineError `json:"errors"`
	// Notes name what the import left out of lines it created (a Shlink
	// redirect rule LinkForge cannot express), one per field.
	Notes []LineNote `json:"notes"`
}

// LineNote is one thing an import left out of a line it created.
type LineNote struct {
	Line   int    `json:"line"`
	Field  string `json:"field"`
	Detail string `json:"detail"`
}

// LineError is the problem of one line of an imported file.
type LineError struct {
	Line    int    `json:"line"`
	Problem *Error `json:"problem"`
}

// Import sends the file read from r (POST /api/v1/import) in format
// "csv", "json", "yourls", "shlink", "bitly", "dub", "kutt" or
// "rebrandly", or the visits of "shlink-visits", "yourls-log" or
// "dub-events". The file is streamed; it is sent again on a 429 or 503
// only if r is an io.Seeker.
func (c *Client) Import(ctx context.Context, format string, r io.Reader) (ImportResult, error) {
	q := url.Values{}
	strParam(q, "format", format)
	ct := "text/csv"
	if format == "json" {
		ct = "application/json"
	}
	var out ImportResult
	const path = "/api/v1/import"
	err := c.call(ctx, request{method: http.MethodPost, path: path, query: q, raw: r, rawType: ct, want: http.StatusOK}, &out)
	for _, e := range out.Errors {
		if e.Problem != nil {
			e.Problem.Method, e.Problem.Path = http.MethodPost, path
		}
	}
	return out, err
}

// Alarm is a link's expiry alarm.
type Alarm struct {
	ID        string         `json:"id"`
	Link      string         `json:"link"` // the slug
	State     string         `json:"state"`
	DueAt     time.Time      `json:"due_at"`
	Attempt   int            `json:"attempt"`
	Failures  []AlarmFailure `json:"failures"`
	CreatedAt time.Time      `json:"created_at"`
	UpdatedAt time.Time      `json:"updated_at"`
}

// AlarmFailure is one failed run of an alarm; its error is in the server's
// log, not in the API.
type AlarmFailure struct {
	Attempt int       `json:"attempt"`
	At      time.Time `json:"at"`
}

// AlarmOptions filter the alarms; zero values: every state, the server's
// default count.
type AlarmOptions struct {
	State string // "scheduled", "running", "retrying", "dead", "done"
	Limit int
}

// Alarms lists the tenant's alarms (GET /api/v1/alarms).
func (c *Client) Alarms(ctx context.Context, o AlarmOptions) ([]Alarm, error) {
	q := url.Values{}
	strParam(q, "state", o.State)
	intParam(q, "limit", o.Limit)
	var out struct {
		Alarms []Alarm `json:"alarms"`
	}
	err := c.call(ctx, request{method: http.MethodGet, path: "/api/v1/alarms", query: q, want: http.StatusOK}, &out)
	return out.Alarms, err
}

// RetryAlarm replays a dead alarm (POST /api/v1/alarms/{id}/retry).
func (c *Client) RetryAlarm(ctx context.Context, id string) error {
	return c.call(ctx, request{method: http.MethodPost, path: "/api/v1/alarms/" + seg(id) + "/retry", want: http.StatusAccepted}, nil)
}

// ExportStats streams the tenant's daily counts as CSV
// (day,domain,slug,dimension,value,count) to w, for the UTC days from
// from up to to (zero times: the server's defaults), of one traffic
// ("human" or "automated"; empty: both). It returns the bytes written.
// (GET /api/v1/stats/export).
func (c *Client) ExportStats(ctx context.Context, from, to time.Time, traffic string, w io.Writer) (int64, error) {
	q := url.Values{}
	timeParam(q, "from", from)
	timeParam(q, "to", to)
	strParam(q, "traffic", traffic)
	resp, err := c.do(ctx, request{method: http.MethodGet, path: "/api/v1/stats/export", query: q, want: http.StatusOK})
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	n, err := io.Copy(w, resp.Body)
	if err != nil {
		return n, fmt.Errorf("client: GET /api/v1/stats/export: %w", err)
	}
	return n, nil
}
