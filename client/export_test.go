package client

import (
	"context"
	"time"
)

// SetSleep replaces how c waits before a retry or a reconnection: tests
// move the server's clock instead of waiting.
func SetSleep(c *Client, f func(ctx context.Context, d time.Duration) error) { c.sleep = f }
