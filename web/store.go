package web

import (
	"context"
	"time"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/domain"
	"github.com/linkforge/linkforge/linkcache"
	"github.com/linkforge/linkforge/links"
	"github.com/linkforge/linkforge/oidclogin"
)

// Store is what the server reads and writes: the part of linkforge.Store
// the HTTP interface needs, so that what the server can touch (not the
// rollup writes, the claims of alarms and deliveries or token management,
// which belong to the counter, the scheduler and the CLI) shows in its
// type. Both
// stores implement it.
type Store interface {
	// What the parts the server builds on it need: the link writes,
	// import and export (links.Service, linkwrites.go), the link cache and
	// its host table (linkcache), the domains' writes and verification
	// (domain.Service, domain.Verifier), users and sessions with the single
	// sign-on's auto-join tenant (people, oidclogin).
	links.Store
	linkcache.Store
	domain.Store
	domain.VerifyStore
	oidclogin.Store

	// The rest the handlers call themselves. Links (links.go, listing).
	TenantLink(ctx context.Context, tenantID, domainID int64, slug string) (linkforge.Link, error)
	linkforge.LinkLister
	linkforge.TagStore          // renaming and deleting tags (tags.go)
	linkforge.UTMStore          // UTM templates and the campaigns report (utm.go)
	linkforge.LinkFinder        // find_if_exists (links.go)
	linkforge.ShareStore        // shared stats pages (shares.go)
	linkforge.TargetSchemeStore // a tenant's extra target schemes (tenant.go)
	LinkAliases(ctx context.Context, linkID int64) ([]string, error)

	DomainByID(ctx context.Context, id int64) (linkforge.Domain, error) // domains.go
	linkforge.QRStore                                                   // QR defaults and logos (qrsettings.go)

	// TokenByHash authenticates a request (auth.go).
	TokenByHash(ctx context.Context, hash []byte) (linkforge.Token, error)
	// The token API and GET /api/v1/me (tokens.go).
	CreateToken(ctx context.Context, t linkforge.Token) (linkforge.Token, error)
	ListTokens(ctx context.Context, tenantID int64) ([]linkforge.Token, error)
	RevokeTenantToken(ctx context.Context, tenantID, id int64) error
	TenantByID(ctx context.Context, id int64) (linkforge.Tenant, error)
	// The audit log (audit.go); its events are written by the writes.
	ListAudit(ctx context.Context, tenantID int64, q linkforge.AuditQuery) ([]linkforge.AuditEvent, error)
	// The operator's reads (operator.go); its writes go through links.Service.
	OperatorTokenByHash(ctx context.Context, hash []byte) (linkforge.OperatorToken, error)
	OperatorTenants(ctx context.Context, now time.Time) ([]linkforge.TenantSummary, error)
	OperatorLinks(ctx context.Context, q linkforge.OperatorQuery) (linkforge.LinkPage, error)
	OperatorAudit(ctx context.Context, limit int, before int64) ([]linkforge.AuditEvent, error)
	// The operator's target entries (targets.go).
	linkforge.TargetEntryStore
	linkforge.ReportStore
	linkforge.HealthStore

	// Stats and breakdowns (stats.go, analytics.go).
	Stats(ctx context.Context, q linkforge.StatsQuery) (linkforge.Stats, error)
	linkforge.AnalyticsStore

	// Alarms (alarms.go).
	ListAlarms(ctx context.Context, tenantID int64, state linkforge.AlarmState, limit int) ([]linkforge.Alarm, error)
	RetryAlarm(ctx context.Context, tenantID, alarmID int64, now time.Time) (linkforge.Alarm, error)

	// Webhooks and their deliveries (webhooks.go).
	CreateWebhook(ctx context.Context, w linkforge.Webhook) (linkforge.Webhook, error)
	SetWebhookState(ctx context.Context, tenantID int64, id string, state linkforge.WebhookState, now time.Time) (linkforge.Webhook, error)
	ListWebhooks(ctx context.Context, tenantID int64) ([]linkforge.Webhook, error)
	DeleteWebhook(ctx context.Context, tenantID int64, id string) error
	ListDeliveries(ctx context.Context, tenantID int64, webhookID string, state linkforge.DeliveryState, limit int) ([]linkforge.Delivery, error)
	RetryDelivery(ctx context.Context, tenantID, id int64, now time.Time) (linkforge.Delivery, error)
	EnqueueDelivery(ctx context.Context, tenantID int64, webhookID string, ev linkforge.Event, now time.Time) (linkforge.Delivery, error) // webhooktest.go
	// SetShortBase: the events name links as this server's bodies do
	// (New).
	SetShortBase(b linkforge.ShortBase)

	// TenantUsage answers GET /api/v1/tenant without a Config.Quota
	// (tenant.go).
	TenantUsage(ctx context.Context, tenantID int64, monthStart time.Time) (linkforge.TenantUsage, error)

	// Ping is /readyz's database check (ops.go).
	Ping(ctx context.Context) error
}
