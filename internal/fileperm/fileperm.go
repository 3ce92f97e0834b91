// Package fileperm keeps LinkForge's data files private to the user that
// runs it. The data dir holds the node journal and, with the default store,
// the whole database (tokens' hashes included): no other local user has a
// reason to read them.
package fileperm

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
)

// Private is the mode of every file in the data dir; Dir is the data dir's.
const (
	Private fs.FileMode = 0o600
	Dir     fs.FileMode = 0o700
)

// PrepareSQLite makes the SQLite database at path (created empty if it does
// not exist) and its -wal and -shm files, if they exist, mode Private.
//
// Call it before the driver opens the file. SQLite creates a database's
// -wal and -shm files with the mode of the database file itself (the unix
// VFS copies it, whatever the umask), so a database file created 0600 here
// gives 0600 side files too. Files left more open by an older release are
// narrowed.
func PrepareSQLite(path string) error {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, Private) //nolint:gosec // G304: the path is the operator's (a flag) or built from the data dir, never from a request
	if err != nil {
		return fmt.Errorf("prepare %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("prepare %s: %w", path, err)
	}
	for _, p := range []string{path, path + "-wal", path + "-shm"} {
		if err := os.Chmod(p, Private); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("prepare %s: %w", p, err)
		}
	}
	return nil
}
