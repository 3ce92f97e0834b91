//go:build !race

package sqlite_test

// raceEnabled scales the bulk tests down under the race detector, which
// makes the pure-Go SQLite an order of magnitude slower.
const raceEnabled = false
