package linkforge

import (
	"context"
	"strings"
	"time"
)

// ActorType says who made a write: a signed-in user, an API token, or the
// command line on the server's host.
type ActorType string

// The actor types of audit events (schema AuditEvent in web/openapi.json).
const (
	ActorUser  ActorType = "user"
	ActorToken ActorType = "token"
	ActorCLI   ActorType = "cli"
	// ActorOperator is an operator token; an operator user is ActorUser.
	ActorOperator ActorType = "operator"
)

// Actor is who made a write. ID is the user's or the token's id (0 for the
// CLI); Name its email, its label, or the CLI's operating-system user.
type Actor struct {
	Type ActorType
	ID   int64
	Name string
}

type actorKey struct{}

// WithActor returns ctx carrying the actor of the writes made with it.
// The stores read it inside each write transaction and add the write's
// audit event in that same transaction; a write whose context carries no
// actor (the expiry alarms, the click flushes: the system's own) adds
// none.
func WithActor(ctx context.Context, a Actor) context.Context {
	return context.WithValue(ctx, actorKey{}, a)
}

// ActorFrom returns the actor WithActor put in ctx.
func ActorFrom(ctx context.Context) (Actor, bool) {
	a, ok := ctx.Value(actorKey{}).(Actor)
	return a, ok
}

// Audit actions: "noun.verb", the noun the kind of Target.
const (
	AuditLinkCreate    = "link.create"           // target: the slug
	AuditLinkUpdate    = "link.update"           // target: the slug
	AuditLinkDelete    = "link.delete"           // target: the slug
	AuditLinkImport    = "link.import"           // target: "N links" (one event per import batch)
	AuditWebhookCreate = "webhook.create"        // target: the webhook id
	AuditWebhookUpdate = "webhook.update"        // target: "ID state"
	AuditWebhookDelete = "webhook.delete"        // target: the webhook id
	AuditWebhookTest   = "webhook.test"          // target: the webhook id
	AuditDeliveryRetry = "delivery.retry"        // target: the delivery id
	AuditAlarmRetry    = "alarm.retry"           // target: the alarm id
	AuditTokenCreate   = "token.create"          // target: the token id
	AuditTokenRevoke   = "token.revoke"          // target: the token id
	AuditTenantQuota   = "tenant.quota"          // target: the tenant name
	AuditTenantSchemes = "tenant.target_schemes" // target: the schemes, space-separated ("" none)
	AuditUserInvite    = "user.invite"           // target: the email
	AuditUserRemove    = "user.remove"           // target: the email
	AuditUserRole      = "user.role"             // target: "EMAIL ROLE"
	AuditUserAccept    = "user.accept"           // target: the email; an invitation accepted
	AuditUserDecline   = "user.decline"          // target: the email; an invitation declined
	// AuditUserPassword and AuditUserPasswordReset are recorded in every
	// tenant the user belongs to: a password is the user's, not a tenant's.
	AuditUserPassword      = "user.password"       // target: the email; a password set through a one-time URL
	AuditUserPasswordReset = "user.password_reset" // target: the email; a reset URL made
	AuditDomainCreate      = "domain.create"       // target: the host
	AuditDomainUpdate      = "domain.update"       // target: the host
	AuditDomainDelete      = "domain.delete"       // target: the host
	AuditLinkDisable       = "link.disable"        // target: the slug
	AuditLinkEnable        = "link.enable"         // target: the slug
	AuditTagRename         = "tag.rename"          // target: "OLD NEW", the tag renamed and its new name
	AuditLinkRename        = "link.rename"         // target: "OLD NEW", the slug and the new one
	AuditLinkAliasDelete   = "link.alias_delete"   // target: "SLUG ALIAS"
	AuditTagDelete         = "tag.delete"          // target: the tag
	AuditUTMTemplateCreate = "utm_template.create" // target: the template's name
	AuditUTMTemplateDelete = "utm_template.delete" // target: the template's name
	AuditQRUpdate          = "qr.update"           // target: "tenant", or the domain's host
	AuditShareCreate       = "share.create"        // target: ShareAuditTarget, "SLUG PREFIX" or "tag:NAME PREFIX"
	AuditShareDelete       = "share.delete"        // target: as share.create's
	// The operator's actions, in its log and in the tenant's.
	AuditLinkBlock     = "link.block"     // target: "SLUG: REASON"
	AuditLinkUnblock   = "link.unblock"   // target: the slug
	AuditLinkUnsafe    = "link.unsafe"    // target: "SLUG: REASON" (a check's flag)
	AuditLinkSafe      = "link.safe"      // target: the slug (the flag cleared)
	AuditReportBlock   = "report.block"   // target: the report id (in the operator's log alone)
	AuditReportDismiss = "report.dismiss" // target: the report id (in the operator's log alone)
	AuditTenantSuspend = "tenant.suspend" // target: the tenant name
	AuditTenantResume  = "tenant.resume"  // target: the tenant name
	// AuditOperatorToken is in the operator's log alone.
	AuditOperatorToken       = "operator.token_create" // target: the token id
	AuditOperatorTokenRevoke = "operator.token_revoke" // target: the token id
	// AuditTargetAdd and AuditTargetRemove are the operator's blocklist
	// and allowlist entries, in its log alone.
	AuditTargetAdd    = "operator.target_add"    // target: "block HOST" or "allow HOST"
	AuditTargetRemove = "operator.target_remove" // target: "block HOST" or "allow HOST"
)

// AuditEvent is one write, as the audit log keeps it.
type AuditEvent struct {
	ID       int64
	TenantID int64
	At       time.Time
	Actor    Actor
	Action   string
	Target   string
	// TenantName is, in the operator's log (OperatorAudit), the tenant the
	// action concerned; empty elsewhere.
	TenantName string
}

// AuditStore reads the audit log. The events themselves are written by
// the other stores' write methods, in their transactions (WithActor).
type AuditStore interface {
	// ListAudit returns the tenant's events that match q, newest first.
	ListAudit(ctx context.Context, tenantID int64, q AuditQuery) ([]AuditEvent, error)
}

// AuditQuery selects a page of a tenant's audit log.
type AuditQuery struct {
	// Limit is the most events returned, 1..1000.
	Limit int
	// Before, when > 0, keeps the events with a lower id: the cursor is
	// the last id of the previous page.
	Before int64
	// Action, when set, keeps the events of that action, or of every
	// action it prefixes when it ends with a dot ("link." for link.create,
	// link.update, …).
	Action string
	// Actor, when set, keeps the events whose actor has that name (a
	// token's name, a user's email, the CLI's operating-system user).
	Actor string
}

// ActionPattern is q.Action as a SQL LIKE pattern ("" for none): a
// prefix ending with a dot matches the actions it starts, anything else
// only itself. LIKE's wildcards in an action are escaped with \.
func (q AuditQuery) ActionPattern() string {
	if q.Action == "" {
		return ""
	}
	esc := strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(q.Action)
	if strings.HasSuffix(q.Action, ".") {
		return esc + "%"
	}
	return esc
}
