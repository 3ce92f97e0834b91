//go:build !linux

package main

import (
	"errors"
	"os/exec"
	"time"
)

// setChildAttrs does nothing where there is no parent-death signal: a child
// outlives a killed tool there, and is stopped by the tool's clean-up
// otherwise.
func setChildAttrs(*exec.Cmd) {}

// serverCredential is Linux-only: elsewhere the tool does not start its own
// PostgreSQL (pass --database-url).
func serverCredential() (*credential, error) {
	return nil, errors.New("starting a throwaway PostgreSQL is only supported on Linux; pass --database-url")
}

type credential struct{}

func runAs(cmd *exec.Cmd, _ *credential) { setChildAttrs(cmd) }

func chownTo(*credential, ...string) error { return nil }

// processCPU is Linux-only: elsewhere the table has no CPU figures.
func processCPU(int) (time.Duration, bool) { return 0, false }
