package storetest

import (
	"maps"
	"testing"

	"github.com/linkforge/linkforge"
)

// RunInstance runs the conformance cases of linkforge.InstanceStore as
// subtests of t; open returns a fresh, migrated, empty store, as Run's.
func RunInstance(t *testing.T, open func(t *testing.T) linkforge.InstanceStore) {
	t.Helper()
	t.Run("InstanceSettings", func(t *testing.T) { testInstanceSettings(t, open(t)) })
}

func testInstanceSettings(t *testing.T, s linkforge.InstanceStore) {
	ctx := t.Context()
	if ok, err := s.Initialized(ctx); err != nil || !ok {
		t.Fatalf("Initialized of a migrated store = %v, %v; want true", ok, err)
	}
	got, err := s.InstanceSettings(ctx)
	if err != nil || got == nil || len(got) != 0 {
		t.Fatalf("InstanceSettings of a fresh store = %#v, %v; want an empty map", got, err)
	}
	first := map[string]string{"public-url": "https://sho.rt", "domain-verify": "none"}
	if err := s.SetInstanceSettings(ctx, first); err != nil {
		t.Fatal(err)
	}
	if got, err := s.InstanceSettings(ctx); err != nil || !maps.Equal(got, first) {
		t.Fatalf("InstanceSettings = %v, %v; want %v", got, err, first)
	}
	// A later start replaces what it gives and leaves the rest (a key
	// an older release stored, read by nobody now).
	if err := s.SetInstanceSettings(ctx, map[string]string{"public-url": "https://go.example", "extra": ""}); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"public-url": "https://go.example", "domain-verify": "none", "extra": ""}
	if got, err := s.InstanceSettings(ctx); err != nil || !maps.Equal(got, want) {
		t.Fatalf("InstanceSettings after a second set = %v, %v; want %v", got, err, want)
	}
	if err := s.SetInstanceSettings(ctx, nil); err != nil {
		t.Errorf("SetInstanceSettings(nil): %v", err)
	}
}
