package linkforge

import "time"

// EventWebhookTest is the type of the event that
// POST /api/v1/webhooks/{id}/test sends. It is not in EventTypes: no
// webhook subscribes to it, and it goes only to the webhook it was sent
// to, so that a tenant can check one receiver (reachability, signature
// check) without waking the others.
const EventWebhookTest = "webhook.test"

// WebhookTestData is the data of a webhook.test event.
type WebhookTestData struct {
	WebhookID string `json:"webhook_id"`
	Message   string `json:"message"`
}

// NewWebhookTestEvent builds the webhook.test event for the tenant's
// webhook webhookID, at now: an ordinary event (fresh evt_ id, the
// envelope and signature of every other), delivered and retried like one.
// Shared: web's test operation sends it, and store/storetest, which cannot
// import web, enqueues it to check EnqueueDelivery.
func NewWebhookTestEvent(tenantID int64, webhookID string, now time.Time) (Event, error) {
	return NewEvent(tenantID, EventWebhookTest, WebhookTestData{WebhookID: webhookID,
		Message: "a test event sent from LinkForge"}, now)
}
