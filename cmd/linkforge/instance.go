package main

import (
	"errors"
	"fmt"
	"strconv"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/domain"
)

// The instance settings (docs/adr/019-command-line.md): the serve
// flags that other commands read. serve stores their values in the
// database at each start; every other command that opens the database
// takes them from there, so that `user add` prints an invite on the
// server's public URL and `domain add` verifies as the server does,
// whatever flags or directory the command runs with. A flag given to the
// command (or its environment variable) still wins, with a warning when it
// differs from the server's.

// instanceSetting is one of them: how to read it out of a config and how
// to put a stored value back in.
type instanceSetting struct {
	flag string
	get  func(config) string
	set  func(*config, string) error
}

// instanceSettings are the persisted flags. A flag belongs here when a
// command other than serve reads it from the config.
var instanceSettings = []instanceSetting{
	// user add and reset-password print URLs on it; domain, import and
	// export take the public host (and its scheme) from it.
	{"public-url", func(c config) string { return c.PublicURL.String() }, func(c *config, v string) error {
		u, err := parsePublicURL(v)
		if err == nil {
			c.PublicURL = u
		}
		return err
	}},
	// domain add: pending or verified at once.
	{"domain-verify", func(c config) string { return string(c.DomainVerify) }, func(c *config, v string) error {
		m, err := domain.ParseVerifyMode(v)
		if err == nil {
			c.DomainVerify = m
		}
		return err
	}},
	// domain verify fetches as the server would: on the addresses the
	// server may reach.
	{"webhook-allow-private", func(c config) string { return strconv.FormatBool(c.WebhookAllowPrivate) }, func(c *config, v string) error {
		b, err := strconv.ParseBool(v)
		if err == nil {
			c.WebhookAllowPrivate = b
		}
		return err
	}},
	// domain add: the server's bound on a tenant's domains, and whether
	// subdomains of the public host are allowed.
	{"max-domains-per-tenant", func(c config) string { return strconv.Itoa(c.MaxDomainsPerTenant) }, func(c *config, v string) error {
		n, err := strconv.Atoi(v)
		if err == nil {
			c.MaxDomainsPerTenant = n
		}
		return err
	}},
	{"allow-public-subdomains", func(c config) string { return strconv.FormatBool(c.AllowPublicSubdomains) }, func(c *config, v string) error {
		b, err := strconv.ParseBool(v)
		if err == nil {
			c.AllowPublicSubdomains = b
		}
		return err
	}},
}

// givenInstanceFlags returns, by flag name, where each instance setting
// given to this process came from (the flag or its environment variable);
// a default is not given.
func givenInstanceFlags(get func(string) (string, string)) map[string]string {
	given := map[string]string{}
	for _, s := range instanceSettings {
		if _, source := get(s.flag); !isDefault(source) {
			given[s.flag] = source
		}
	}
	return given
}

// instanceValues are this process's instance settings, as serve stores
// them.
func (a *app) instanceValues() map[string]string {
	out := make(map[string]string, len(instanceSettings))
	for _, s := range instanceSettings {
		out[s.flag] = s.get(a.cfg)
	}
	return out
}

// useInstanceSettings puts the settings serve stored into a.cfg, but for
// those given to this command, which win: each that differs from the
// server's gets a warning. A database serve never ran on has none, and
// the flags' defaults stay.
func (a *app) useInstanceSettings(st linkforge.InstanceStore) error {
	stored, err := st.InstanceSettings(a.ctx)
	if err != nil {
		return fmt.Errorf("read the server's settings: %w", err)
	}
	for _, s := range instanceSettings {
		v, ok := stored[s.flag]
		if !ok {
			continue
		}
		if source, given := a.cfg.given[s.flag]; given {
			if mine := s.get(a.cfg); mine != v {
				fmt.Fprintf(a.stderr, "linkforge: warning: %s is %s, but the server runs with %s (stored by linkforge serve); using %s\n",
					source, mine, v, mine)
			}
			continue
		}
		if err := s.set(&a.cfg, v); err != nil {
			// Written by another release: say so, keep the default.
			fmt.Fprintf(a.stderr, "linkforge: warning: the server's --%s %q is not understood here (%v); using %s\n",
				s.flag, v, err, s.get(a.cfg))
		}
	}
	return nil
}

// errNoDatabase is a command other than serve and migrate pointed at no
// LinkForge database: it makes none, since a token or a user in a new
// empty database is one the server never sees.
var errNoDatabase = errors.New("no LinkForge database")

// noDatabase is errNoDatabase naming where the command looked, as the
// user gave it.
func (a *app) noDatabase() error {
	where := a.dataDirArg
	if a.cfg.usesPostgres() {
		where = redact(a.cfg.DatabaseURL)
	}
	return fmt.Errorf("%w at %s; give --data-dir or --database-url", errNoDatabase, where)
}

// createsDatabase reports whether the command may make a new database:
// serve, and migrate, which exists to make or upgrade one.
func (a *app) createsDatabase() bool { return a.cmd == "serve" || a.cmd == "migrate" }
