package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/spf13/pflag"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/domain"
	"github.com/linkforge/linkforge/links"
	"github.com/linkforge/linkforge/porting"
)

// checkFormat validates --format for cmd: import needs one of the import
// formats, export takes csv (the default) or json.
func checkFormat(cmd, v, source string) (string, error) {
	if cmd == "export" {
		if v == "" {
			return string(porting.CSV), nil
		}
		if _, err := porting.ParseExportFormat(v); err != nil {
			return "", usagef("invalid %s %q: want csv or json", source, v)
		}
		return v, nil
	}
	if v == "" {
		return "", usagef("%s: --format is required: %s", cmd, porting.FormatNames())
	}
	if _, err := porting.ParseFormat(v); err != nil {
		return "", usagef("invalid %s %q: want one of %s", source, v, porting.FormatNames())
	}
	return v, nil
}

// importExtra registers import's repeatable --domain-map FROM=TO and
// checks it into the invocation.
func importExtra(fs *pflag.FlagSet) func(*invocation, func(flagSpec) (string, string)) error {
	pairs := fs.StringArray("domain-map", nil, "put the file's domain FROM on the tenant's domain TO, or on the public host when TO is empty "+
		"(a Shlink host, another deployment's public host); repeat for several")
	slug := fs.String("slug", "", "per-visit formats: the link of the lines that name none (a Shlink visits CSV before 4.1)")
	return func(inv *invocation, _ func(flagSpec) (string, string)) error {
		inv.slug = *slug
		m, err := porting.ParseDomainMap(*pairs)
		if err != nil {
			return usagef("invalid --domain-map: %s", fileProblem(err))
		}
		inv.domainMap = m
		return nil
	}
}

// importLinks imports FILE (- for stdin) into the tenant, creating the
// tenant if needed (a fresh install is where links are moved to) with the
// first link written, directly on the database. Stdout gets the summary, the JSON POST /api/v1/import
// answers; the exit code is 0 when every line was created or skipped, 1
// when a line failed (the summary lists which) or the file could not be
// read at all. Running it again after fixing the file is safe: the lines
// already imported are skipped.
func (a *app) importLinks(inv invocation) int {
	var in io.Reader = os.Stdin
	if name := inv.args[0]; name != "-" {
		f, err := os.Open(name) //nolint:gosec // G304: the file named on the command line
		if err != nil {
			fmt.Fprintf(a.stderr, "linkforge: import: %v\n", err)
			return exitFailure
		}
		defer f.Close()
		in = f
	}
	st, err := a.openStore()
	if err != nil {
		return a.fail("cannot import", err)
	}
	defer st.Close()
	// A new tenant is made only when the first link is written: a file
	// refused whole, or whose every line fails, must leave no tenant
	// behind (each mistyped attempt used to add one).
	tenant, err := st.TenantByName(a.ctx, inv.tenant)
	if err != nil && linkforge.ErrorCode(err) != linkforge.ENotFound {
		return a.fail("cannot import", fmt.Errorf("tenant %q: %w", inv.tenant, err))
	}
	opts := links.ImportOptions{DomainMap: inv.domainMap, Slug: inv.slug}
	if err != nil {
		tenant = linkforge.Tenant{Name: inv.tenant}
		opts.Tenant = func(ctx context.Context) (int64, error) {
			t, err := st.EnsureTenant(ctx, inv.tenant)
			if err != nil {
				return 0, fmt.Errorf("ensure tenant %q: %w", inv.tenant, err)
			}
			return t.ID, nil
		}
	}
	svc, err := a.linkService(st)
	if err != nil {
		return a.fail("cannot import", err)
	}
	res, err := svc.Import(a.ctx, tenant.ID, porting.Format(inv.format), in, opts)
	if linkforge.ErrorCode(err) == linkforge.EInvalid {
		// The file as a whole: its header, or not a JSON array.
		fmt.Fprintf(a.stderr, "linkforge: import: %s\n", fileProblem(err))
		return exitFailure
	}
	if err != nil {
		a.log.Error("import stopped", "error", err, "created", res.Created, "skipped", res.Skipped, "failed", res.Failed)
		return exitFailure
	}
	enc := json.NewEncoder(a.stdout)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(links.Report(res)); err != nil {
		return a.fail("cannot print the summary", err)
	}
	a.log.Info("import finished", "tenant", tenant.Name, "format", inv.format,
		"created", res.Created, "skipped", res.Skipped, "failed", res.Failed)
	if res.Failed > 0 {
		return exitFailure
	}
	return exitOK
}

