package main

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"text/tabwriter"
	"time"

	"github.com/linkforge/linkforge"
)

// migrate applies the pending migrations and exits; openStore does the work.
func (a *app) migrate(invocation) int {
	st, err := a.openStore()
	if err != nil {
		return a.fail("migration failed", err)
	}
	defer st.Close()
	a.log.Info("database is up to date", a.storeAttrs()...)
	return exitOK
}

// tokenCreate prints a new token of the tenant, creating the tenant if
// needed. Stdout gets the token and nothing else, so that
// `TOKEN=$(linkforge token create --tenant acme)` works; the secret is
// never logged.
func (a *app) tokenCreate(inv invocation) int {
	st, err := a.openStore()
	if err != nil {
		return a.fail("cannot create token", err)
	}
	defer st.Close()

	tenant, err := st.EnsureTenant(a.ctx, inv.tenant)
	if err != nil {
		return a.fail("cannot create token", fmt.Errorf("ensure tenant %q: %w", inv.tenant, err))
	}
	secret, hash, display := linkforge.NewToken()
	tok, err := st.CreateToken(a.ctx, linkforge.Token{TenantID: tenant.ID, Name: inv.name, Hash: hash, Display: display, Role: inv.role})
	if err != nil {
		return a.fail("cannot create token", fmt.Errorf("create token: %w", err))
	}
	a.log.Info("token created", "tenant", tenant.Name, "tenant_id", tenant.ID, "token_id", tok.ID, "display", tok.Display, "role", string(tok.Role))
	if _, err := fmt.Fprintln(a.stdout, secret); err != nil {
		return a.fail("cannot print token", err)
	}
	return exitOK
}

// tokenList prints a tenant's tokens as a table, revoked ones included.
func (a *app) tokenList(inv invocation) int {
	st, err := a.openStore()
	if err != nil {
		return a.fail("cannot list tokens", err)
	}
	defer st.Close()

	tenant, code := a.existingTenant(st, inv.tenant, "cannot list tokens")
	if code != exitOK {
		return code
	}
	tokens, err := st.ListTokens(a.ctx, tenant.ID)
	if err != nil {
		return a.fail("cannot list tokens", fmt.Errorf("list tokens of tenant %q: %w", inv.tenant, err))
	}

	tw := tabwriter.NewWriter(a.stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tNAME\tROLE\tPREFIX\tCREATED\tREVOKED")
	for _, t := range tokens {
		name, revoked := t.Name, "-"
		if name == "" {
			name = "-"
		}
		if t.RevokedAt != nil {
			revoked = t.RevokedAt.UTC().Format(time.RFC3339)
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\n", t.ID, name, t.Role, t.Display, t.CreatedAt.UTC().Format(time.RFC3339), revoked)
	}
	if err := tw.Flush(); err != nil {
		return a.fail("cannot print tokens", err)
	}
	return exitOK
}

// tokenRevoke revokes a token by id. The API refuses it from then on.
func (a *app) tokenRevoke(inv invocation) int {
	id, err := strconv.ParseInt(inv.args[0], 10, 64)
	if err != nil || id <= 0 {
		fmt.Fprintf(a.stderr, "linkforge: token revoke: %q is not a token id (see linkforge token list)\n", inv.args[0])
		return exitUsage
	}
	st, err := a.openStore()
	if err != nil {
		return a.fail("cannot revoke token", err)
	}
	defer st.Close()

	err = st.RevokeToken(a.ctx, id)
	if linkforge.ErrorCode(err) == linkforge.ENotFound {
		fmt.Fprintf(a.stderr, "linkforge: no token with id %d\n", id)
		return exitFailure
	}
	if err != nil {
		return a.fail("cannot revoke token", fmt.Errorf("revoke token %d: %w", id, err))
	}
	a.log.Info("token revoked", "token_id", id)
	fmt.Fprintf(a.stdout, "token %d revoked\n", id)
	return exitOK
}

// healthcheckTimeout bounds the whole probe: a health check that hangs is
// a failed one.
const healthcheckTimeout = 5 * time.Second

// healthcheck asks the local server for /healthz. Distroless images have no
// curl, so the binary probes itself (the HEALTHCHECK of docker-compose.yml).
func (a *app) healthcheck(invocation) int {
	host, port, _ := net.SplitHostPort(a.cfg.Addr) // validated by parseArgs
	switch host {
	case "", "0.0.0.0":
		host = "127.0.0.1"
	case "::":
		host = "::1"
	}
	target := "http://" + net.JoinHostPort(host, port) + "/healthz"

	ctx, cancel := context.WithTimeout(a.ctx, healthcheckTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, target, nil)
	if err != nil {
		return a.fail("health check failed", err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return a.fail("health check failed", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return a.fail("health check failed", fmt.Errorf("GET %s: %s", target, resp.Status))
	}
	return exitOK
}

// existingTenant looks up the tenant a command names without creating it:
// an unknown name is the user's mistake (exit 1 with a plain message), any
// other failure is reported as op failing.
func (a *app) existingTenant(st linkforge.Store, name, op string) (linkforge.Tenant, int) {
	tenant, err := st.TenantByName(a.ctx, name)
	if linkforge.ErrorCode(err) == linkforge.ENotFound {
		fmt.Fprintf(a.stderr, "linkforge: no tenant named %q\n", name)
		return linkforge.Tenant{}, exitFailure
	}
	if err != nil {
		return linkforge.Tenant{}, a.fail(op, fmt.Errorf("tenant %q: %w", name, err))
	}
	return tenant, exitOK
}
