// Package webhook sends LinkForge's webhooks: events of a tenant's links
// (link.created, link.updated, link.deleted, link.expired,
// link.limit_reached, link.clicks) and alarms (alarm.dead), POSTed to the
// URLs the tenant subscribed, signed with the Standard Webhooks scheme,
// and webhook.test, which no webhook subscribes to: it is sent on request
// to one webhook (linkforge.WebhookStore's EnqueueDelivery).
//
// The events themselves are written by the store, as delivery rows in the
// same transaction as the change that causes them (the outbox; see
// linkforge.WebhookStore). This package creates webhooks (secret and URL
// checks), and its Dispatcher is the delivery kind of work of the one
// schedule.Scheduler per node: the scheduler's timer, claim loop, lease and
// backoff serve alarms and deliveries alike (docs/adr/015-webhooks.md).
// The Dispatcher POSTs each claimed delivery with a 10 s timeout, follows
// no redirect, reads at most a few KiB of the answer, connects only to
// public unicast addresses, checked at dial time (DNS rebinding), caps the
// deliveries in flight per webhook, per tenant and per node, and records
// the outcome under the claim's fencing token: delivered, retrying 2, 4,
// 8, 16, 32, 64 s later, dead after the seventh attempt (logged, counted,
// replayable), or, for a 410 Gone, dead with its webhook disabled.
package webhook

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"log/slog"
	"net/url"
	"slices"
	"strings"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/linkforge/linkforge"
)

// SecretPrefix starts every signing secret; the rest is the base64 of 32
// random bytes, the HMAC key.
const SecretPrefix = "whsec_"

// NewSecret returns a fresh signing secret.
func NewSecret() string {
	var b [32]byte
	rand.Read(b[:])
	return SecretPrefix + base64.StdEncoding.EncodeToString(b[:])
}

// NewID returns a fresh webhook id.
func NewID() string {
	var b [12]byte
	rand.Read(b[:])
	return "wh_" + hex.EncodeToString(b[:])
}

// Sign returns the webhook-signature header value of body sent as message
// id at ts: "v1," + base64 HMAC-SHA256 of "id.timestamp.body", keyed by the
// base64-decoded part of secret after whsec_.
func Sign(secret, id string, ts time.Time, body []byte) (string, error) {
	wh, err := standardwebhooks.NewWebhook(secret)
	if err != nil {
		return "", fmt.Errorf("webhook: secret: %w", err)
	}
	sig, err := wh.Sign(id, ts, body)
	if err != nil {
		return "", fmt.Errorf("webhook: sign: %w", err)
	}
	return sig, nil
}

// maxURLLen bounds a webhook URL.
const maxURLLen = 2048

// Policy says what webhook URLs may reach, and where refusals are
// logged.
type Policy struct {
	// AllowPrivate accepts any address (--webhook-allow-private).
	AllowPrivate bool
	// Resolver resolves host names; nil: net.DefaultResolver.
	Resolver Resolver
	// Logger gets the refused addresses (nil: discard): the answer never
	// names them.
	Logger *slog.Logger
}

// Creator stores a new webhook: the one method of linkforge.WebhookStore
// that Create needs, so that the admin API's narrower store can pass.
type Creator interface {
	CreateWebhook(ctx context.Context, w linkforge.Webhook) (linkforge.Webhook, error)
}

// Create checks a webhook request and stores it with a fresh id and secret;
// the returned Webhook carries the secret, which is shown once. Bad input
// answers EInvalid naming the field: a URL that is not absolute http(s), or
// that names or resolves to an address that is not public unicast unless
// p.AllowPrivate; events empty or unknown. A tenant past
// linkforge.MaxWebhooksPerTenant gets EQuotaExceeded (the store's check).
func Create(ctx context.Context, s Creator, tenantID int64, rawURL string, events []string, p Policy) (linkforge.Webhook, error) {
	if err := checkURL(ctx, rawURL, p, slog.Int64("tenant_id", tenantID)); err != nil {
		return linkforge.Webhook{}, err
	}
	evs, err := checkEvents(events)
	if err != nil {
		return linkforge.Webhook{}, err
	}
	w := linkforge.Webhook{ID: NewID(), TenantID: tenantID, URL: rawURL, Events: evs, Secret: NewSecret(),
		CreatedAt: time.Now()}
	return s.CreateWebhook(ctx, w)
}

func checkEvents(events []string) ([]string, error) {
	if len(events) == 0 {
		return nil, linkforge.InvalidField("events", "must name at least one event type")
	}
	out := make([]string, 0, len(events))
	for _, e := range events {
		if !slices.Contains(linkforge.EventTypes, e) {
			return nil, linkforge.InvalidField("events", fmt.Sprintf("unknown event type %q (want one of %s)", e,
				strings.Join(linkforge.EventTypes, ", ")))
		}
		if !slices.Contains(out, e) {
			out = append(out, e)
		}
	}
	return out, nil
}

// checkURL answers EInvalid (field "url") unless raw is an absolute http or
// https URL whose host, or every address it resolves to now, is public
// unicast (or p.AllowPrivate). The dialer checks again at delivery time:
// the name may resolve elsewhere by then.
//
// A refused name gets the same answer whether it does not resolve or
// resolves to a refused address, and the answer never names the address:
// creating webhooks must not map the server's internal DNS. The address
// is logged instead.
func checkURL(ctx context.Context, raw string, p Policy, attrs ...slog.Attr) error {
	bad := func(detail string) error { return linkforge.InvalidField("url", detail) }
	if len(raw) > maxURLLen {
		return bad(fmt.Sprintf("must be at most %d characters", maxURLLen))
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.Hostname() == "" {
		return bad("must be an absolute http or https URL")
	}
	if u.User != nil {
		return bad("must not carry credentials")
	}
	if u.Fragment != "" {
		return bad("must not have a fragment")
	}
	if p.AllowPrivate {
		return nil
	}
	refused := func(reason slog.Attr) error {
		if p.Logger != nil {
			p.Logger.LogAttrs(ctx, slog.LevelInfo, "webhook URL refused", append(attrs,
				slog.String("event", "webhook_url_refused"), slog.String("host", u.Hostname()), reason)...)
		}
		return bad(fmt.Sprintf("host %q is refused: a webhook may only reach public unicast internet addresses "+
			"(start the server with --webhook-allow-private to allow others)", u.Hostname()))
	}
	addrs, err := resolve(ctx, p.Resolver, u.Hostname())
	if err != nil {
		return refused(slog.String("error", err.Error()))
	}
	for _, a := range addrs {
		if Private(a) {
			return refused(slog.String("address", a.String()))
		}
	}
	return nil
}
