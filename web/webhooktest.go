package web

import (
	"fmt"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/linkforge/linkforge"
)

// pathWebhookTest sends a webhook.test event (operation testWebhook).
const pathWebhookTest = pathWebhook + "/test"

// testWebhook queues a webhook.test event for this webhook alone and
// answers 202 with its delivery, which the dispatcher sends and retries
// like any other: a tenant checks its receiver and signature check end to
// end without waiting for a link event. 404 for another tenant's webhook,
// 409 for a disabled one (it gets no deliveries).
func (s *Server) testWebhook(c echo.Context) error {
	ctx, tenant, id, now := c.Request().Context(), tenantID(c), c.Param("id"), s.now()
	ev, err := linkforge.NewWebhookTestEvent(tenant, id, now)
	if err != nil {
		return fmt.Errorf("test webhook: %w", err)
	}
	d, err := s.store.EnqueueDelivery(ctx, tenant, id, ev, now)
	if err != nil {
		return fmt.Errorf("test webhook: %w", err)
	}
	s.rescheduleAlarm(&d.NextAttemptAt)
	return c.JSON(http.StatusAccepted, toDeliveryJSON(d))
}
