package web

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/linkforge/linkforge"
)

// pathTenant is the token's tenant: its quotas and what it uses of them
// (ADR 016).
const pathTenant = apiPrefix + "/tenant"

// QuotaUsage answers a tenant's usage with this node's unflushed clicks
// counted (*quota.Service); Config.Quota nil: the store's rollup alone.
type QuotaUsage interface {
	Usage(ctx context.Context, tenantID int64) (linkforge.TenantUsage, error)
}

// tenantJSON is GET /api/v1/tenant's answer; a null limit is no limit.
type tenantJSON struct {
	Name              string `json:"name"`
	Links             int64  `json:"links"`
	MaxLinks          *int64 `json:"max_links"`
	ClicksThisMonth   int64  `json:"clicks_this_month"`
	MaxClicksPerMonth *int64 `json:"max_clicks_per_month"`
}

// TenantJSON is the API's form of a tenant's usage (GET /api/v1/tenant,
// and `linkforge tenant quota`).
func TenantJSON(u linkforge.TenantUsage) any {
	return tenantJSON{Name: u.Name, Links: u.Links, MaxLinks: u.MaxLinks,
		ClicksThisMonth: u.ClicksThisMonth, MaxClicksPerMonth: u.MaxClicksPerMonth}
}

// getTenant answers GET /api/v1/tenant: the quotas of the token's tenant,
// its links, and its clicks this UTC month (over max_clicks_per_month, the
// links still redirect).
func (s *Server) getTenant(c echo.Context) error {
	ctx := c.Request().Context()
	var (
		u   linkforge.TenantUsage
		err error
	)
	if s.quota != nil {
		u, err = s.quota.Usage(ctx, tenantID(c))
	} else {
		u, err = s.store.TenantUsage(ctx, tenantID(c), linkforge.MonthStart(s.now()))
	}
	if err != nil {
		return fmt.Errorf("tenant usage: %w", err)
	}
	schemes, err := s.store.TargetSchemes(ctx, tenantID(c))
	if err != nil {
		return fmt.Errorf("tenant: %w", err)
	}
	if schemes == nil {
		schemes = []string{}
	}
	return c.JSON(http.StatusOK, tenantSettingsJSON{tenantJSON: TenantJSON(u).(tenantJSON), TargetSchemes: schemes})
}

// tenantSettingsJSON is GET /api/v1/tenant's answer: the usage and the
// tenant's settings.
type tenantSettingsJSON struct {
	tenantJSON
	// TargetSchemes are the schemes its links may use besides http and
	// https (linkforge.ValidateTargetURLFor).
	TargetSchemes []string `json:"target_schemes"`
}

// patchTenant answers PATCH /api/v1/tenant {"target_schemes": [...]}: the
// owner replaces the tenant's allowlist of extra target schemes (audited),
// and gets GET's answer. Links already made keep their targets.
func (s *Server) patchTenant(c echo.Context) error {
	members, err := readObject(c.Request().Body)
	if err != nil {
		return err
	}
	var (
		fe      fieldErrors
		schemes []string
		set     bool
	)
	for _, m := range members {
		if m.name != "target_schemes" {
			fe.add(fieldName(m.name), `unknown field; the body is {"target_schemes"}`)
			continue
		}
		set = true
		if err := json.Unmarshal(m.value, &schemes); err != nil || isNull(m.value) {
			fe.add("target_schemes", `must be an array of schemes, such as ["mailto","tel"] ([] for none)`)
			continue
		}
		fe.addErr(linkforge.ValidateTargetSchemes(schemes))
	}
	if !set && len(fe) == 0 {
		fe.add("target_schemes", "is required")
	}
	if err := linkforge.InvalidFields(fe); err != nil {
		return err
	}
	if err := s.store.SetTargetSchemes(c.Request().Context(), tenantID(c), schemes); err != nil {
		return fmt.Errorf("patch tenant: %w", err)
	}
	return s.getTenant(c)
}
