package writes

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/linkforge/linkforge"
)

// The steps below are what each write does besides its SQL: its audit
// event (the action and what its target says) and its events, named after
// the write. A store calls the one of its write, in the write's
// transaction, after its SQL.

// audit writes the audit event of a write, when ctx carries an actor
// (linkforge.WithActor); the system's own writes carry none and add
// nothing. Its error fails the write: a change without its event must not
// commit.
func (w *Write) audit(ctx context.Context, tx Driver, tenantID int64, action, target string, at time.Time) error {
	a, ok := linkforge.ActorFrom(ctx)
	if !ok {
		return nil
	}
	if err := tx.InsertAudit(ctx, tenantID, a, action, target, at); err != nil {
		return fmt.Errorf("audit %s: %w", action, err)
	}
	return nil
}

// auditUser writes the audit event of a user's own act (an answer to an
// invitation, a password) to every tenant the user belongs to, and to also
// (0: none) if that is not one of them: such acts are every tenant's
// business where the user holds a role.
func (w *Write) auditUser(ctx context.Context, tx Driver, userID, also int64, action, target string, at time.Time) error {
	if _, ok := linkforge.ActorFrom(ctx); !ok {
		return nil
	}
	ids, err := tx.UserTenants(ctx, userID, also)
	if err != nil {
		return fmt.Errorf("audit %s: %w", action, err)
	}
	for _, id := range ids {
		if err := w.audit(ctx, tx, id, action, target, at); err != nil {
			return err
		}
	}
	return nil
}

// LinkCreated is a created link's link.created event and audit event.
func (w *Write) LinkCreated(ctx context.Context, tx Driver, l linkforge.Link) error {
	if err := w.linkEvent(ctx, tx, linkforge.EventLinkCreated, l, l.CreatedAt); err != nil {
		return err
	}
	return w.audit(ctx, tx, l.TenantID, linkforge.AuditLinkCreate, l.Slug, l.CreatedAt)
}

// LinkUpdated is an updated link's link.updated event and audit event;
// an update that disabled the link also has link.disabled and the audit
// event link.disable (one that enabled it, link.enable).
func (w *Write) LinkUpdated(ctx context.Context, tx Driver, up linkforge.LinkUpdate) error {
	l := up.Link
	if err := w.linkEvent(ctx, tx, linkforge.EventLinkUpdated, l, l.UpdatedAt); err != nil {
		return err
	}
	if up.Disabled {
		if err := w.linkEvent(ctx, tx, linkforge.EventLinkDisabled, l, l.UpdatedAt); err != nil {
			return err
		}
		if err := w.audit(ctx, tx, l.TenantID, linkforge.AuditLinkDisable, l.Slug, l.UpdatedAt); err != nil {
			return err
		}
	}
	if up.Enabled {
		if err := w.audit(ctx, tx, l.TenantID, linkforge.AuditLinkEnable, l.Slug, l.UpdatedAt); err != nil {
			return err
		}
	}
	return w.audit(ctx, tx, l.TenantID, linkforge.AuditLinkUpdate, l.Slug, l.UpdatedAt)
}

// operator writes the audit event of an operator's action, in the
// operator's log and in the log of the tenant it concerned.
func (w *Write) operator(ctx context.Context, tx Driver, tenantID int64, tenant, action, target string, at time.Time) error {
	a, ok := linkforge.ActorFrom(ctx)
	if !ok {
		return nil
	}
	if err := tx.InsertOperatorAudit(ctx, a, action, target, tenant, at); err != nil {
		return fmt.Errorf("operator audit %s: %w", action, err)
	}
	return w.audit(ctx, tx, tenantID, action, target, at)
}

// LinkBlocked is a link blocked by the operator (l.BlockedReason set):
// link.blocked and the audit events link.block; or its block lifted:
// link.unblock, and no webhook event.
func (w *Write) LinkBlocked(ctx context.Context, tx Driver, l linkforge.Link, tenant string, at time.Time) error {
	if l.BlockedReason == "" {
		return w.operator(ctx, tx, l.TenantID, tenant, linkforge.AuditLinkUnblock, l.Slug, at)
	}
	if err := w.linkEvent(ctx, tx, linkforge.EventLinkBlocked, l, at); err != nil {
		return err
	}
	return w.operator(ctx, tx, l.TenantID, tenant, linkforge.AuditLinkBlock, l.Slug+": "+l.BlockedReason, at)
}

