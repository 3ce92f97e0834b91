package main

import (
	"strings"
	"testing"

	"github.com/linkforge/linkforge/domain"
)

// TestDomainVerifyFlag: --domain-verify defaults to http, takes none, and
// refuses anything else naming the flag.
func TestDomainVerifyFlag(t *testing.T) {
	for _, tt := range []struct {
		args []string
		env  map[string]string
		want domain.VerifyMode
	}{
		{nil, nil, domain.VerifyHTTP},
		{[]string{"serve", "--domain-verify", "none"}, nil, domain.VerifyNone},
		{nil, map[string]string{"LINKFORGE_DOMAIN_VERIFY": "none"}, domain.VerifyNone},
	} {
		inv, err := parseArgs(tt.args, func(k string) string { return tt.env[k] })
		if err != nil || inv.cfg.DomainVerify != tt.want {
			t.Errorf("parseArgs(%q, %v): DomainVerify %q, %v; want %q", tt.args, tt.env, inv.cfg.DomainVerify, err, tt.want)
		}
	}
	_, err := parseArgs([]string{"serve", "--domain-verify", "dns"}, func(string) string { return "" })
	if err == nil || !strings.Contains(err.Error(), "--domain-verify") {
		t.Errorf("--domain-verify dns: %v, want an error naming the flag", err)
	}
}
