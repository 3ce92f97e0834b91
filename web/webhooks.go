package web

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/webhook"
)

// The webhook routes (docs/adr/015-webhooks.md). The handlers only decode and
// answer: checks and secrets are package webhook's, rows the store's.
const (
	pathWebhooks        = apiPrefix + "/webhooks"
	pathWebhook         = pathWebhooks + "/:id"
	pathWebhookDelivery = pathWebhook + "/deliveries"
	pathDeliveryRetry   = pathWebhooks + "/deliveries/:id/retry"
)

// The dashboard's webhooks page, served like the dashboard's own files
// (dashboard.go).
const (
	pathWebhooksPage = "/dashboard/webhooks"
	pathWebhooksJS   = "/static/webhooks.js"
)

func init() {
	addDashboardAssets(map[string]struct{ name, contentType string }{
		pathWebhooksPage: {"assets/webhooks.html", "text/html; charset=utf-8"},
		pathWebhooksJS:   {"assets/webhooks.js", "text/javascript; charset=utf-8"},
	})
}

// webhookJSON is a webhook as the API returns it; Secret only in the
// answer of its creation.
type webhookJSON struct {
	ID        string    `json:"id"`
	URL       string    `json:"url"`
	Events    []string  `json:"events"`
	Secret    string    `json:"secret,omitempty"`
	State     string    `json:"state"`
	CreatedAt time.Time `json:"created_at"`
}

func toWebhookJSON(w linkforge.Webhook) webhookJSON {
	return webhookJSON{ID: w.ID, URL: w.URL, Events: w.Events, Secret: w.Secret, State: string(w.State),
		CreatedAt: w.CreatedAt.UTC()}
}

type deliveryJSON struct {
	ID            string     `json:"id"`
	EventID       string     `json:"event_id"`
	Event         string     `json:"event"`
	Link          *string    `json:"link"` // the slug of the event's link; null for none
	State         string     `json:"state"`
	Attempts      int        `json:"attempts"`
	LastStatus    *int       `json:"last_status"`
	NextAttemptAt *time.Time `json:"next_attempt_at"`
	CreatedAt     time.Time  `json:"created_at"`
	UpdatedAt     time.Time  `json:"updated_at"`
}

func toDeliveryJSON(d linkforge.Delivery) deliveryJSON {
	j := deliveryJSON{ID: strconv.FormatInt(d.ID, 10), EventID: d.EventID, Event: d.EventType, State: string(d.State),
		Attempts: d.Attempts, CreatedAt: d.CreatedAt.UTC(), UpdatedAt: d.UpdatedAt.UTC()}
	if slug := deliveryLink(d.Body); slug != "" {
		j.Link = &slug
	}
	if d.LastStatus != 0 {
		st := d.LastStatus
		j.LastStatus = &st
	}
	// Only a delivery that will be attempted has a next attempt.
	if d.State == linkforge.DeliveryPending || d.State == linkforge.DeliveryRetrying {
		t := d.NextAttemptAt.UTC()
		j.NextAttemptAt = &t
	}
	return j
}

// createWebhook answers 201 with the webhook and its secret, shown once.
func (s *Server) createWebhook(c echo.Context) error {
	members, err := readObject(c.Request().Body)
	if err != nil {
		return err
	}
	var (
		fe     fieldErrors
		rawURL string
		events []string
		hasURL bool
		hasEvs bool
	)
	for _, m := range members {
		switch m.name {
		case "url":
			hasURL = true
			fe.str(m, &rawURL)
		case "events":
			hasEvs = true
			if err := json.Unmarshal(m.value, &events); err != nil {
				fe.add("events", "must be an array of event type strings")
			}
		default:
			fe.add(fieldName(m.name), "unknown field; accepted fields are url, events")
		}
	}
	if !hasURL {
		fe.add("url", "is required")
	}
	if !hasEvs {
		fe.add("events", "is required")
	}
	if err := linkforge.InvalidFields(fe); err != nil {
		return err
	}
	w, err := webhook.Create(c.Request().Context(), s.store, tenantID(c), rawURL, events,
		webhook.Policy{AllowPrivate: s.webhookAllowPrivate, Logger: s.logger})
	if err != nil {
		return fmt.Errorf("create webhook: %w", err)
	}
	return c.JSON(http.StatusCreated, toWebhookJSON(w))
}

