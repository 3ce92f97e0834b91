package main

import (
	"bufio"
	"context"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The data dir is the user's only: serve on a fresh data dir creates it 0700
// and every file in it (the SQLite database, its -wal and -shm files, the
// journal's click log segments and lock) 0600, the click log's directory
// 0700, whatever the umask lets through.
func TestDataDirIsPrivate(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	pr, pw := io.Pipe()
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, []string{"serve", "--addr", "127.0.0.1:0", "--data-dir", dir}, io.Discard, pw, envOf(nil))
		pw.Close()
	}()
	sc := bufio.NewScanner(pr)
	var files map[string]fs.FileMode
	for sc.Scan() {
		if strings.Contains(sc.Text(), `"msg":"listening"`) && files == nil {
			// Look while serving: the -wal and -shm files exist now.
			files = modes(t, dir)
			cancel()
		}
	}
	if code := <-done; code != exitOK {
		t.Fatalf("serve returned %d", code)
	}
	if files == nil {
		t.Fatalf("serve never logged listening")
	}
	st, err := os.Stat(dir)
	if err != nil {
		t.Fatalf("stat data dir: %v", err)
	}
	if m := st.Mode().Perm(); m != 0o700 {
		t.Errorf("data dir mode %v, want 0700", m)
	}
	if _, ok := files["journal.db.lock"]; !ok {
		t.Errorf("data dir lacks journal.db.lock while serving: %v", files)
	}
	segments := 0
	for name := range files {
		if strings.HasPrefix(name, "clicklog/") && strings.HasSuffix(name, ".log") {
			segments++
		}
	}
	if segments == 0 {
		t.Errorf("data dir has no click log segment while serving: %v", files)
	}
	if st, err := os.Stat(filepath.Join(dir, "clicklog")); err != nil || st.Mode().Perm() != 0o700 {
		t.Errorf("click log dir: %v, want mode 0700", st)
	}
	var sqliteFiles int
	for name, m := range files {
		if m != 0o600 {
			t.Errorf("%s: mode %v, want 0600", name, m)
		}
		if strings.HasSuffix(name, "-wal") || strings.HasSuffix(name, "-shm") {
			sqliteFiles++
		}
	}
	if sqliteFiles < 2 {
		t.Errorf("%d -wal/-shm files while serving, want those of the database: %v", sqliteFiles, files)
	}
}

// modes returns the permission bits of the regular files under dir.
func modes(t *testing.T, dir string) map[string]fs.FileMode {
	t.Helper()
	out := map[string]fs.FileMode{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		out[rel] = info.Mode().Perm()
		return nil
	})
	if err != nil {
		t.Fatalf("walk %s: %v", dir, err)
	}
	return out
}