// fileProblem is an EInvalid error as one line: its message and fields.
func fileProblem(err error) string {
	msg := linkforge.ErrorMessage(err)
	var e *linkforge.Error
	if !errors.As(err, &e) || e == nil || len(e.Fields) == 0 {
		return msg
	}
	parts := make([]string, len(e.Fields))
	for i, f := range e.Fields {
		parts[i] = f.Field + ": " + f.Detail
	}
	return strings.Join(parts, "; ")
}

// exportLinks writes every link of the tenant to stdout, as the API's
// export does, straight from the database, page by page.
func (a *app) exportLinks(inv invocation) int {
	st, err := a.openStore()
	if err != nil {
		return a.fail("cannot export", err)
	}
	defer st.Close()
	tenant, code := a.existingTenant(st, inv.tenant, "cannot export")
	if code != exitOK {
		return code
	}
	svc, err := a.linkService(st)
	if err != nil {
		return a.fail("cannot export", err)
	}
	if err := svc.Export(a.ctx, a.stdout, tenant.ID, porting.Format(inv.format), nil); err != nil {
		return a.fail("export failed", err)
	}
	return exitOK
}

// linkService is the link writes' service on the database alone: with
// --public-url as this server's own host (the redirect-loop check) and the
// base of the JSON export's short_url. No running server hears of an
// import's new slugs: one that looked a slug up a moment before answers
// 404 for it until its negative cache entry expires (5 s).
func (a *app) linkService(st store) (*links.Service, error) {
	domains, err := domain.New(domain.Config{Store: st, PublicHost: a.cfg.PublicURL.Hostname()})
	if err != nil {
		return nil, err
	}
	resolve := func(ctx context.Context, tenantID int64, host string) (int64, error) {
		t, err := domains.Resolve(ctx, tenantID, "domain", host, true)
		return t.ID, err
	}
	self := []string{linkforge.SelfHost(a.cfg.PublicURL)}
	// The CLI's import refuses the blocked targets a server would.
	targets, err := a.loadBlocklist()
	if err != nil {
		return nil, fmt.Errorf("blocklist (--blocklist): %w", err)
	}
	targets.UseStore(st)
	if err := targets.RefreshOperator(a.ctx); err != nil {
		return nil, err
	}
	return links.New(links.Config{Store: st, SelfHosts: self, SelfHostsOf: verifiedHosts(st, self),
		ShortBase: links.ShortBase(a.cfg.PublicURL), BaseOf: a.domainBases(st), Domain: resolve, Targets: targets,
		Retention: links.Retention{Minutes: a.cfg.Retention.Minutes, Hours: a.cfg.Retention.Hours}})
}

// verifiedHosts adds every verified domain to self, at each write: the
// server serves them all, so a target on one is a redirect loop.
func verifiedHosts(st store, self []string) func(context.Context) []string {
	return func(ctx context.Context) []string {
		ds, err := st.AllDomains(ctx)
		if err != nil {
			return self // the write's own store call reports the outage
		}
		out := slices.Clone(self)
		for _, d := range ds {
			if d.State == linkforge.DomainVerified {
				out = append(out, d.Host)
			}
		}
		return out
	}
}

// domainBases renders the links on a domain on its host, with the public
// URL's scheme, as the server does; the domains are read once, at the
// first such link.
func (a *app) domainBases(st store) func(linkforge.Link) links.Base {
	var hosts map[int64]string
	return func(l linkforge.Link) links.Base {
		if hosts == nil {
			hosts = map[int64]string{}
			if ds, err := st.AllDomains(a.ctx); err == nil {
				for _, d := range ds {
					hosts[d.ID] = d.Host
				}
			}
		}
		host := hosts[l.DomainID]
		return links.Base{URL: a.cfg.PublicURL.Scheme + "://" + host, Host: host}
	}
}
