package main

import (
	"strings"
	"testing"

	"github.com/linkforge/linkforge/domain"
)

// TestDomainVerifyFlag: --domain-verify defaults to dns, takes http and
// none, and refuses anything else naming the flag;
// --allow-public-subdomains is off unless given.
func TestDomainVerifyFlag(t *testing.T) {
	for _, tt := range []struct {
		args []string
		env  map[string]string
		want domain.VerifyMode
	}{
		{nil, nil, domain.VerifyDNS},
		{[]string{"serve", "--domain-verify", "http"}, nil, domain.VerifyHTTP},
		{[]string{"serve", "--domain-verify", "none"}, nil, domain.VerifyNone},
		{nil, map[string]string{"LINKFORGE_DOMAIN_VERIFY": "none"}, domain.VerifyNone},
	} {
		inv, err := parseArgs(tt.args, func(k string) string { return tt.env[k] })
		if err != nil || inv.cfg.DomainVerify != tt.want {
			t.Errorf("parseArgs(%q, %v): DomainVerify %q, %v; want %q", tt.args, tt.env, inv.cfg.DomainVerify, err, tt.want)
		}
	}
	_, err := parseArgs([]string{"serve", "--domain-verify", "txt"}, func(string) string { return "" })
	if err == nil || !strings.Contains(err.Error(), "--domain-verify") {
		t.Errorf("--domain-verify txt: %v, want an error naming the flag", err)
	}
	for args, want := range map[string]bool{"serve": false, "serve --allow-public-subdomains": true} {
		inv, err := parseArgs(strings.Fields(args), func(string) string { return "" })
		if err != nil || inv.cfg.AllowPublicSubdomains != want {
			t.Errorf("parseArgs(%q): AllowPublicSubdomains %v, %v; want %v", args, inv.cfg.AllowPublicSubdomains, err, want)
		}
	}
}
