package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"strings"
	"time"

	"github.com/gorilla/websocket"
)

// LiveOptions tune Subscribe's reconnection.
type LiveOptions struct {
	// MinBackoff is the first wait before reconnecting; it doubles after
	// each failed try, up to MaxBackoff, and starts again from MinBackoff
	// once a connection is up.
	MinBackoff, MaxBackoff time.Duration
	// StaleAfter is how long a connection may stay silent (no message and
	// no ping) before it is taken for dead and replaced. The server pings
	// every 54 s by default.
	StaleAfter time.Duration
}

// DefaultLiveOptions: reconnect quickly after a node restart, but do not
// hammer a server that is down.
var DefaultLiveOptions = LiveOptions{MinBackoff: 500 * time.Millisecond, MaxBackoff: 30 * time.Second, StaleAfter: 2 * time.Minute}

// Types of LiveEvent.
const (
	// LiveConnected is sent by the client itself, not the server, each
	// time a connection (the first or a reconnection) is up: updates sent
	// while disconnected are lost, so a consumer that keeps state reloads
	// it here.
	LiveConnected = "connected"
	LiveClicks    = "clicks"  // a minute bucket's count and the link's total
	LiveExpired   = "expired" // the link's expiry alarm ran
	LiveLink      = "link"    // a link was created, updated or deleted
)

// LiveEvent is one message of the live feed (docs/dashboard.md, "The live feed").
type LiveEvent struct {
	Type string
	// Slug is the link of the event: "link" of clicks and expired
	// messages, the slug of Link for link messages.
	Slug string
	// Clicks: the absolute count of the minute Bucket as far as the
	// server knows, and the link's all-time total.
	Bucket time.Time
	Count  int64
	Total  *int64
	// Expired: when.
	At time.Time
	// Link messages: "created", "updated" or "deleted", and the link.
	Op   string
	Link *Link
	// Raw is the message as received (nil for LiveConnected), for
	// members this version does not know.
	Raw json.RawMessage
}

// ErrTokenRevoked ends Subscribe when the server closes the feed because
// the token was revoked (close code 4001): reconnecting cannot help.
var ErrTokenRevoked = errors.New("client: live feed: token revoked")

// closeTokenRevoked is the server's close code for a revoked token.
const closeTokenRevoked = 4001

// Subscribe connects to the tenant's live feed (GET /api/v1/live) and calls
// fn with each event, in order, from one goroutine, until ctx is done
// (returns ctx's error), the token is revoked (ErrTokenRevoked) or refused
// (*Error with status 401), or the server has no feed (*Error 404). Any
// other failure, a dropped connection, a restart, a 503, is retried with
// backoff; fn gets a LiveConnected event each time the feed is up.
func (c *Client) Subscribe(ctx context.Context, fn func(LiveEvent)) error {
	target := strings.Replace(c.base.String(), "http", "ws", 1) + "/api/v1/live"
	d := websocket.Dialer{Proxy: http.ProxyFromEnvironment, HandshakeTimeout: 30 * time.Second}
	if t, ok := c.http.Transport.(*http.Transport); ok && t.TLSClientConfig != nil {
		d.TLSClientConfig = t.TLSClientConfig.Clone()
	}
	header := http.Header{"Authorization": {"Bearer " + c.token}, "User-Agent": {"linkforge-go-client"}}
	backoff := c.live.MinBackoff
	for {
		conn, resp, err := d.DialContext(ctx, target, header)
		wait := backoff
		if err == nil {
			backoff = c.live.MinBackoff
			err = c.readLive(ctx, conn, fn)
			if ctx.Err() != nil {
				return ctx.Err()
			}
			if errors.Is(err, ErrTokenRevoked) {
				return err
			}
			wait = backoff
		} else {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			if resp != nil {
				apiErr := readError(resp, http.MethodGet, "/api/v1/live")
				switch {
				case resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode == http.StatusServiceUnavailable:
					wait = max(wait, apiErr.RetryAfter)
				case resp.StatusCode >= 400 && resp.StatusCode < 500:
					// The token, the path or the request is wrong:
					// retrying would get the same answer.
					return apiErr
				}
			}
			backoff = min(backoff*2, c.live.MaxBackoff)
		}
		// Jitter spreads the reconnections of many subscribers after a
		// node restart.
		wait = time.Duration(float64(wait) * (0.8 + 0.4*rand.Float64())) //nolint:gosec // G404: reconnect jitter, not a secret
		if err := c.sleep(ctx, wait); err != nil {
			return err
		}
	}
}

// readLive reads conn until it fails or ctx is done, calling fn with each
// message.
func (c *Client) readLive(ctx context.Context, conn *websocket.Conn, fn func(LiveEvent)) error {
	defer conn.Close()
	stop := context.AfterFunc(ctx, func() { conn.Close() })
	defer stop()
	stale := c.live.StaleAfter
	extend := func() {
		if stale > 0 {
			conn.SetReadDeadline(time.Now().Add(stale))
		}
	}
	extend()
	conn.SetPingHandler(func(data string) error {
		extend()
		err := conn.WriteControl(websocket.PongMessage, []byte(data), time.Now().Add(10*time.Second))
		if errors.Is(err, websocket.ErrCloseSent) {
			return nil
		}
		return err
	})
	fn(LiveEvent{Type: LiveConnected})
	for {
		_, data, err := conn.ReadMessage()
		if err != nil {
			var ce *websocket.CloseError
			if errors.As(err, &ce) && ce.Code == closeTokenRevoked {
				return fmt.Errorf("%w (%s)", ErrTokenRevoked, ce.Text)
			}
			return err
		}
		extend()
		ev, err := decodeLive(data)
		if err != nil {
			// A message this version cannot read is skipped, not a
			// reason to drop the feed.
			continue
		}
		fn(ev)
	}
}

func decodeLive(data []byte) (LiveEvent, error) {
	var m struct {
		Type   string          `json:"type"`
		Link   json.RawMessage `json:"link"`
		Bucket time.Time       `json:"bucket"`
		Count  int64           `json:"count"`
		Total  *int64          `json:"total"`
		At     time.Time       `json:"at"`
		Op     string          `json:"op"`
	}
	if err := json.Unmarshal(data, &m); err != nil {
		return LiveEvent{}, err
	}
	ev := LiveEvent{Type: m.Type, Bucket: m.Bucket, Count: m.Count, Total: m.Total, At: m.At, Op: m.Op, Raw: data}
	if len(m.Link) > 0 && m.Link[0] == '{' {
		var l Link
		if err := json.Unmarshal(m.Link, &l); err != nil {
			return LiveEvent{}, err
		}
		ev.Link, ev.Slug = &l, l.Slug
	} else if len(m.Link) > 0 {
		if err := json.Unmarshal(m.Link, &ev.Slug); err != nil {
			return LiveEvent{}, err
		}
	}
	return ev, nil
}
