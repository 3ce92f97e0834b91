package fileperm

import (
	"database/sql"
	"os"
	"path/filepath"
	"testing"

	_ "modernc.org/sqlite"
)

// A database prepared by PrepareSQLite, then opened in WAL mode by the
// driver, has 0600 -wal and -shm files; files left 0644 by an older release
// are narrowed to 0600.
func TestPrepareSQLite(t *testing.T) {
	t.Run("fresh", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "fresh.db")
		if err := PrepareSQLite(path); err != nil {
			t.Fatalf("prepare: %v", err)
		}
		db, err := sql.Open("sqlite", "file:"+path+"?_pragma=journal_mode(WAL)")
		if err != nil {
			t.Fatalf("open: %v", err)
		}
		defer db.Close()
		if _, err := db.Exec("CREATE TABLE t (x INTEGER); INSERT INTO t VALUES (1)"); err != nil {
			t.Fatalf("write: %v", err)
		}
		for _, p := range []string{path, path + "-wal", path + "-shm"} {
			wantMode(t, p, Private)
		}
	})
	t.Run("existing files are narrowed", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "old.db")
		for _, p := range []string{path, path + "-wal", path + "-shm"} {
			if err := os.WriteFile(p, nil, 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(p, 0o644); err != nil { // whatever the umask
				t.Fatal(err)
			}
		}
		if err := PrepareSQLite(path); err != nil {
			t.Fatalf("prepare: %v", err)
		}
		for _, p := range []string{path, path + "-wal", path + "-shm"} {
			wantMode(t, p, Private)
		}
	})
}

func wantMode(t *testing.T, path string, want os.FileMode) {
	t.Helper()
	st, err := os.Stat(path)
	if err != nil {
		t.Fatalf("stat: %v", err)
	}
	if got := st.Mode().Perm(); got != want {
		t.Errorf("%s: mode %v, want %v", filepath.Base(path), got, want)
	}
}
