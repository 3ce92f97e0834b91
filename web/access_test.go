package web_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/internal/testdb"
	"github.com/linkforge/linkforge/web"
)

// wantRole is the contract's role of every operation of the OpenAPI
// document, by operationId (x-linkforge-role): "" for the public ones.
// It is written here again, not read from package access, so that the
// test checks the table against the contract; an operation added to the
// document without a line here fails TestRolesOfEveryOperation.
var wantRole = map[string]linkforge.Role{
	"root": "", "rootHead": "", "favicon": "", "faviconHead": "",
	"followLink": "", "peekLink": "", "unlockLink": "",
	"openapi": "", "openapiHead": "", "healthz": "", "healthzHead": "",
	"readyz": "", "readyzHead": "", "metrics": "", "metricsHead": "",
	"dashboard": "", "dashboardHead": "", "dashboardScript": "", "dashboardScriptHead": "",
	"dashboardStyle": "", "dashboardStyleHead": "", "dashboardWebhooks": "",
	"dashboardWebhooksHead": "", "dashboardScriptWebhooks": "", "dashboardScriptHeadWebhooks": "",
	"dashboardPeople": "", "dashboardPeopleHead": "", "dashboardScriptPeople": "", "dashboardScriptPeopleHead": "",
	"dashboardStylePeople": "", "dashboardStylePeopleHead": "", "dashboardScriptSession": "", "dashboardScriptSessionHead": "",
	"dashboardDomains": "", "dashboardDomainsHead": "", "dashboardScriptDomains": "", "dashboardScriptHeadDomains": "",
	"dashboardAnalytics": "", "dashboardAnalyticsHead": "", "dashboardLink": "", "dashboardLinkHead": "",
	"dashboardAudit": "", "dashboardAuditHead": "", "dashboardScriptAudit": "", "dashboardScriptHeadAudit": "",
	"dashboardAlarms": "", "dashboardAlarmsHead": "", "dashboardScriptAlarms": "", "dashboardScriptHeadAlarms": "",
	"dashboardTags": "", "dashboardTagsHead": "", "dashboardScriptTags": "", "dashboardScriptHeadTags": "",
	"dashboardImport": "", "dashboardImportHead": "", "dashboardScriptImport": "", "dashboardScriptHeadImport": "",
	"dashboardScriptLinkOptions": "", "dashboardScriptHeadLinkOptions": "",

	"listLinks": "viewer", "getLink": "viewer", "linkStats": "viewer", "linkBreakdown": "viewer",
	"tenantStats": "viewer", "topLinks": "viewer", "exportStats": "viewer", "tenantBreakdown": "viewer", "linkQR": "viewer",
	"getQRDefaults": "viewer", "getQRLogo": "viewer", "setQRDefaults": "editor", "setQRLogo": "editor", "deleteQRLogo": "editor",
	"getDomainQRDefaults": "viewer", "getDomainQRLogo": "viewer", "setDomainQRDefaults": "owner", "setDomainQRLogo": "owner", "deleteDomainQRLogo": "owner",
	"listTags": "viewer", "getTenant": "viewer", "liveFeed": "viewer",

	"createLink": "editor", "updateLink": "editor", "deleteLink": "editor", "deleteLinkAlias": "editor", "renameTag": "editor", "deleteTag": "editor", "createLinks": "editor",
	"campaigns": "viewer", "listUTMTemplates": "viewer", "createUTMTemplate": "editor", "deleteUTMTemplate": "editor",
	"exportLinks": "editor", "importLinks": "editor",

	"listAlarms": "owner", "retryAlarm": "owner",
	"createWebhook": "owner", "listWebhooks": "owner", "updateWebhook": "owner", "deleteWebhook": "owner",
	"listDeliveries": "owner", "retryDelivery": "owner", "testWebhook": "owner",
	"createToken": "owner", "listTokens": "owner", "revokeToken": "owner", "me": "viewer",
	"listAudit": "owner", "endMySessions": "viewer", "mySessions": "viewer", "acceptInvitation": "viewer", "declineInvitation": "viewer",
	"inviteUser": "owner", "listUsers": "owner", "updateUser": "owner", "removeUser": "owner",
	"loginForm": "", "loginFormHead": "", "login": "", "logout": "",
	"ssoStart": "", "ssoCallback": "",
	"inviteForm": "", "inviteFormHead": "", "inviteSetPassword": "",
	"resetForm": "", "resetFormHead": "", "resetSetPassword": "",
	"domainVerificationAnswer": "", "domainVerificationAnswerHead": "",
	"domainAppSiteAssociation": "", "domainAppSiteAssociationHead": "", "domainAssetLinks": "", "domainAssetLinksHead": "",
	"listDomains": "viewer", "getDomain": "viewer",
	"createDomain": "owner", "updateDomain": "owner", "deleteDomain": "owner", "verifyDomain": "owner",
	"dashboardOperator": "", "dashboardOperatorHead": "", "dashboardScriptOperator": "", "dashboardScriptHeadOperator": "",
	"robots": "", "robotsHead": "", "securityTxt": "", "securityTxtHead": "",
	// The operator's: no tenant role reaches them (operator_test.go).
	"operatorTenants": "operator", "suspendTenant": "operator", "resumeTenant": "operator",
	"operatorLinks": "operator", "blockLink": "operator", "unblockLink": "operator", "flagLinkUnsafe": "operator", "clearLinkUnsafe": "operator", "operatorAudit": "operator",
	"operatorReports": "operator", "resolveReport": "operator", "checkLink": "editor",
	"reportForm": "", "reportFormHead": "", "sendReportForm": "", "createReport": "",
	// Shared stats (shares.go).
	"createLinkShare": "editor", "listLinkShares": "viewer", "deleteLinkShare": "editor",
	"createTagShare": "editor", "listTagShares": "viewer", "deleteTagShare": "editor",
	"sharePage": "", "sharePageHead": "", "unlockSharePage": "",
	"updateTenant":  "owner", // its target schemes (tenant.go)
	"listBlocklist": "operator", "addBlocklistEntry": "operator", "deleteBlocklistEntry": "operator",
	"listAllowlist": "operator", "addAllowlistEntry": "operator", "deleteAllowlistEntry": "operator",
}

