package clienttest_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/linkforge/linkforge/client"
)

// TestClientTestWebhook: TestWebhook queues a webhook.test delivery for
// that webhook (no dispatcher runs in this server: it stays pending and
// is listed), 404 for an unknown webhook, 409 for a disabled one.
func TestClientTestWebhook(t *testing.T) {
	s := newServer(t, serverOpts{})
	c := mustClient(t, s)
	ctx := context.Background()
	w, err := c.CreateWebhook(ctx, client.NewWebhook{URL: "https://93.184.215.14/lf", Events: []string{client.EventLinkDeleted}})
	if err != nil {
		t.Fatalf("CreateWebhook: %v", err)
	}
	d, err := c.TestWebhook(ctx, w.ID)
	if err != nil || d.ID == "" || d.Event != client.EventWebhookTest || d.State != "pending" || d.Link != nil || d.NextAttemptAt == nil {
		t.Fatalf("TestWebhook = %+v, %v; want a pending webhook.test", d, err)
	}
	if ds, err := c.Deliveries(ctx, w.ID, client.DeliveryOptions{}); err != nil || len(ds) != 1 || ds[0].ID != d.ID || ds[0].EventID != d.EventID {
		t.Errorf("Deliveries = %+v, %v; want the test's", ds, err)
	}
	_, err = c.TestWebhook(ctx, "wh_nope")
	mustAPIError(t, err, http.StatusNotFound, client.CodeNotFound)
	if _, err := c.SetWebhookState(ctx, w.ID, client.WebhookDisabled); err != nil {
		t.Fatal(err)
	}
	_, err = c.TestWebhook(ctx, w.ID)
	mustAPIError(t, err, http.StatusConflict, client.CodeConflict)
}
