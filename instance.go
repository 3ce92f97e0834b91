package linkforge

import "context"

// InstanceStore keeps the settings a running deployment serves with that
// the other commands need (`linkforge user add` prints a URL on the public
// URL, `domain add` verifies as the server does): serve writes them at each
// start, the commands read them (docs/adr/019-command-line.md). Keys
// are serve's flag names, values their canonical text. Both stores
// implement it.
type InstanceStore interface {
	// Initialized reports whether the database holds LinkForge's schema: a
	// migration ran on it. Only serve and migrate make one.
	Initialized(ctx context.Context) (bool, error)
	// InstanceSettings returns every stored setting; none is an empty,
	// non-nil map.
	InstanceSettings(ctx context.Context) (map[string]string, error)
	// SetInstanceSettings stores settings, replacing the values of the
	// same keys, in one transaction; the keys not given stay.
	SetInstanceSettings(ctx context.Context, settings map[string]string) error
}
