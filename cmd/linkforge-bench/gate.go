package main

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
)

// durableGate is the reference server's durable acknowledgement
// (reference-server --durable-dir): a GET's 302 leaves only once a record
// for it is written, and with sync fdatasynced, by a group commit shaped
// as the click log's (one committer, no timer, a yield before it takes a
// batch, every waiter of a batch released at once). It is the least any
// server that keeps LinkForge's output gate can do, so the counted GET is
// compared with it as well as with the bare reference: the first ratio is
// what LinkForge's code costs, the gate's own ratio what the disk does
// (docs/benchmarks.md, "redirect").
type durableGate struct {
	f    *os.File
	path string
	sync bool

	mu   sync.Mutex
	cur  *gateBatch
	wake chan struct{}
	stop chan struct{}
	done chan struct{}
	// commits and acked count the group commits written and the GETs
	// they released (the tests' view of it).
	commits, acked atomic.Int64
}

// gateBatch is one group commit's waiters.
type gateBatch struct {
	n    int
	done chan struct{}
	err  error
}

// newDurableGate zero-fills its file in dir and starts the committer.
func newDurableGate(dir string, sync bool) (*durableGate, error) {
	path := filepath.Join(dir, fmt.Sprintf("bench-gate-%d.dat", os.Getpid()))
	f, err := zeroFilled(path)
	if err != nil {
		return nil, fmt.Errorf("durable gate: %w", err)
	}
	g := &durableGate{f: f, path: path, sync: sync, cur: &gateBatch{done: make(chan struct{})},
		wake: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
	go g.run()
	return g, nil
}

// wait joins the next commit and returns once it is durable.
func (g *durableGate) wait() error {
	g.mu.Lock()
	b := g.cur
	b.n++
	g.mu.Unlock()
	select {
	case g.wake <- struct{}{}:
	default:
	}
	<-b.done
	return b.err
}

func (g *durableGate) run() {
	defer close(g.done)
	buf := make([]byte, 64<<10)
	buf[0] = 1 // a record is never all zeros
	var off int64
	for {
		select {
		case <-g.stop:
			return
		case <-g.wake:
		}
		runtime.Gosched() // as the click log's committer: runnable waiters join first
		g.mu.Lock()
		b := g.cur
		if b.n == 0 {
			g.mu.Unlock()
			continue
		}
		g.cur = &gateBatch{done: make(chan struct{})}
		g.mu.Unlock()
		n := int64(floorRecord(b.n))
		if off+n > floorFileSize {
			off = 0
		}
		_, b.err = g.f.WriteAt(buf[:n], off)
		off += n
		if b.err == nil && g.sync {
			b.err = syscall.Fdatasync(int(g.f.Fd()))
		}
		if b.err == nil {
			g.commits.Add(1)
			g.acked.Add(int64(b.n))
		}
		close(b.done)
	}
}

// close stops the committer (no waiter may be left) and removes the file.
func (g *durableGate) close() {
	close(g.stop)
	<-g.done
	g.f.Close()
	os.Remove(g.path)
}
