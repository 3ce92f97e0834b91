package main

import (
	"net/url"

	"github.com/linkforge/linkforge/oidclogin"
)

// oidcConfig is single sign-on's flags (package oidclogin).
type oidcConfig struct {
	Issuer       string // empty: single sign-on is off
	ClientID     string
	ClientSecret string
	AutoJoin     oidclogin.AutoJoin
}

// oidcFlags are global flags, as the others serve reads, appended to
// globalFlags in init so that they keep their own file.
var oidcFlags = []flagSpec{
	{"oidc-issuer", "URL", "", "OpenID Connect provider's issuer URL: the login page offers single sign-on (redirect URL PUBLIC_URL/login/oidc/callback); empty: off"},
	{"oidc-client-id", "ID", "", "the client id registered at the provider (with --oidc-issuer)"},
	{"oidc-client-secret", "SECRET", "", "the client secret (with --oidc-issuer; better given as LINKFORGE_OIDC_CLIENT_SECRET)"},
	{"oidc-auto-join", "TENANT:ROLE", "", "an unknown verified email joins TENANT with ROLE (owner, editor or viewer); empty: it is refused"},
}

func init() { globalFlags = append(globalFlags, oidcFlags...) }

// buildOIDCConfig validates the single sign-on flags into cfg.OIDC.
func buildOIDCConfig(cfg *config, get func(string) (string, string)) error {
	var (
		o      oidcConfig
		source string
	)
	o.Issuer, source = get("oidc-issuer")
	o.ClientID, _ = get("oidc-client-id")
	o.ClientSecret, _ = get("oidc-client-secret")
	join, joinSource := get("oidc-auto-join")
	if o.Issuer == "" {
		if o.ClientID != "" || o.ClientSecret != "" || join != "" {
			return usagef("the --oidc-client-id, --oidc-client-secret and --oidc-auto-join flags need --oidc-issuer")
		}
		return nil
	}
	// go-oidc compares the issuer with the discovery document's byte for
	// byte, so it is taken as given, but it must be an absolute URL.
	if u, err := url.Parse(o.Issuer); err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" ||
		u.RawQuery != "" || u.Fragment != "" {
		return usagef("invalid %s %q: want the provider's issuer URL, such as https://accounts.example.com", source, o.Issuer)
	}
	if o.ClientID == "" || o.ClientSecret == "" {
		return usagef("--oidc-issuer needs --oidc-client-id and --oidc-client-secret")
	}
	var err error
	if o.AutoJoin, err = oidclogin.ParseAutoJoin(join); err != nil {
		return usagef("invalid %s: %v", joinSource, err)
	}
	cfg.OIDC = o
	return nil
}

// login returns web's single sign-on settings; nil when off.
func (o oidcConfig) login() *oidclogin.Config {
	if o.Issuer == "" {
		return nil
	}
	return &oidclogin.Config{Issuer: o.Issuer, ClientID: o.ClientID, ClientSecret: o.ClientSecret, AutoJoin: o.AutoJoin}
}
