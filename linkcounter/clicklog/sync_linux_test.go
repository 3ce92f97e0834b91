//go:build linux

package clicklog

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// fdatasync issues the system call: the kernel refuses it on a pipe
// (EINVAL) and on a closed descriptor (EBADF), and accepts it on a file.
// A fdatasync that returned without the call would pass the first and
// fail these.
func TestFdatasync(t *testing.T) {
	f, err := os.Create(filepath.Join(t.TempDir(), "seg"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write([]byte("record")); err != nil {
		t.Fatal(err)
	}
	if err := fdatasync(f); err != nil {
		t.Errorf("fdatasync of a file: %v", err)
	}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	if err := fdatasync(w); !errors.Is(err, syscall.EINVAL) {
		t.Errorf("fdatasync of a pipe: %v, want EINVAL", err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if err := fdatasync(f); err == nil {
		t.Error("fdatasync of a closed file: no error")
	}
}
