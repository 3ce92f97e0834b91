package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"time"
)

// The disk's floor for a durable acknowledgement at a click rate: a bare
// group commit, in the tool's own process, on the server's data dir. Clicks
// arrive on an open-loop schedule; one committer takes every click that has
// arrived, writes one record into a zero-filled file and fdatasyncs it, and
// acknowledges them. No HTTP, no parsing, no counting: whatever it waits is
// the disk's, and any journal that acknowledges a click only once it is on
// disk waits at least as much.
//
// It exists because the journal's commit p99 is not that floor. It is
// weighted by commit, and a click's wait by click: a click that arrives
// during a slow commit waits for the rest of it and then for its own, so
// the time the disk spends in its rare slow flushes (a shared VM's
// write-back cache flushed whole) sets the clicks' p99, several times the
// commits' (docs/benchmarks.md, "redirect").

// floorResult is one run of measureFloor.
type floorResult struct {
	clicks, commits int
	// clickP99 is the p99 of a click's wait, from its scheduled arrival to
	// the end of the commit that holds it; commitP99 the commits' own.
	clickP99, commitP99 time.Duration
}

// floorFileSize is the zero-filled file the floor writes into, round and
// round: overwriting allocated blocks, as the journal's preallocated
// segments do, so that a sync never also writes the file's size or block map.
const floorFileSize = 16 << 20

// floorRecord is a commit's record size: a header and, per click, an
// increment of about the journal's size.
func floorRecord(clicks int) int { return min(64+48*clicks, 64<<10) }

// zeroFilled creates path (it must not exist) as floorFileSize zeros,
// synced: the blocks a group commit then overwrites.
func zeroFilled(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_RDWR, 0o600)
	if err != nil {
		return nil, err
	}
	buf := make([]byte, 64<<10)
	for off := int64(0); off < floorFileSize; off += int64(len(buf)) {
		if _, err := f.WriteAt(buf, off); err != nil {
			f.Close()
			os.Remove(path)
			return nil, fmt.Errorf("zero-fill: %w", err)
		}
	}
	if err := syscall.Fdatasync(int(f.Fd())); err != nil {
		f.Close()
		os.Remove(path)
		return nil, fmt.Errorf("fdatasync: %w", err)
	}
	return f, nil
}

// measureFloor runs the bare group commit in dir at rate clicks per second
// for d. durable false writes without fdatasync (--journal-sync normal).
func measureFloor(ctx context.Context, dir string, rate int, d time.Duration, durable bool) (floorResult, error) {
	if rate < 1 || d <= 0 {
		return floorResult{}, errors.New("floor: rate and duration must be positive")
	}
	path := filepath.Join(dir, "bench-floor.dat")
	f, err := zeroFilled(path)
	if err != nil {
		return floorResult{}, fmt.Errorf("floor: %w", err)
	}
	defer os.Remove(path)
	defer f.Close()
	buf := make([]byte, 64<<10)

	q := &arrivals{}
	q.cond = sync.NewCond(&q.mu)
	go q.generate(ctx, rate, d)

	var waits, commits []time.Duration
	var off int64
	for {
		batch, ok := q.take()
		if !ok {
			break
		}
		start := time.Now()
		n := int64(floorRecord(len(batch)))
		if off+n > floorFileSize {
			off = 0
		}
		buf[0] = 1 // a record is never all zeros
		if _, err := f.WriteAt(buf[:n], off); err != nil {
			return floorResult{}, fmt.Errorf("floor: write: %w", err)
		}
		off += n
		if durable {
			if err := syscall.Fdatasync(int(f.Fd())); err != nil {
				return floorResult{}, fmt.Errorf("floor: fdatasync: %w", err)
			}
		}
		end := time.Now()
		commits = append(commits, end.Sub(start))
		for _, at := range batch {
			waits = append(waits, end.Sub(at))
		}
	}
	if err := ctx.Err(); err != nil {
		return floorResult{}, err
	}
	return floorResult{clicks: len(waits), commits: len(commits), clickP99: percentile(waits, 0.99), commitP99: percentile(commits, 0.99)}, nil
}

// arrivals is the floor's open-loop click schedule: clicks are due every
// 1/rate whether or not the committer keeps up, as vegeta's are.
type arrivals struct {
	mu      sync.Mutex
	cond    *sync.Cond
	pending []time.Time
	done    bool
}

func (q *arrivals) generate(ctx context.Context, rate int, d time.Duration) {
	interval := time.Second / time.Duration(rate)
	start := time.Now()
	end := start.Add(d)
	next := start
	for next.Before(end) && ctx.Err() == nil {
		now := time.Now()
		q.mu.Lock()
		for !next.After(now) && next.Before(end) {
			q.pending = append(q.pending, next)
			next = next.Add(interval)
		}
		q.cond.Signal()
		q.mu.Unlock()
		// Short sleeps: a click is taken within ~0.1 ms of its due time,
		// well under the commits it waits for.
		time.Sleep(100 * time.Microsecond)
	}
	q.mu.Lock()
	q.done = true
	q.cond.Signal()
	q.mu.Unlock()
}

// take returns the clicks that have arrived, waiting for one; false once
// the schedule has ended and every click was taken.
func (q *arrivals) take() ([]time.Time, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for len(q.pending) == 0 && !q.done {
		q.cond.Wait()
	}
	if len(q.pending) == 0 {
		return nil, false
	}
	b := q.pending
	q.pending = nil
	return b, true
}