// operatorRole is the x-linkforge-role of the operator's operations.
const operatorRole linkforge.Role = "operator"

// operation is one operation of the served OpenAPI document.
type operation struct{ id, method, path, role string }

// servedOperations reads the OpenAPI document the server serves.
func servedOperations(t *testing.T, e *env) []operation {
	t.Helper()
	r := e.do(http.MethodGet, "/api/v1/openapi.json", "", "")
	mustStatus(t, r, http.StatusOK)
	var doc struct {
		Paths map[string]map[string]json.RawMessage `json:"paths"`
	}
	if err := json.Unmarshal(r.body, &doc); err != nil {
		t.Fatal(err)
	}
	var ops []operation
	for path, item := range doc.Paths {
		for m, raw := range item {
			if !slices.Contains([]string{"get", "head", "post", "put", "patch", "delete"}, m) {
				continue
			}
			var op struct {
				ID   string `json:"operationId"`
				Role string `json:"x-linkforge-role"`
			}
			if err := json.Unmarshal(raw, &op); err != nil || op.ID == "" {
				t.Fatalf("%s %s has no operationId", m, path)
			}
			ops = append(ops, operation{op.ID, strings.ToUpper(m), path, op.Role})
		}
	}
	slices.SortFunc(ops, func(a, b operation) int { return strings.Compare(a.id, b.id) })
	return ops
}

var templateParam = regexp.MustCompile(`\{([a-z_]+)\}`)

// concrete fills in the path's parameters with the test's own resources.
func concrete(path, webhookID string) string {
	return templateParam.ReplaceAllStringFunc(path, func(p string) string {
		switch {
		case p == "{slug}":
			return "s1"
		case p == "{dimension}":
			return "country"
		case strings.HasPrefix(path, "/api/v1/webhooks/{id}"):
			return webhookID
		case strings.HasPrefix(path, "/api/v1/tokens/"):
			return "999999" // none: the walk must not revoke its own tokens
		}
		return "1"
	})
}

