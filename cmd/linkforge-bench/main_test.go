package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
)

func TestRunExitCodes(t *testing.T) {
	tests := []struct {
		name   string
		args   []string
		code   int
		stdout string
		stderr string
	}{
		{name: "help", args: []string{"--help"}, code: exitOK, stdout: "Usage: linkforge-bench"},
		{name: "bad flag", args: []string{"--workers", "many"}, code: exitUsage, stderr: "Run 'linkforge-bench --help'"},
		{name: "bad scenario", args: []string{"throughput"}, code: exitUsage, stderr: `unknown scenario "throughput"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr strings.Builder
			code := run(context.Background(), tt.args, strings.NewReader(""), &stdout, &stderr)
			if code != tt.code {
				t.Errorf("exit %d, want %d\nstderr: %s", code, tt.code, stderr.String())
			}
			if !strings.Contains(stdout.String(), tt.stdout) || !strings.Contains(stderr.String(), tt.stderr) {
				t.Errorf("stdout %q, stderr %q; want %q and %q", stdout.String(), stderr.String(), tt.stdout, tt.stderr)
			}
		})
	}
}

func TestShown(t *testing.T) {
	base := errors.New("302s received 10, rollup total 9")
	err := fmt.Errorf("sqlite: %w", shown(base))
	if !errors.As(err, new(shownError)) || !errors.Is(err, base) {
		t.Errorf("shown error %v: want it found by errors.As and still wrapping its cause", err)
	}
	if shown(nil) != nil {
		t.Error("shown(nil) is not nil")
	}
	if got := firstLine("linkforge exited: exit status 1\nstderr line"); got != "linkforge exited: exit status 1" {
		t.Errorf("firstLine = %q", got)
	}
}
