package main

import (
	"fmt"
	"io"
	"runtime"
	"runtime/debug"

	"github.com/prometheus/client_golang/prometheus"
)

// buildInfo is what `linkforge version` prints and the linkforge_build_info
// metric carries: the module version, the commit and the Go release the
// binary was built from, as the Go toolchain stamped them.
type buildInfo struct {
	Version   string // module version, "(devel)" for a build from a checkout without a tag
	Commit    string // vcs.revision; "unknown" when built without VCS information
	Modified  bool   // vcs.modified: built from a work tree with uncommitted changes
	GoVersion string
}

// readBuildInfo reads the stamp of the running binary.
func readBuildInfo() buildInfo {
	b := buildInfo{Version: "(devel)", Commit: "unknown", GoVersion: runtime.Version()}
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return b
	}
	if info.Main.Version != "" {
		b.Version = info.Main.Version
	}
	if info.GoVersion != "" {
		b.GoVersion = info.GoVersion
	}
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			b.Commit = s.Value
		case "vcs.modified":
			b.Modified = s.Value == "true"
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
	fmt.Fprintf(w, "linkforge %s\ncommit: %s\ngo: %s\n", b.Version, b.commitLabel(), b.GoVersion)
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
