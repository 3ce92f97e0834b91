// Package storetest is the conformance suite of linkforge.Store: one set of
// cases that every storage backend runs (store/sqlite, store/postgres).
//
// One suite rather than one per backend, on the model of riverqueue/river's
// driver test suite (riverdrivertest, run by its pgx and SQLite drivers):
// the web server, the counters and the alarms are written against the
// interface, so every promise they rely on (errors codes, tenant isolation,
// cursor pagination, absolute rollup upserts, stats bucketing in UTC,
// microsecond UTC times) must hold identically on every backend. Two copies
// of the tests would drift apart, and a backend-specific quirk would then
// surface as a production bug on the other database only.
//
// A backend's test calls Run with a function that opens a fresh, migrated,
// empty store on a real database (never a mock of it):
//
//	func TestStore(t *testing.T) {
//		storetest.Run(t, func(t *testing.T) linkforge.Store {
//			db := mustOpen(t) // a new file, schema or database per call
//			t.Cleanup(func() { db.Close() })
//			return db
//		})
//	}
//
// The cases assume nothing about the ids a backend assigns (they need not
// start at 1 nor be dense) and use their own tenant names and slugs, so they
// also pass on a store that is not quite empty.
package storetest