// LinkUnsafe is a link a check flagged (l.UnsafeReason set): link.unsafe
// and the audit events link.unsafe; or its flag cleared: link.safe, and
// no webhook event. The scheduler's check writes with the operator actor
// of package safety, so that the evidence is in both logs.
func (w *Write) LinkUnsafe(ctx context.Context, tx Driver, l linkforge.Link, tenant string, at time.Time) error {
	if l.UnsafeReason == "" {
		return w.operator(ctx, tx, l.TenantID, tenant, linkforge.AuditLinkSafe, l.Slug, at)
	}
	if err := w.linkEvent(ctx, tx, linkforge.EventLinkUnsafe, l, at); err != nil {
		return err
	}
	return w.operator(ctx, tx, l.TenantID, tenant, linkforge.AuditLinkUnsafe, l.Slug+": "+l.UnsafeReason, at)
}

// LinkBroken is link.broken: a health check found a target of l broken
// (no audit event: nobody acted).
func (w *Write) LinkBroken(ctx context.Context, tx Driver, l linkforge.Link, at time.Time) error {
	return w.linkEvent(ctx, tx, linkforge.EventLinkBroken, l, at)
}

// TenantSuspended is the audit event of a tenant suspended or resumed.
func (w *Write) TenantSuspended(ctx context.Context, tx Driver, t linkforge.Tenant, suspended bool, at time.Time) error {
	action := linkforge.AuditTenantResume
	if suspended {
		action = linkforge.AuditTenantSuspend
	}
	return w.operator(ctx, tx, t.ID, t.Name, action, t.Name, at)
}

// LinkDeleted is a deleted link's link.deleted event and audit event.
func (w *Write) LinkDeleted(ctx context.Context, tx Driver, l linkforge.Link, at time.Time) error {
	if err := w.linkEvent(ctx, tx, linkforge.EventLinkDeleted, l, at); err != nil {
		return err
	}
	return w.audit(ctx, tx, l.TenantID, linkforge.AuditLinkDelete, l.Slug, at)
}

// LinkRenamed writes the link.updated deliveries of l, just renamed from
// old, and audits the rename.
func (w *Write) LinkRenamed(ctx context.Context, tx Driver, l linkforge.Link, old string) error {
	if err := w.linkEvent(ctx, tx, linkforge.EventLinkUpdated, l, l.UpdatedAt); err != nil {
		return err
	}
	return w.audit(ctx, tx, l.TenantID, linkforge.AuditLinkRename, old+" "+l.Slug, l.UpdatedAt)
}

// AliasDeleted audits the removal of alias from the link slug.
func (w *Write) AliasDeleted(ctx context.Context, tx Driver, tenantID int64, slug, alias string, at time.Time) error {
	return w.audit(ctx, tx, tenantID, linkforge.AuditLinkAliasDelete, slug+" "+alias, at)
}

// TagRenamed audits the rename of tag from to to on the tenant's links.
func (w *Write) TagRenamed(ctx context.Context, tx Driver, tenantID int64, from, to string, at time.Time) error {
	return w.audit(ctx, tx, tenantID, linkforge.AuditTagRename, from+" "+to, at)
}

// TagDeleted audits the removal of tag from the tenant's links.
func (w *Write) TagDeleted(ctx context.Context, tx Driver, tenantID int64, tag string, at time.Time) error {
	return w.audit(ctx, tx, tenantID, linkforge.AuditTagDelete, tag, at)
}

// TargetSchemesSet is the audit event of a tenant's allowlist of extra
// target schemes replaced (list: space-separated).
func (w *Write) TargetSchemesSet(ctx context.Context, tx Driver, tenantID int64, list string, at time.Time) error {
	return w.audit(ctx, tx, tenantID, linkforge.AuditTenantSchemes, list, at)
}

// ShareCreated is the audit event of a share of stats made.
func (w *Write) ShareCreated(ctx context.Context, tx Driver, sh linkforge.Share) error {
	return w.audit(ctx, tx, sh.TenantID, linkforge.AuditShareCreate, linkforge.ShareAuditTarget(sh.Slug, sh.Tag, sh.Prefix), sh.CreatedAt)
}

// ShareDeleted is the audit event of a share of stats deleted.
func (w *Write) ShareDeleted(ctx context.Context, tx Driver, tenantID int64, slug, tag, prefix string, at time.Time) error {
	return w.audit(ctx, tx, tenantID, linkforge.AuditShareDelete, linkforge.ShareAuditTarget(slug, tag, prefix), at)
}

// LinksImported is an import's one audit event, whatever its size (an
// import of a million links is one write), and no link events.
func (w *Write) LinksImported(ctx context.Context, tx Driver, tenantID int64, n int, at time.Time) error {
	return w.audit(ctx, tx, tenantID, linkforge.AuditLinkImport, fmt.Sprintf("%d links", n), at)
}

