//go:build !unix

package clicklog

import "os"

// lockFile only creates the lock file where flock is not available: there,
// keeping two processes off one journal is the operator's job.
func lockFile(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o600)
}

func unlockFile(f *os.File) error { return f.Close() }
