package main

import (
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/quota"
	"github.com/linkforge/linkforge/web"
)

// parseLimit reads a quota flag: empty (not given: unchanged), "none" (no
// limit) or a whole number, 0 or more (0: nothing allowed).
func parseLimit(v, source string) (linkforge.QuotaValue, error) {
	switch v {
	case "":
		return linkforge.QuotaValue{}, nil
	case "none":
		return linkforge.QuotaValue{Set: true}, nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 0 {
		return linkforge.QuotaValue{}, usagef("invalid %s %q: want a whole number, 0 or more, or none", source, v)
	}
	return linkforge.QuotaValue{Set: true, Value: &n}, nil
}

// tenantQuota sets the tenant's quotas, if a limit flag is given, and
// prints its usage as GET /api/v1/tenant answers it (the clicks not flushed
// by running nodes are not counted: this process has none).
func (a *app) tenantQuota(inv invocation) int {
	st, err := a.openStore()
	if err != nil {
		return a.fail("cannot read tenant quota", err)
	}
	defer st.Close()
	tenant, code := a.existingTenant(st, inv.tenant, "cannot read tenant quota")
	if code != exitOK {
		return code
	}
	q, err := quota.New(quota.Config{Store: st})
	if err != nil {
		return a.fail("cannot read tenant quota", err)
	}
	var u linkforge.TenantUsage
	if inv.quota.MaxLinks.Set || inv.quota.MaxClicksPerMonth.Set {
		u, err = q.Set(a.ctx, tenant.ID, inv.quota)
		if err != nil {
			return a.fail("cannot set tenant quota", fmt.Errorf("tenant %q: %w", tenant.Name, err))
		}
		a.log.Info("tenant quota set", "tenant", tenant.Name, "tenant_id", tenant.ID,
			"max_links", limitAttr(u.MaxLinks), "max_clicks_per_month", limitAttr(u.MaxClicksPerMonth))
	} else if u, err = q.Usage(a.ctx, tenant.ID); err != nil {
		return a.fail("cannot read tenant quota", fmt.Errorf("tenant %q: %w", tenant.Name, err))
	}
	out, err := json.Marshal(web.TenantJSON(u))
	if err != nil {
		return a.fail("cannot print tenant quota", err)
	}
	if _, err := fmt.Fprintln(a.stdout, string(out)); err != nil {
		return a.fail("cannot print tenant quota", err)
	}
	return exitOK
}

// limitAttr is a quota as logged: a number, or "none".
func limitAttr(l linkforge.Limit) string {
	if l == nil {
		return "none"
	}
	return strconv.FormatInt(*l, 10)
}
