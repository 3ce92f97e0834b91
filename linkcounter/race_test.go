//go:build race

package linkcounter

// raceEnabled scales the heaviest tests down under the race detector, which
// makes the pure-Go SQLite an order of magnitude slower.
const raceEnabled = true
