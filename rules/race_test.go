//go:build race

package rules

// raceEnabled: the race detector makes sync.Pool drop objects at random
// (the visitor hash keeps its HMAC states in one), so the allocation count
// of a path that hashes is not checked under it.
const raceEnabled = true
