//go:build !race

package linkcache

// raceEnabled scales the in-package tests whose size the race detector
// multiplies (each SQLite read costs tens of milliseconds under it).
const raceEnabled = false
