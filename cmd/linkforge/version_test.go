package main

import (
	"bytes"
	"runtime/debug"
	"testing"
)

// TestStampOf: the -ldflags stamp wins over the toolchain's; without one,
// a tagged module version (go install …@v0.4.0) is kept, and a build from
// a checkout says devel, its short commit and whether the tree was dirty,
// never a bare "(devel)".
func TestStampOf(t *testing.T) {
	vcs := func(version string, modified string) *debug.BuildInfo {
		info := &debug.BuildInfo{GoVersion: "go1.99", Main: debug.Module{Path: "github.com/linkforge/linkforge", Version: version}}
		info.Settings = []debug.BuildSetting{
			{Key: "vcs.revision", Value: "0123456789abcdef0123456789abcdef01234567"},
			{Key: "vcs.time", Value: "2026-12-01T10:00:00Z"},
			{Key: "vcs.modified", Value: modified},
		}
		return info
	}
	for _, c := range []struct {
		name                   string
		ver, commit, date      string
		info                   *debug.BuildInfo
		want, wantCommit, when string
	}{
		{"release", "v0.4.0", "feedbeef", "2026-12-05T00:00:00Z", vcs("(devel)", "true"), "v0.4.0", "feedbeef", "2026-12-05T00:00:00Z"},
		{"go install", "", "", "", vcs("v0.4.0", "false"), "v0.4.0", "0123456789abcdef0123456789abcdef01234567", "2026-12-01T10:00:00Z"},
		{"checkout", "", "", "", vcs("(devel)", "false"), "devel+0123456789ab", "0123456789abcdef0123456789abcdef01234567", "2026-12-01T10:00:00Z"},
		{"dirty checkout", "", "", "", vcs("", "true"), "devel+0123456789ab-dirty", "0123456789abcdef0123456789abcdef01234567+modified", "2026-12-01T10:00:00Z"},
		{"no stamp", "", "", "", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}}, "devel", "unknown", "unknown"},
		{"no build info", "", "", "", nil, "devel", "unknown", "unknown"},
	} {
		b := stampOf(c.ver, c.commit, c.date, c.info)
		if b.Version != c.want || b.commitLabel() != c.wantCommit || b.Date != c.when {
			t.Errorf("%s: version %q commit %q date %q, want %q %q %q", c.name, b.Version, b.commitLabel(), b.Date, c.want, c.wantCommit, c.when)
		}
	}
	var out bytes.Buffer
	stampOf("v0.4.0", "feedbeef", "2026-12-05T00:00:00Z", vcs("(devel)", "false")).write(&out)
	if want := "linkforge v0.4.0\ncommit: feedbeef\ndate: 2026-12-05T00:00:00Z\ngo: go1.99\n"; out.String() != want {
		t.Errorf("write: %q, want %q", out.String(), want)
	}
}
