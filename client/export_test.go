package client

import (
	"context"
	"time"
)

// SetSleep replaces how c waits before a retry or a reconnection: tests
// move the server's clock instead of waiting.
func SetSleep(c *Client, f func(ctx context.Context, d time.Duration) error) { c.sleep = f }

// GetRaw sends GET path through c's request core, retries included, for a
// route no method sends a plain GET to (the live feed, which answers 503
// on a server without one).
func GetRaw(ctx context.Context, c *Client, path string) error {
	return c.call(ctx, request{method: "GET", path: path, want: 200}, nil)
}