// AlarmRetried is the audit event of a dead alarm replayed.
func (w *Write) AlarmRetried(ctx context.Context, tx Driver, tenantID, alarmID int64, at time.Time) error {
	return w.audit(ctx, tx, tenantID, linkforge.AuditAlarmRetry, strconv.FormatInt(alarmID, 10), at)
}

// WebhookCreated is the audit event of a created webhook.
func (w *Write) WebhookCreated(ctx context.Context, tx Driver, wh linkforge.Webhook) error {
	return w.audit(ctx, tx, wh.TenantID, linkforge.AuditWebhookCreate, wh.ID, wh.CreatedAt)
}

// WebhookStateSet is the audit event of a webhook enabled or disabled.
func (w *Write) WebhookStateSet(ctx context.Context, tx Driver, tenantID int64, id string, state linkforge.WebhookState, at time.Time) error {
	return w.audit(ctx, tx, tenantID, linkforge.AuditWebhookUpdate, id+" "+string(state), at)
}

// WebhookDeleted is the audit event of a deleted webhook.
func (w *Write) WebhookDeleted(ctx context.Context, tx Driver, tenantID int64, id string, at time.Time) error {
	return w.audit(ctx, tx, tenantID, linkforge.AuditWebhookDelete, id, at)
}

// DeliveryRetried is the audit event of a dead delivery replayed, due at
// at: the scheduler wakes for it after the commit.
func (w *Write) DeliveryRetried(ctx context.Context, tx Driver, tenantID, id int64, at time.Time) error {
	w.delivered(at)
	return w.audit(ctx, tx, tenantID, linkforge.AuditDeliveryRetry, strconv.FormatInt(id, 10), at)
}

// WebhookTested is the audit event of a test event written to one
// webhook, due at at: the scheduler wakes for it after the commit.
func (w *Write) WebhookTested(ctx context.Context, tx Driver, tenantID int64, webhookID string, at time.Time) error {
	w.delivered(at)
	return w.audit(ctx, tx, tenantID, linkforge.AuditWebhookTest, webhookID, at)
}

// DomainCreated is the audit event of a created domain.
func (w *Write) DomainCreated(ctx context.Context, tx Driver, d linkforge.Domain) error {
	return w.audit(ctx, tx, d.TenantID, linkforge.AuditDomainCreate, d.Host, d.CreatedAt)
}

// UTMTemplateCreated is the audit event of a created UTM template.
func (w *Write) UTMTemplateCreated(ctx context.Context, tx Driver, t linkforge.UTMTemplate) error {
	return w.audit(ctx, tx, t.TenantID, linkforge.AuditUTMTemplateCreate, t.Name, t.CreatedAt)
}

// QRSettingsUpdated is the audit event of changed QR code settings (colours,
// logo): of the tenant's own (target "tenant") or of its domain host.
func (w *Write) QRSettingsUpdated(ctx context.Context, tx Driver, tenantID int64, host string, at time.Time) error {
	if host == "" {
		host = "tenant"
	}
	return w.audit(ctx, tx, tenantID, linkforge.AuditQRUpdate, host, at)
}

// UTMTemplateDeleted is the audit event of a deleted UTM template.
func (w *Write) UTMTemplateDeleted(ctx context.Context, tx Driver, t linkforge.UTMTemplate, at time.Time) error {
	return w.audit(ctx, tx, t.TenantID, linkforge.AuditUTMTemplateDelete, t.Name, at)
}

// DomainUpdated is the audit event of a domain changed.
func (w *Write) DomainUpdated(ctx context.Context, tx Driver, tenantID int64, host string, at time.Time) error {
	return w.audit(ctx, tx, tenantID, linkforge.AuditDomainUpdate, host, at)
}

// DomainDeleted is the audit event of a deleted domain.
func (w *Write) DomainDeleted(ctx context.Context, tx Driver, tenantID int64, host string, at time.Time) error {
	return w.audit(ctx, tx, tenantID, linkforge.AuditDomainDelete, host, at)
}

// TokenCreated is the audit event of a created API token.
func (w *Write) TokenCreated(ctx context.Context, tx Driver, tenantID, id int64, at time.Time) error {
	return w.audit(ctx, tx, tenantID, linkforge.AuditTokenCreate, strconv.FormatInt(id, 10), at)
}

// TokenRevoked is the audit event of a revoked API token.
func (w *Write) TokenRevoked(ctx context.Context, tx Driver, tenantID, id int64, at time.Time) error {
	return w.audit(ctx, tx, tenantID, linkforge.AuditTokenRevoke, strconv.FormatInt(id, 10), at)
}