func (s *Server) listWebhooks(c echo.Context) error {
	ws, err := s.store.ListWebhooks(c.Request().Context(), tenantID(c))
	if err != nil {
		return fmt.Errorf("list webhooks: %w", err)
	}
	out := struct {
		Webhooks []webhookJSON `json:"webhooks"`
	}{Webhooks: make([]webhookJSON, len(ws))}
	for i, w := range ws {
		out.Webhooks[i] = toWebhookJSON(w)
	}
	return c.JSON(http.StatusOK, out)
}

// patchWebhook sets a webhook's state: {"state":"active"} enables one that
// a 410 Gone (or a PATCH) disabled, {"state":"disabled"} stops it. 200
// with the webhook; its other fields are not changed here (delete and
// create again: a new URL deserves a new secret).
func (s *Server) patchWebhook(c echo.Context) error {
	members, err := readObject(c.Request().Body)
	if err != nil {
		return err
	}
	var (
		fe    fieldErrors
		state string
		has   bool
	)
	for _, m := range members {
		switch m.name {
		case "state":
			has = true
			if fe.str(m, &state) && !linkforge.WebhookState(state).Valid() {
				fe.add("state", "must be active or disabled")
			}
		default:
			fe.add(fieldName(m.name), "unknown field; accepted fields are state")
		}
	}
	if !has {
		fe.add("state", "is required")
	}
	if err := linkforge.InvalidFields(fe); err != nil {
		return err
	}
	w, err := s.store.SetWebhookState(c.Request().Context(), tenantID(c), c.Param("id"), linkforge.WebhookState(state), s.now())
	if err != nil {
		return fmt.Errorf("set webhook state: %w", err)
	}
	return c.JSON(http.StatusOK, toWebhookJSON(w))
}

// deleteWebhook answers 204; the webhook's pending deliveries go with it.
func (s *Server) deleteWebhook(c echo.Context) error {
	if err := s.store.DeleteWebhook(c.Request().Context(), tenantID(c), c.Param("id")); err != nil {
		return fmt.Errorf("delete webhook: %w", err)
	}
	return c.NoContent(http.StatusNoContent)
}

func (s *Server) listDeliveries(c echo.Context) error {
	state := linkforge.DeliveryState(c.QueryParam("state"))
	if state != "" && !state.Valid() {
		return linkforge.InvalidField("state", "must be one of pending, retrying, delivered, dead")
	}
	limit := defaultAlarmLimit
	if v := c.QueryParam("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > maxAlarmLimit {
			return linkforge.InvalidField("limit", fmt.Sprintf("must be an integer from 1 to %d", maxAlarmLimit))
		}
		limit = n
	}
	ds, err := s.store.ListDeliveries(c.Request().Context(), tenantID(c), c.Param("id"), state, limit)
	if err != nil {
		return fmt.Errorf("list deliveries: %w", err)
	}
	out := struct {
		Deliveries []deliveryJSON `json:"deliveries"`
	}{Deliveries: make([]deliveryJSON, len(ds))}
	for i, d := range ds {
		out.Deliveries[i] = toDeliveryJSON(d)
	}
	return c.JSON(http.StatusOK, out)
}

// retryDelivery replays a dead delivery: 202, it is sent by whichever node
// claims it; 404 for another tenant's, 409 when it is not dead.
func (s *Server) retryDelivery(c echo.Context) error {
	id, err := strconv.ParseInt(c.Param("id"), 10, 64)
	if err != nil || id <= 0 {
		return linkforge.Errorf(linkforge.ENotFound, "delivery not found")
	}
	d, err := s.store.RetryDelivery(c.Request().Context(), tenantID(c), id, s.now())
	if err != nil {
		return fmt.Errorf("retry delivery: %w", err)
	}
	s.rescheduleAlarm(&d.NextAttemptAt)
	return c.JSON(http.StatusAccepted, toDeliveryJSON(d))
}
