package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"strconv"
	"syscall"
	"time"
)

// setChildAttrs makes the kernel kill a child process (a server the tool
// started) when the tool dies, so that a killed benchmark leaves no server
// behind holding a port and a data dir.
func setChildAttrs(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
}

// credential is the identity a child process runs as.
type credential = syscall.Credential

// serverCredential returns the identity to run PostgreSQL as: initdb and
// postgres refuse to run as root, so as root they run as the postgres user,
// or nobody. Otherwise (nil) they run as the current user.
func serverCredential() (*credential, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	for _, name := range []string{"postgres", "nobody"} {
		u, err := user.Lookup(name)
		if err != nil {
			continue
		}
		uid, err1 := strconv.ParseUint(u.Uid, 10, 32)
		gid, err2 := strconv.ParseUint(u.Gid, 10, 32)
		if err1 != nil || err2 != nil {
			continue
		}
		return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid), Groups: []uint32{}}, nil
	}
	return nil, errors.New("running as root and neither the postgres nor the nobody user exists; PostgreSQL refuses to run as root")
}

// runAs makes cmd run as cred (nil: as the current user) and die with the
// tool.
func runAs(cmd *exec.Cmd, cred *credential) {
	setChildAttrs(cmd)
	cmd.SysProcAttr.Credential = cred
}

// chownTo gives paths to cred's user (nil: nothing to do).
func chownTo(cred *credential, paths ...string) error {
	if cred == nil {
		return nil
	}
	for _, p := range paths {
		if err := os.Chown(p, int(cred.Uid), int(cred.Gid)); err != nil {
			return fmt.Errorf("chown %s to the server user: %w", p, err)
		}
	}
	return nil
}

// processCPU returns the CPU time (user + system) a process has used so far,
// from /proc/PID/stat; ok is false when it cannot be read.
func processCPU(pid int) (cpu time.Duration, ok bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, false
	}
	return parseProcStat(string(b))
}
