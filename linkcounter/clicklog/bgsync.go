package clicklog

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/linkforge/linkforge/linkcounter/clicklog/internal/journalopt"
)

// DefaultBackgroundSync is how often --journal-sync normal fdatasyncs the
// click log behind the commits (the --journal-sync flag): a process crash
// loses nothing, a power loss at most the clicks of the last interval (plus
// the one fdatasync under way).
const DefaultBackgroundSync = 100 * time.Millisecond

// WithBackgroundSync makes a SyncWriteOnly journal fdatasync its open
// segment every interval while it has writes not yet synced, on a
// goroutine of its own: commits never wait for it, and a power loss costs
// at most an interval of clicks instead of whatever the kernel had not
// written back (up to its dirty_expire, 30 s by default). A failed sync
// stops the journal as one at SyncEveryCommit does: the kernel may have
// dropped the pages, so what the file holds is no longer known.
// It changes nothing at SyncEveryCommit, and interval <= 0 turns it off.
func WithBackgroundSync(interval time.Duration) Option {
	return func(o *journalopt.Options) { o.BackgroundSync = interval }
}

// runBackgroundSync is the goroutine of WithBackgroundSync. It syncs
// outside wmu, so the commits go on meanwhile, and under fileMu, so that
// no segment is closed under it; a segment that rotate closed in between
// was synced by rotate itself.
func (j *Journal) runBackgroundSync(interval time.Duration) {
	defer close(j.bgDone)
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-j.bgStop:
			return
		case <-t.C:
		}
		if !j.unsynced.Swap(false) {
			continue
		}
		j.wmu.Lock()
		f, gen, done := j.file, j.fileGen, j.closed || j.broken != nil
		j.wmu.Unlock()
		if done || f == nil {
			continue
		}
		j.fileMu.Lock()
		var err error
		if j.fileGen == gen { // else rotate or Close synced and closed it
			err = f.Sync()
		}
		j.fileMu.Unlock()
		if err == nil || errors.Is(err, os.ErrClosed) {
			j.bgSyncs.Add(1)
			continue
		}
		j.wmu.Lock()
		if j.broken == nil {
			j.broken = fmt.Errorf("click log %s: background fdatasync failed, no further click is acknowledged until the node restarts: %w", j.dir, err)
		}
		j.wmu.Unlock()
		j.log.Error("click log background sync failed", slog.String("dir", j.dir), slog.Any("err", err))
	}
}

// BackgroundSyncs reports how many background fdatasyncs have completed:
// what the tests check the syncer by (no metric exports it yet).
func (j *Journal) BackgroundSyncs() int64 { return j.bgSyncs.Load() }

// closeFile closes the open segment, after any background sync of it.
// wmu must be held.
func (j *Journal) closeFile() error {
	j.fileMu.Lock()
	defer j.fileMu.Unlock()
	j.fileGen++
	return j.file.Close()
}
