//go:build race

package visitor

// raceEnabled: the race detector makes sync.Pool drop objects at random, so
// allocation counts are not checked under it.
const raceEnabled = true
