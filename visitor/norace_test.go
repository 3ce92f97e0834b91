//go:build !race

package visitor

const raceEnabled = false
