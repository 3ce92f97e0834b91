//go:build unix

package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"

	"github.com/linkforge/linkforge/internal/fileperm"
)

// lockDataDir takes the node journal's lock (linkcounter holds it for as
// long as a server runs) without waiting: held, a server is running on the
// data dir. The returned func releases it.
func lockDataDir(path string) (func(), error) {
	if err := os.MkdirAll(filepath.Dir(path), fileperm.Dir); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, fileperm.Private) //nolint:gosec // G304: the path is the operator's (a flag) or built from the data dir, never from a request
	if err != nil {
		return nil, fmt.Errorf("lock the data dir: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("a server is running on data dir %s (%s is locked): stop it first (SIGTERM flushes its clicks)", filepath.Dir(path), path)
		}
		return nil, fmt.Errorf("lock the data dir: %w", err)
	}
	// Closing the descriptor releases the lock.
	return func() { f.Close() }, nil
}
