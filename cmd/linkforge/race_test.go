//go:build race

package main

// raceEnabled tells the end-to-end tests to build the binary with -race too,
// so that a data race in the server fails them.
const raceEnabled = true
