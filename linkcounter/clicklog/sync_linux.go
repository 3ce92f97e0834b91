//go:build linux

package clicklog

import (
	"os"
	"syscall"
)

// fdatasync flushes a segment's data and the metadata needed to read it back
// (its size), not its timestamps: one device flush per group commit.
func fdatasync(f *os.File) error {
	for {
		err := syscall.Fdatasync(int(f.Fd()))
		if err != syscall.EINTR {
			if err != nil {
				return &os.PathError{Op: "fdatasync", Path: f.Name(), Err: err}
			}
			return nil
		}
	}
}
