//go:build !race

package expiry_test

// raceEnabled scales the bulk test down on SQLite under the race detector,
// which makes the pure-Go SQLite an order of magnitude slower.
const raceEnabled = false
