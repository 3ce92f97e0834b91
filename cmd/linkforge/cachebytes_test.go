package main

import (
	"strings"
	"testing"
)

// TestLinkCacheBytesFlag: --link-cache-bytes is a size (256MiB by
// default), at least 1MiB.
func TestLinkCacheBytesFlag(t *testing.T) {
	for _, c := range []struct {
		args []string
		env  map[string]string
		want int
	}{
		{nil, nil, 256 << 20},
		{[]string{"--link-cache-bytes", "64MiB"}, nil, 64 << 20},
		{nil, map[string]string{"LINKFORGE_LINK_CACHE_BYTES": "1GB"}, 1_000_000_000},
	} {
		inv, err := parseArgs(c.args, envOf(c.env))
		if err != nil || inv.cfg.LinkCacheBytes != c.want {
			t.Errorf("%q %v: %d, %v; want %d", c.args, c.env, inv.cfg.LinkCacheBytes, err, c.want)
		}
	}
	for _, bad := range []string{"lots", "1KB", "0", "-5MiB"} {
		if _, err := parseArgs([]string{"--link-cache-bytes", bad}, envOf(nil)); err == nil || !strings.Contains(err.Error(), "link-cache-bytes") {
			t.Errorf("--link-cache-bytes %s: %v, want an error naming the flag", bad, err)
		}
	}
}
