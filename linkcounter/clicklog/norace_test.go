//go:build !race

package clicklog

// raceEnabled loosens the memory bounds under the race detector, which
// inflates the heap.
const raceEnabled = false
