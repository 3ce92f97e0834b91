package certs

import (
	"context"
	"errors"
	"io/fs"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/linkforge/linkforge/store/sqlite"
)

func newTestStorage(t *testing.T) *storage {
	t.Helper()
	db, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "linkforge.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if err := db.Migrate(t.Context()); err != nil {
		t.Fatal(err)
	}
	return newStorage(db, "test", time.Now, time.Minute, 10*time.Millisecond)
}

// TestStorageWritesCertificatesWhole: a certificate's key and certificate
// reach the database only with its metadata, in one transaction, so that a
// process killed between certmagic's three writes leaves the previous
// certificate whole rather than a new key beside an old certificate.
func TestStorageWritesCertificatesWhole(t *testing.T) {
	s := newTestStorage(t)
	ctx := t.Context()
	dir := "certificates/acme.example-directory/go.acme.com/go.acme.com"
	for _, ext := range []string{".key", ".crt"} {
		if err := s.Store(ctx, dir+ext, []byte("new"+ext)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.Load(ctx, dir+".key"); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("the key is visible before its metadata: %v", err)
	}
	if err := s.Store(ctx, dir+".json", []byte("{}")); err != nil {
		t.Fatal(err)
	}
	for _, ext := range []string{".key", ".crt", ".json"} {
		if _, err := s.Load(ctx, dir+ext); err != nil {
			t.Errorf("%s after the metadata: %v", ext, err)
		}
	}
	// Other keys are written at once.
	if err := s.Store(ctx, "acme/dir/users/a/a.key", []byte("account")); err != nil {
		t.Fatal(err)
	}
	if v, err := s.Load(ctx, "acme/dir/users/a/a.key"); err != nil || string(v) != "account" {
		t.Errorf("account key: %q, %v", v, err)
	}
}

func TestStorageListAndStat(t *testing.T) {
	s := newTestStorage(t)
	ctx := t.Context()
	for _, k := range []string{"acme/a/users/x.json", "acme/a/challenge_tokens/h.json", "acme/b/users/y.json", "acmeish/z"} {
		if err := s.Store(ctx, k, []byte(k)); err != nil {
			t.Fatal(err)
		}
	}
	if got, err := s.List(ctx, "acme", false); err != nil || !slices.Equal(got, []string{"acme/a", "acme/b"}) {
		t.Errorf("List(acme) = %q, %v", got, err)
	}
	if got, err := s.List(ctx, "acme/a", true); err != nil || len(got) != 2 {
		t.Errorf("List(acme/a, recursive) = %q, %v", got, err)
	}
	if _, err := s.List(ctx, "nothing", true); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("List of nothing: %v, want fs.ErrNotExist", err)
	}
	if info, err := s.Stat(ctx, "acme/a"); err != nil || info.IsTerminal {
		t.Errorf("Stat of a directory: %+v, %v", info, err)
	}
	if info, err := s.Stat(ctx, "acmeish/z"); err != nil || !info.IsTerminal || info.Size != int64(len("acmeish/z")) {
		t.Errorf("Stat of a value: %+v, %v", info, err)
	}
	if !s.Exists(ctx, "acme") || s.Exists(ctx, "acm") {
		t.Error("Exists takes a key's prefix that is not a path component")
	}
	if err := s.Delete(ctx, "acme/a"); err != nil {
		t.Fatal(err)
	}
	if s.Exists(ctx, "acme/a/users/x.json") || !s.Exists(ctx, "acme/b/users/y.json") {
		t.Error("Delete of a directory")
	}
}

// TestStorageLock: the lock is one per name across storages (nodes) and
// within one; a waiter gets it when the holder unlocks.
func TestStorageLock(t *testing.T) {
	a := newTestStorage(t)
	b := newStorage(a.db, "other", time.Now, time.Minute, 10*time.Millisecond)
	ctx := t.Context()
	if err := a.Lock(ctx, "issue_cert_x"); err != nil {
		t.Fatal(err)
	}
	if ok, err := b.TryLock(ctx, "issue_cert_x"); err != nil || ok {
		t.Fatalf("another node took a held lock: %v, %v", ok, err)
	}
	if ok, err := a.TryLock(ctx, "issue_cert_x"); err != nil || ok {
		t.Fatalf("the holder's process took its held lock again: %v, %v", ok, err)
	}
	got := make(chan error, 1)
	go func() { got <- b.Lock(ctx, "issue_cert_x") }()
	if err := a.Unlock(ctx, "issue_cert_x"); err != nil {
		t.Fatal(err)
	}
	if err := <-got; err != nil {
		t.Fatalf("the waiter: %v", err)
	}
	if err := b.Unlock(ctx, "issue_cert_x"); err != nil {
		t.Fatal(err)
	}
	cancelled, cancel := context.WithCancel(ctx)
	if err := a.Lock(ctx, "issue_cert_y"); err != nil {
		t.Fatal(err)
	}
	cancel()
	if err := b.Lock(cancelled, "issue_cert_y"); !errors.Is(err, context.Canceled) {
		t.Errorf("Lock with a cancelled context: %v", err)
	}
	if err := a.releaseAll(ctx); err != nil {
		t.Fatal(err)
	}
}
