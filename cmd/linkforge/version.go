package main

import (
	"fmt"
	"io"
	"runtime"
	"runtime/debug"

	"github.com/prometheus/client_golang/prometheus"
)

// The build's stamp, set by scripts/release and the Dockerfile with
// -ldflags "-X main.version=v0.4.0 -X main.commit=… -X main.date=…". Empty
// in a plain go build or go install, where the Go toolchain's own stamp
// (the module version and the vcs.* settings) is read instead.
var (
	version string
	commit  string
	date    string
)

// buildInfo is what `linkforge version` prints, the startup log says and
// the linkforge_build_info metric carries.
type buildInfo struct {
	Version   string // a release tag (v0.4.0), a pseudo-version, or devel+<commit>
	Commit    string // vcs.revision; "unknown" when built without VCS information
	Modified  bool   // vcs.modified: built from a work tree with uncommitted changes
	Date      string // the commit's time (vcs.time) or the release's; "unknown" without
	GoVersion string
}

// readBuildInfo reads the stamp of the running binary.
func readBuildInfo() buildInfo {
	info, _ := debug.ReadBuildInfo()
	return stampOf(version, commit, date, info)
}

// stampOf merges the ldflags stamp (which wins: a release names itself)
// with the toolchain's. It never answers a bare "(devel)", which says
// nothing about which source a binary came from: a build without a
// version gets "devel" and, when known, the short commit and -dirty.
func stampOf(version, commit, date string, info *debug.BuildInfo) buildInfo {
	b := buildInfo{Commit: "unknown", Date: "unknown", GoVersion: runtime.Version()}
	if info != nil {
		if v := info.Main.Version; v != "" && v != "(devel)" {
			b.Version = v
		}
		if info.GoVersion != "" {
			b.GoVersion = info.GoVersion
		}
		for _, s := range info.Settings {
			switch s.Key {
			case "vcs.revision":
				b.Commit = s.Value
			case "vcs.time":
				b.Date = s.Value
			case "vcs.modified":
				b.Modified = s.Value == "true"
			}
		}
	}
	if version != "" {
		b.Version = version
	}
	if commit != "" {
		// The release script stamps the commit it built; whether the
		// tree was clean it says in the version, not here.
		b.Commit, b.Modified = commit, false
	}
	if date != "" {
		b.Date = date
	}
	if b.Version == "" {
		b.Version = "devel"
		if b.Commit != "unknown" {
			b.Version += "+" + b.Commit[:min(12, len(b.Commit))]
			if b.Modified {
				b.Version += "-dirty"
			}
		}
	}
	return b
}

// commitLabel is the commit, marked when the work tree was modified.
func (b buildInfo) commitLabel() string {
	if b.Modified {
		return b.Commit + "+modified"
	}
	return b.Commit
}

// write prints the stamp, one "key: value" per line after the first.
func (b buildInfo) write(w io.Writer) {
	fmt.Fprintf(w, "linkforge %s\ncommit: %s\ndate: %s\ngo: %s\n", b.Version, b.commitLabel(), b.Date, b.GoVersion)
}

// logAttrs are the stamp's attributes of the startup log line.
func (b buildInfo) logAttrs() []any {
	return []any{"version", b.Version, "commit", b.commitLabel()}
}

// version is `linkforge version` (and --version).
func (a *app) version(invocation) int {
	readBuildInfo().write(a.stdout)
	return exitOK
}

// registerBuildInfo adds linkforge_build_info{version,commit,goversion} 1,
// so that dashboards can tell which build each node runs.
func registerBuildInfo(reg prometheus.Registerer, b buildInfo) error {
	g := prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "linkforge_build_info",
		Help: "Always 1; the labels say which build of LinkForge this process runs.",
	}, []string{"version", "commit", "goversion"})
	if err := reg.Register(g); err != nil {
		return fmt.Errorf("register build info: %w", err)
	}
	g.WithLabelValues(b.Version, b.commitLabel(), b.GoVersion).Set(1)
	return nil
}
