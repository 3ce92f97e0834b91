//go:build linkforge_faults

package linkcounter

import (
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// Fault injection for the crash tests of the real binary (cmd/linkforge,
// built with -tags linkforge_faults): the committer holds every journal
// commit while a file named hold-commit exists next to the journal, and
// while it holds, it keeps the number of clicks waiting for that commit (the
// held batch and the one filling behind it) in a file named commit-held.
// A test can then kill the process at a point where it knows exactly which
// clicks were committed. Production builds have no such check (see
// fault_none.go).
const (
	holdCommitFile = "hold-commit"
	commitHeldFile = "commit-held"
)

// holdCommit blocks while the hold file exists. b is the batch about to be
// committed: taken from c.cur already, so any click added after the file
// appeared is held too.
func (c *committer) holdCommit(b *commitBatch) {
	dir := filepath.Dir(c.j.Path()) // the data dir: Path is its click log
	hold, held := filepath.Join(dir, holdCommitFile), filepath.Join(dir, commitHeldFile)
	last := int64(-1)
	for {
		if _, err := os.Stat(hold); err != nil {
			if last >= 0 {
				os.Remove(held)
			}
			return
		}
		c.mu.Lock()
		n := b.clicks + c.cur.clicks
		c.mu.Unlock()
		if n != last {
			// Renamed into place, so a reader never sees a partial number.
			tmp := held + ".tmp"
			if os.WriteFile(tmp, fmt.Appendf(nil, "%d\n", n), 0o600) == nil && os.Rename(tmp, held) == nil {
				last = n
			}
		}
		time.Sleep(time.Millisecond)
	}
}
