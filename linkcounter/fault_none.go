//go:build !linkforge_faults

package linkcounter

// holdCommit is the fault-injection point of the crash tests (see
// fault_hold.go); in a production build it does nothing and is inlined away.
func (*committer) holdCommit(*commitBatch) {}
