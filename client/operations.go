package client

// Operation is one operation of the admin API (web/openapi.json) and the
// client method that performs it.
type Operation struct {
	Method string // HTTP method
	Path   string // OpenAPI path template
	Func   string // the Client method
}

// Operations lists every admin API operation and its method. The test
// TestOperationsMatchOpenAPI fails when the served OpenAPI document has an
// operation under /api/v1/ missing here or the other way round, and when a
// Func is not a method of *Client: adding a route means adding its method.
var Operations = []Operation{
	// The operator's (operator.go): an operator token's client.
	{"GET", "/api/v1/operator/tenants", "OperatorTenants"},
	{"POST", "/api/v1/operator/tenants/{name}/suspend", "SuspendTenant"},
	{"POST", "/api/v1/operator/tenants/{name}/resume", "ResumeTenant"},
	{"GET", "/api/v1/operator/links", "OperatorLinks"},
	{"POST", "/api/v1/operator/links/{id}/block", "BlockLink"},
	{"DELETE", "/api/v1/operator/links/{id}/block", "UnblockLink"},
	{"GET", "/api/v1/operator/audit", "OperatorAudit"},
	{"POST", "/api/v1/operator/links/{id}/unsafe", "FlagLinkUnsafe"},
	{"DELETE", "/api/v1/operator/links/{id}/unsafe", "ClearLinkUnsafe"},
	{"GET", "/api/v1/operator/reports", "Reports"},
	{"POST", "/api/v1/operator/reports/{id}/resolve", "ResolveReport"},
	{"POST", "/api/v1/reports", "ReportLink"},
	{"POST", "/api/v1/links/{slug}/check", "CheckLink"},
	{"GET", "/api/v1/operator/blocklist", "Blocklist"},
	{"POST", "/api/v1/operator/blocklist", "AddBlocklistEntry"},
	{"DELETE", "/api/v1/operator/blocklist", "DeleteBlocklistEntry"},
	{"GET", "/api/v1/operator/allowlist", "Allowlist"},
	{"POST", "/api/v1/operator/allowlist", "AddAllowlistEntry"},
	{"DELETE", "/api/v1/operator/allowlist", "DeleteAllowlistEntry"},
	{"POST", "/api/v1/links", "CreateLink"},
	{"GET", "/api/v1/links", "ListLinks"}, // and Links, its iterator
	{"GET", "/api/v1/links/{slug}", "Link"},
	{"PATCH", "/api/v1/links/{slug}", "UpdateLink"}, // and RenameLink
	{"DELETE", "/api/v1/links/{slug}", "DeleteLink"},
	{"DELETE", "/api/v1/links/{slug}/aliases/{alias}", "DeleteLinkAlias"},
	{"POST", "/api/v1/bulk/links", "CreateLinks"},
	{"GET", "/api/v1/links/{slug}/stats", "LinkStats"},
	{"GET", "/api/v1/links/{slug}/stats/{dimension}", "LinkBreakdown"},
	{"GET", "/api/v1/stats", "TenantStats"},
	{"GET", "/api/v1/stats/{dimension}", "TenantBreakdown"},
	{"GET", "/api/v1/stats/links", "TopLinks"},
	{"GET", "/api/v1/stats/campaigns", "Campaigns"},
	{"GET", "/api/v1/utm-templates", "UTMTemplates"},
	{"POST", "/api/v1/utm-templates", "CreateUTMTemplate"},
	{"DELETE", "/api/v1/utm-templates/{id}", "DeleteUTMTemplate"},
	{"GET", "/api/v1/stats/export", "ExportStats"},
	{"GET", "/api/v1/tags", "Tags"},
	{"PATCH", "/api/v1/tags/{name}", "RenameTag"},
	{"DELETE", "/api/v1/tags/{name}", "DeleteTag"},
	{"GET", "/api/v1/links/{slug}/qr", "QR"},
	// qr.go
	{"GET", "/api/v1/qr/defaults", "QRDefaults"},
	{"PUT", "/api/v1/qr/defaults", "SetQRDefaults"},
	{"GET", "/api/v1/qr/logo", "QRLogo"},
	{"PUT", "/api/v1/qr/logo", "SetQRLogo"},
	{"DELETE", "/api/v1/qr/logo", "DeleteQRLogo"},
	{"GET", "/api/v1/domains/{host}/qr/defaults", "DomainQRDefaults"},
	{"PUT", "/api/v1/domains/{host}/qr/defaults", "SetDomainQRDefaults"},
	{"GET", "/api/v1/domains/{host}/qr/logo", "DomainQRLogo"},
	{"PUT", "/api/v1/domains/{host}/qr/logo", "SetDomainQRLogo"},
	{"DELETE", "/api/v1/domains/{host}/qr/logo", "DeleteDomainQRLogo"},
	{"GET", "/api/v1/export", "Export"},
	{"POST", "/api/v1/import", "Import"},
	{"GET", "/api/v1/alarms", "Alarms"},
	{"POST", "/api/v1/alarms/{id}/retry", "RetryAlarm"},
	{"GET", "/api/v1/live", "Subscribe"},
	{"POST", "/api/v1/webhooks", "CreateWebhook"},
	{"GET", "/api/v1/webhooks", "Webhooks"},
	{"PATCH", "/api/v1/webhooks/{id}", "SetWebhookState"},
	{"DELETE", "/api/v1/webhooks/{id}", "DeleteWebhook"},
	{"GET", "/api/v1/webhooks/{id}/deliveries", "Deliveries"},
	{"POST", "/api/v1/webhooks/deliveries/{id}/retry", "RetryDelivery"},
	{"POST", "/api/v1/webhooks/{id}/test", "TestWebhook"},
	{"GET", "/api/v1/tenant", "Tenant"},
	{"PATCH", "/api/v1/tenant", "SetTargetSchemes"},
	// shares.go
	{"POST", "/api/v1/links/{slug}/shares", "CreateLinkShare"},
	{"GET", "/api/v1/links/{slug}/shares", "LinkShares"},
	{"DELETE", "/api/v1/links/{slug}/shares/{id}", "DeleteLinkShare"},
	{"POST", "/api/v1/tags/{name}/shares", "CreateTagShare"},
	{"GET", "/api/v1/tags/{name}/shares", "TagShares"},
	{"DELETE", "/api/v1/tags/{name}/shares/{id}", "DeleteTagShare"},
	// domains.go
	{"POST", "/api/v1/domains", "CreateDomain"},
	{"GET", "/api/v1/domains", "Domains"},
	{"GET", "/api/v1/domains/{host}", "Domain"},
	{"PATCH", "/api/v1/domains/{host}", "UpdateDomain"},
	{"DELETE", "/api/v1/domains/{host}", "DeleteDomain"},
	{"POST", "/api/v1/domains/{host}/verify", "VerifyDomain"},
	{"POST", "/api/v1/tokens", "CreateToken"},
	{"GET", "/api/v1/tokens", "Tokens"},
	{"DELETE", "/api/v1/tokens/{id}", "RevokeToken"},
	{"GET", "/api/v1/me", "Me"},
	{"GET", "/api/v1/audit", "Audit"},
	{"DELETE", "/api/v1/me/sessions", "EndMySessions"},
	{"GET", "/api/v1/me/sessions", "MySessions"},
	{"POST", "/api/v1/me/invitations/{tenant}/accept", "AcceptInvitation"},
	{"POST", "/api/v1/me/invitations/{tenant}/decline", "DeclineInvitation"},
	{"POST", "/api/v1/users", "InviteUser"},
	{"GET", "/api/v1/users", "Users"},
	{"PATCH", "/api/v1/users/{id}", "SetUserRole"},
	{"DELETE", "/api/v1/users/{id}", "RemoveUser"},
}
