package client

import (
	"context"
	"net/http"
)

// EventWebhookTest is the type of the event TestWebhook sends. No webhook
// subscribes to it: it goes only to the webhook it was sent to.
const EventWebhookTest = "webhook.test"

// TestWebhook queues a webhook.test event for one webhook (POST
// /api/v1/webhooks/{id}/test) and returns its delivery, which is sent and
// retried like any other: signed with the webhook's secret, data
// {"webhook_id","message"}. A disabled webhook answers 409.
func (c *Client) TestWebhook(ctx context.Context, id string) (Delivery, error) {
	var out Delivery
	err := c.call(ctx, request{method: http.MethodPost, path: "/api/v1/webhooks/" + seg(id) + "/test", want: http.StatusAccepted}, &out)
	return out, err
}
