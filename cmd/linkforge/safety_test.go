package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"
)

// TestSafetyFlags: --threat-recheck and --threat-dns, from the flag or the
// variable; by default a daily re-check and no resolver (nothing is sent
// anywhere); a bad value stops with exit 2 naming the flag.
func TestSafetyFlags(t *testing.T) {
	inv, err := parseArgs(nil, envOf(nil))
	if err != nil {
		t.Fatal(err)
	}
	if c := inv.cfg.Safety; c.Recheck != 24*time.Hour || c.ThreatDNS != "" {
		t.Errorf("defaults: %+v", c)
	}
	inv, err = parseArgs([]string{"--threat-recheck", "0", "--threat-dns", "127.0.0.1:5353"}, envOf(nil))
	if err != nil {
		t.Fatal(err)
	}
	if c := inv.cfg.Safety; c.Recheck != 0 || c.ThreatDNS != "127.0.0.1:5353" {
		t.Errorf("flags: %+v", c)
	}
	inv, err = parseArgs(nil, envOf(map[string]string{"LINKFORGE_THREAT_DNS": "https://dns.example/dns-query", "LINKFORGE_THREAT_RECHECK": "7d"}))
	if err != nil {
		t.Fatal(err)
	}
	if c := inv.cfg.Safety; c.Recheck != 7*24*time.Hour || c.ThreatDNS != "https://dns.example/dns-query" {
		t.Errorf("variables: %+v", c)
	}
	for _, args := range [][]string{{"--threat-dns", "127.0.0.1"}, {"--threat-recheck", "10s"}, {"--threat-recheck", "soon"}} {
		var stdout, stderr bytes.Buffer
		if code := run(context.Background(), append([]string{"serve"}, args...), &stdout, &stderr, envOf(nil)); code != exitUsage {
			t.Errorf("%v: exit %d, want %d", args, code, exitUsage)
		}
		if !strings.Contains(stderr.String(), args[0]) {
			t.Errorf("%v: stderr %q does not name the flag", args, stderr.String())
		}
	}
}
