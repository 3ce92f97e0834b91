package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/domain"
	"github.com/linkforge/linkforge/web"
)

// The domain commands: a tenant's own hosts, written to the store
// directly as token create is. A running server sees them within its host
// table's reload (5 s) and verifies a pending one through its scheduler;
// `domain verify` fetches the verification URL from this process.

// domainCommand opens the store, finds the tenant and runs fn with the
// domain service; it prints what fn returns as JSON, if anything.
func (a *app) domainCommand(inv invocation, op string, fn func(svc *domain.Service, st store, tenant linkforge.Tenant) (any, int, error)) int {
	st, err := a.openStore()
	if err != nil {
		return a.fail("cannot "+op, err)
	}
	defer st.Close()
	tenant, code := a.existingTenant(st, inv.tenant, "cannot "+op)
	if code != exitOK {
		return code
	}
	svc, err := domain.New(domain.Config{Store: st, PublicHost: a.cfg.PublicURL.Hostname(),
		SelfHosts: []string{linkforge.SelfHost(a.cfg.PublicURL)}, Verify: a.cfg.DomainVerify,
		MaxPerTenant: a.cfg.MaxDomainsPerTenant, AllowPublicSubdomains: a.cfg.AllowPublicSubdomains})
	if err != nil {
		return a.fail("cannot "+op, err)
	}
	out, code, err := fn(svc, st, tenant)
	if err != nil {
		var e *linkforge.Error
		if errors.As(err, &e) && e.Code != linkforge.EInternal {
			msg := e.Message
			for _, f := range e.Fields {
				msg += "; " + f.Field + " " + f.Detail
			}
			fmt.Fprintf(a.stderr, "linkforge: cannot %s: %s\n", op, msg)
			return exitFailure
		}
		return a.fail("cannot "+op, fmt.Errorf("tenant %q: %w", tenant.Name, err))
	}
	if out != nil {
		b, err := json.Marshal(out)
		if err != nil {
			return a.fail("cannot print "+op, err)
		}
		if _, err := fmt.Fprintln(a.stdout, string(b)); err != nil {
			return a.fail("cannot print "+op, err)
		}
	}
	return code
}

func (a *app) domainAdd(inv invocation) int {
	return a.domainCommand(inv, "add domain", func(svc *domain.Service, _ store, t linkforge.Tenant) (any, int, error) {
		d, err := svc.Create(a.ctx, t.ID, domain.Input{Host: inv.args[0],
			AppleAppSiteAssociation: inv.aasa, AssetLinks: inv.assetLinks})
		if err != nil {
			return nil, exitFailure, err
		}
		a.log.Info("domain added", "tenant", t.Name, "host", d.Host, "state", string(d.State))
		return web.DomainJSON(d, a.cfg.DomainVerify), exitOK, nil
	})
}

func (a *app) domainList(inv invocation) int {
	return a.domainCommand(inv, "list domains", func(svc *domain.Service, _ store, t linkforge.Tenant) (any, int, error) {
		ds, err := svc.List(a.ctx, t.ID)
		if err != nil {
			return nil, exitFailure, err
		}
		out := struct {
			Domains []any `json:"domains"`
		}{Domains: []any{}}
		for _, d := range ds {
			out.Domains = append(out.Domains, web.DomainJSON(d, a.cfg.DomainVerify))
		}
		return out, exitOK, nil
	})
}

// domainVerify runs the verification now; exit 1 while the domain stays
// pending, so that a script can wait for its DNS.
func (a *app) domainVerify(inv invocation) int {
	return a.domainCommand(inv, "verify domain", func(svc *domain.Service, st store, t linkforge.Tenant) (any, int, error) {
		d, err := svc.Get(a.ctx, t.ID, inv.args[0])
		if err != nil {
			return nil, exitFailure, err
		}
		v, err := domain.NewVerifier(domain.VerifierConfig{Store: st, Mode: a.cfg.DomainVerify, Logger: a.log,
			AllowPrivate: a.cfg.WebhookAllowPrivate})
		if err != nil {
			return nil, exitFailure, err
		}
		if d, err = v.VerifyNow(a.ctx, d, nil); err != nil {
			return nil, exitFailure, err
		}
		if d.State != linkforge.DomainVerified {
			fmt.Fprintf(a.stderr, "linkforge: %s is still pending: %s\n", d.Host, d.VerifyError)
			return web.DomainJSON(d, a.cfg.DomainVerify), exitFailure, nil
		}
		return web.DomainJSON(d, a.cfg.DomainVerify), exitOK, nil
	})
}

func (a *app) domainRemove(inv invocation) int {
	return a.domainCommand(inv, "remove domain", func(svc *domain.Service, _ store, t linkforge.Tenant) (any, int, error) {
		d, err := svc.Delete(a.ctx, t.ID, inv.args[0])
		if err != nil {
			return nil, exitFailure, err
		}
		a.log.Info("domain removed", "tenant", t.Name, "host", d.Host)
		return nil, exitOK, nil
	})
}

// readDocument reads the app-link document file path ("": none); its
// shape and size are checked by domain.ValidateDocuments, which names the
// field. A file far past that bound is refused before it is read whole.
func readDocument(path, source string) ([]byte, error) {
	if path == "" {
		return nil, nil
	}
	f, err := os.Open(path) //nolint:gosec // G304: the path is the operator's own flag
	if err != nil {
		return nil, usagef("invalid %s: %v", source, err)
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, domain.MaxDocumentBytes+1))
	if err != nil {
		return nil, usagef("invalid %s: %v", source, err)
	}
	return b, nil
}