// call sends op as a caller of token (empty: none), with an empty JSON
// object as the body of a write.
func call(e *env, op operation, token, webhookID string) response {
	e.t.Helper()
	var body io.Reader
	if op.method == http.MethodPost || op.method == http.MethodPatch {
		body = strings.NewReader("{}")
	}
	req, err := http.NewRequest(op.method, e.url+concrete(op.path, webhookID), body)
	if err != nil {
		e.t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	// As a browser on this server's pages: the sign-in forms refuse a post
	// from elsewhere (login CSRF), which is no role's refusal.
	req.Header.Set("Sec-Fetch-Site", "same-origin")
	return e.send(req)
}

// TestRolesOfEveryOperation walks every operation of the served OpenAPI
// document as a viewer, an editor, an owner and without a token, and
// checks each answer against the contract's roles: below the role, 403
// with code forbidden and nothing changed; at or above it, neither 401
// nor that 403; a public operation needs no token, any other one does.
func TestRolesOfEveryOperation(t *testing.T) {
	testdb.Each(t, func(t *testing.T, s linkforge.Store) {
		e := newEnv(t, s, func(c *web.Config) { c.WebhookAllowPrivate = true })
		tokens := map[linkforge.Role]string{}
		tid := int64(0)
		for _, role := range linkforge.Roles {
			tid, tokens[role] = mustRoleToken(t, s, "acme", role)
		}
		owner := tokens[linkforge.RoleOwner]
		e.mustCreate(owner, `{"url":"https://example.com/","slug":"s1","tags":["a"]}`)
		// A loopback receiver (allowed by WebhookAllowPrivate): the walk's
		// test delivery and link writes may queue deliveries to it, and
		// nothing here may reach a public address.
		receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) }))
		t.Cleanup(receiver.Close)
		r := e.do(http.MethodPost, "/api/v1/webhooks", owner, `{"url":"`+receiver.URL+`/hook","events":["link.created"]}`)
		mustStatus(t, r, http.StatusCreated)
		hook := mustJSON[webhookBody](t, r).ID

		// covers: the operator's operations are no tenant role's, however high.
		covers := func(role, need linkforge.Role) bool { return need != operatorRole && role.Covers(need) }
		ops := servedOperations(t, e)
		for _, op := range ops {
			want, ok := wantRole[op.id]
			if !ok {
				t.Errorf("%s %s (%s): no role in this test's table: add the contract's", op.method, op.path, op.id)
			}
			if op.role != string(want) {
				t.Errorf("%s %s: the document's x-linkforge-role is %q, want %q", op.method, op.path, op.role, want)
			}
		}
		snapshot := func() string {
			a := e.do(http.MethodGet, "/api/v1/export?format=json", owner, "")
			b := e.do(http.MethodGet, "/api/v1/webhooks", owner, "")
			c := e.do(http.MethodGet, "/api/v1/tokens", owner, "")
			return string(a.body) + string(b.body) + string(c.body) + strings.Join(tenantSlugs(t, s, tid), ",")
		}
		before := snapshot()
		denied := 0
		for _, op := range ops {
			need := wantRole[op.id]
			for _, role := range linkforge.Roles {
				if need == "" || covers(role, need) {
					continue
				}
				denied++
				r := call(e, op, tokens[role], hook)
				if p := problemOf(r); r.status != http.StatusForbidden || p != linkforge.EForbidden {
					t.Errorf("%s %s as %s: %s, want 403 forbidden", op.method, op.path, role, r)
				}
			}
		}
		if after := snapshot(); after != before {
			t.Errorf("refused operations changed the tenant:\nbefore %s\nafter  %s", before, after)
		}
		if denied < 20 {
			t.Errorf("only %d refusals walked", denied)
		}

		for _, op := range ops {
			need := wantRole[op.id]
			r := call(e, op, "", hook)
			switch {
			case need == "" && r.status == http.StatusUnauthorized:
				t.Errorf("%s %s without a token: %s, want a public answer", op.method, op.path, r)
			case need != "" && op.id != "liveFeed" && r.status != http.StatusUnauthorized:
				t.Errorf("%s %s without a token: %s, want 401", op.method, op.path, r)
			}
			for _, role := range linkforge.Roles {
				if need != "" && !covers(role, need) {
					continue
				}
				r := call(e, op, tokens[role], hook)
				if r.status == http.StatusUnauthorized || problemOf(r) == linkforge.EForbidden {
					t.Errorf("%s %s as %s: %s, want it admitted", op.method, op.path, role, r)
				}
			}
		}
	})
}

// problemOf returns the code of a problem answer, "" for any other.
func problemOf(r response) string {
	if !strings.HasPrefix(r.header.Get("Content-Type"), "application/problem+json") {
		return ""
	}
	var p struct {
		Code string `json:"code"`
	}
	_ = json.Unmarshal(r.body, &p)
	return p.Code
}

// tenantSlugs lists a tenant's slugs from the store.
func tenantSlugs(t *testing.T, s linkforge.Store, tenantID int64) []string {
	var slugs []string
	for _, l := range mustTenantLinks(t, s, tenantID) {
		slugs = append(slugs, l.Slug)
	}
	return slugs
}

// mustRoleToken creates tenant name (if needed) and a token of role for
// it, directly through the store.
func mustRoleToken(t *testing.T, s linkforge.Store, name string, role linkforge.Role) (tenantID int64, secret string) {
	t.Helper()
	ctx := context.Background()
	tenant, err := s.EnsureTenant(ctx, name)
	if err != nil {
		t.Fatalf("EnsureTenant: %v", err)
	}
	secret, hash, display := linkforge.NewToken()
	if _, err := s.CreateToken(ctx, linkforge.Token{TenantID: tenant.ID, Name: string(role), Hash: hash, Display: display, Role: role}); err != nil {
		t.Fatalf("CreateToken: %v", err)
	}
	return tenant.ID, secret
}