// QuotaSet is the audit event of a tenant's quota set.
func (w *Write) QuotaSet(ctx context.Context, tx Driver, tenantID int64, name string, at time.Time) error {
	return w.audit(ctx, tx, tenantID, linkforge.AuditTenantQuota, name, at)
}

// UserInvited is the audit event of a user invited or added to a tenant.
func (w *Write) UserInvited(ctx context.Context, tx Driver, tenantID int64, email string, at time.Time) error {
	return w.audit(ctx, tx, tenantID, linkforge.AuditUserInvite, email, at)
}

// InvitationAnswered is the audit event of an invitation accepted or
// declined, in every tenant of the user and the inviting one.
func (w *Write) InvitationAnswered(ctx context.Context, tx Driver, userID, tenantID int64, accept bool, email string, at time.Time) error {
	action := linkforge.AuditUserDecline
	if accept {
		action = linkforge.AuditUserAccept
	}
	return w.auditUser(ctx, tx, userID, tenantID, action, email, at)
}

// MemberRemoved is the audit event of a member removed, or an invitation
// withdrawn.
func (w *Write) MemberRemoved(ctx context.Context, tx Driver, tenantID int64, email string, at time.Time) error {
	return w.audit(ctx, tx, tenantID, linkforge.AuditUserRemove, email, at)
}

// MemberRoleSet is the audit event of a member's new role.
func (w *Write) MemberRoleSet(ctx context.Context, tx Driver, tenantID int64, email string, role linkforge.Role, at time.Time) error {
	return w.audit(ctx, tx, tenantID, linkforge.AuditUserRole, email+" "+string(role), at)
}

// PasswordResetAsked is the audit event of a password reset ticket, in
// every tenant of the user.
func (w *Write) PasswordResetAsked(ctx context.Context, tx Driver, userID int64, email string, at time.Time) error {
	return w.auditUser(ctx, tx, userID, 0, linkforge.AuditUserPasswordReset, email, at)
}

// PasswordSet is the audit event of a password set with a ticket, in
// every tenant of the user.
func (w *Write) PasswordSet(ctx context.Context, tx Driver, userID int64, email string, at time.Time) error {
	return w.auditUser(ctx, tx, userID, 0, linkforge.AuditUserPassword, email, at)
}

// OperatorTokenCreated is the audit event of an operator token created,
// in the operator's log alone.
func (w *Write) OperatorTokenCreated(ctx context.Context, tx Driver, id int64, at time.Time) error {
	return w.operatorOnly(ctx, tx, linkforge.AuditOperatorToken, id, at)
}

// OperatorTokenRevoked is the audit event of an operator token revoked,
// in the operator's log alone.
func (w *Write) OperatorTokenRevoked(ctx context.Context, tx Driver, id int64, at time.Time) error {
	return w.operatorOnly(ctx, tx, linkforge.AuditOperatorTokenRevoke, id, at)
}

func (w *Write) operatorOnly(ctx context.Context, tx Driver, action string, id int64, at time.Time) error {
	a, ok := linkforge.ActorFrom(ctx)
	if !ok {
		return nil
	}
	return tx.InsertOperatorAudit(ctx, a, action, strconv.FormatInt(id, 10), "", at)
}

// ReportResolved is the audit event of an abuse report resolved, in the
// operator's log alone (a block is audited in both by BlockLink).
func (w *Write) ReportResolved(ctx context.Context, tx Driver, r linkforge.Report, at time.Time) error {
	action := linkforge.AuditReportDismiss
	if r.Resolution == linkforge.ReportBlock {
		action = linkforge.AuditReportBlock
	}
	return w.operatorOnly(ctx, tx, action, r.ID, at)
}

// TargetEntryAdded is the audit event of an entry added to the operator's
// blocklist or allowlist, in the operator's log alone.
func (w *Write) TargetEntryAdded(ctx context.Context, tx Driver, e linkforge.TargetEntry, at time.Time) error {
	return w.operatorTarget(ctx, tx, linkforge.AuditTargetAdd, e, at)
}

// TargetEntryRemoved is the audit event of an entry removed from the
// operator's blocklist or allowlist, in the operator's log alone.
func (w *Write) TargetEntryRemoved(ctx context.Context, tx Driver, e linkforge.TargetEntry, at time.Time) error {
	return w.operatorTarget(ctx, tx, linkforge.AuditTargetRemove, e, at)
}

func (w *Write) operatorTarget(ctx context.Context, tx Driver, action string, e linkforge.TargetEntry, at time.Time) error {
	a, ok := linkforge.ActorFrom(ctx)
	if !ok {
		return nil
	}
	return tx.InsertOperatorAudit(ctx, a, action, e.List+" "+e.Host, "", at)
}
