package storetest

import (
	"bytes"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/linkforge/linkforge"
)

// RunTLS runs the conformance cases of linkforge.TLSStore, the storage of
// --tls auto (package certs), as subtests of t. open returns a fresh,
// migrated, empty store.
func RunTLS(t *testing.T, open func(t *testing.T) linkforge.TLSStore) {
	t.Helper()
	cases := []struct {
		name string
		run  func(t *testing.T, s linkforge.TLSStore)
	}{
		{"Assets", testTLSAssets},
		{"AssetPrefixes", testTLSAssetPrefixes},
		{"Lock", testTLSLock},
		{"LockRace", testTLSLockRace},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { c.run(t, open(t)) })
	}
}

func testTLSAssets(t *testing.T, s linkforge.TLSStore) {
	ctx := t.Context()
	at := time.Date(2026, 3, 1, 12, 0, 0, 123456000, time.UTC)
	if _, err := s.TLSAsset(ctx, "acme/a.crt"); linkforge.ErrorCode(err) != linkforge.ENotFound {
		t.Fatalf("TLSAsset of a missing key: %v, want not_found", err)
	}
	key := []byte{0, 1, 2, 0xff} // binary values survive
	if err := s.PutTLSAssets(ctx, []linkforge.TLSAsset{
		{Key: "acme/a.key", Value: key, Modified: at},
		{Key: "acme/a.crt", Value: []byte("cert 1"), Modified: at},
	}); err != nil {
		t.Fatal(err)
	}
	got, err := s.TLSAsset(ctx, "acme/a.key")
	if err != nil || !bytes.Equal(got.Value, key) || !got.Modified.Equal(at) || got.Modified.Location() != time.UTC {
		t.Fatalf("TLSAsset = %+v, %v; want %v at %v UTC", got, err, key, at)
	}
	later := at.Add(time.Hour)
	if err := s.PutTLSAssets(ctx, []linkforge.TLSAsset{{Key: "acme/a.crt", Value: []byte("cert 2"), Modified: later}}); err != nil {
		t.Fatal(err)
	}
	if got, err := s.TLSAsset(ctx, "acme/a.crt"); err != nil || string(got.Value) != "cert 2" || !got.Modified.Equal(later) {
		t.Fatalf("after overwrite: %+v, %v", got, err)
	}
	if err := s.DeleteTLSAssets(ctx, "acme/a.crt"); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteTLSAssets(ctx, "acme/a.crt"); err != nil {
		t.Fatalf("deleting a missing key: %v", err)
	}
	if keys, err := s.TLSAssetKeys(ctx, ""); err != nil || !slices.Equal(keys, []string{"acme/a.key"}) {
		t.Fatalf("keys after delete: %v, %v", keys, err)
	}
}

// testTLSAssetPrefixes: a prefix is a whole path component ("a" holds
// "a/b", not "ab/c"), for listing and for deleting.
func testTLSAssetPrefixes(t *testing.T, s linkforge.TLSStore) {
	ctx := t.Context()
	var assets []linkforge.TLSAsset
	for _, k := range []string{"a/x", "a/b/y", "a/b/z", "ab/c", "a0", "a.b/d", "b/a/x"} {
		assets = append(assets, linkforge.TLSAsset{Key: k, Value: []byte(k), Modified: time.Unix(0, 0).UTC()})
	}
	if err := s.PutTLSAssets(ctx, assets); err != nil {
		t.Fatal(err)
	}
	for prefix, want := range map[string][]string{
		"a":   {"a/b/y", "a/b/z", "a/x"},
		"a/b": {"a/b/y", "a/b/z"},
		"ab":  {"ab/c"},
		"c":   {},
	} {
		if keys, err := s.TLSAssetKeys(ctx, prefix); err != nil || !slices.Equal(keys, want) {
			t.Errorf("TLSAssetKeys(%q) = %q, %v; want %q", prefix, keys, err, want)
		}
	}
	if err := s.DeleteTLSAssets(ctx, "a"); err != nil {
		t.Fatal(err)
	}
	want := []string{"a.b/d", "a0", "ab/c", "b/a/x"}
	if keys, err := s.TLSAssetKeys(ctx, ""); err != nil || !slices.Equal(keys, want) {
		t.Errorf("after deleting a: %q, %v; want %q", keys, err, want)
	}
}

func testTLSLock(t *testing.T, s linkforge.TLSStore) {
	ctx := t.Context()
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	ttl := time.Minute
	take := func(owner string, at time.Time) bool {
		t.Helper()
		ok, err := s.AcquireTLSLock(ctx, "issue/go.acme.com", owner, at, ttl)
		if err != nil {
			t.Fatal(err)
		}
		return ok
	}
	if !take("n1", now) {
		t.Fatal("a free lock was not taken")
	}
	if take("n2", now.Add(59*time.Second)) {
		t.Fatal("n2 took n1's lock before it expired")
	}
	if !take("n1", now.Add(time.Second)) {
		t.Fatal("n1 could not take its own lock again")
	}
	if ok, err := s.ExtendTLSLock(ctx, "issue/go.acme.com", "n1", now.Add(50*time.Second), ttl); err != nil || !ok {
		t.Fatalf("extend by the holder: %v, %v", ok, err)
	}
	// Extended to 1m50s: still n1's at 1m30s.
	if take("n2", now.Add(90*time.Second)) {
		t.Fatal("n2 took the lock n1 extended")
	}
	if ok, err := s.ExtendTLSLock(ctx, "issue/go.acme.com", "n2", now, ttl); err != nil || ok {
		t.Fatalf("extend by another owner: %v, %v; want false", ok, err)
	}
	// A holder that stopped extending (killed) loses it at its expiry.
	if !take("n2", now.Add(110*time.Second)) {
		t.Fatal("n2 could not take the expired lock")
	}
	if err := s.ReleaseTLSLock(ctx, "issue/go.acme.com", "n1"); err != nil {
		t.Fatal(err)
	}
	if take("n3", now.Add(111*time.Second)) {
		t.Fatal("n1's release freed n2's lock")
	}
	if err := s.ReleaseTLSLock(ctx, "issue/go.acme.com", "n2"); err != nil {
		t.Fatal(err)
	}
	if !take("n3", now.Add(112*time.Second)) {
		t.Fatal("the released lock was not free")
	}
	if ok, err := s.AcquireTLSLock(ctx, "issue/other.acme.com", "n1", now, ttl); err != nil || !ok {
		t.Fatalf("a lock of another name: %v, %v", ok, err)
	}
}

// testTLSLockRace: of owners taking one free lock at once, exactly one
// gets it.
func testTLSLockRace(t *testing.T, s linkforge.TLSStore) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	var (
		wg  sync.WaitGroup
		won atomic.Int32
	)
	for i := range 8 {
		wg.Go(func() {
			ok, err := s.AcquireTLSLock(t.Context(), "issue/race", fmt.Sprintf("n%d", i), now, time.Minute)
			if err != nil {
				t.Error(err)
			}
			if ok {
				won.Add(1)
			}
		})
	}
	wg.Wait()
	if n := won.Load(); n != 1 {
		t.Errorf("%d owners took the lock, want 1", n)
	}
}
