// Package faultfile is a layer under the click log's segment files for the
// tests of package clicklog and of its callers (clicklogtest.WithFileLayer): it
// counts syncs, can fail writes (as a full disk does), can stop every
// write (as a killed process does), and simulates a power cut, which drops
// every byte written since the last sync of each file. The files are real;
// only what a power loss takes from them is simulated.
package faultfile

import (
	"errors"
	"os"
	"sync"
	"sync/atomic"
)

// Files is the layer: Wrap each segment as the journal opens it.
type Files struct {
	// FailWrites makes every write fail after half its bytes reached the
	// file, as in a real short write.
	FailWrites atomic.Bool
	// Syncs counts the syncs asked for.
	Syncs atomic.Int64
	// killed: every write, sync and truncate does nothing and fails.
	killed atomic.Bool

	mu    sync.Mutex
	files []*File
}

// File is one wrapped segment.
type File struct {
	*os.File
	ff *Files

	mu     sync.Mutex
	alloc  int64 // the preallocated zeros, durable
	size   int64 // the end of the records written
	synced int64 // the end of the records durable
}

// Wrap returns f under the layer.
func (ff *Files) Wrap(f *os.File) *File {
	st, _ := f.Stat()
	w := &File{File: f, ff: ff, alloc: st.Size()}
	ff.mu.Lock()
	ff.files = append(ff.files, w)
	ff.mu.Unlock()
	return w
}

// ErrInjected is the error of a write that FailWrites failed.
var ErrInjected = errors.New("injected write failure")

// errKilled is the error of anything tried after Kill.
var errKilled = errors.New("process killed (simulated)")

// Kill makes the process under test dead to its files: nothing it writes,
// syncs or truncates from now on reaches them, so that closing its journal
// afterwards leaves the files as a killed process would.
func (ff *Files) Kill() { ff.killed.Store(true) }

// WriteAt writes p, or half of it under FailWrites.
func (f *File) WriteAt(p []byte, off int64) (int, error) {
	if f.ff.killed.Load() {
		return 0, errKilled
	}
	if f.ff.FailWrites.Load() {
		n, _ := f.File.WriteAt(p[:len(p)/2], off)
		f.mu.Lock()
		f.size = max(f.size, off+int64(n))
		f.mu.Unlock()
		return n, ErrInjected
	}
	n, err := f.File.WriteAt(p, off)
	f.mu.Lock()
	f.size = max(f.size, off+int64(n))
	f.mu.Unlock()
	return n, err
}

// Sync makes what was written durable.
func (f *File) Sync() error {
	if f.ff.killed.Load() {
		return errKilled
	}
	f.ff.Syncs.Add(1)
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.File.Sync(); err != nil {
		return err
	}
	f.synced = f.size
	return nil
}

// Truncate cuts the file at size.
func (f *File) Truncate(size int64) error {
	if f.ff.killed.Load() {
		return errKilled
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.File.Truncate(size); err != nil {
		return err
	}
	f.size = min(f.size, size)
	f.synced = min(f.synced, size)
	f.alloc = min(f.alloc, size)
	return nil
}

// PowerCut drops, in every file the layer has seen, what was not synced
// but keep bytes of it (a torn write: part of the unsynced data made it):
// inside the preallocated zeros the dropped bytes are zeros again, past
// them the file ends. Call it once the process under test has stopped
// writing.
func (ff *Files) PowerCut(keep int64) error {
	ff.mu.Lock()
	defer ff.mu.Unlock()
	for _, f := range ff.files {
		f.mu.Lock()
		cut := min(f.size, f.synced+keep)
		end, alloc := f.size, f.alloc
		f.mu.Unlock()
		err := os.Truncate(f.Name(), max(cut, alloc))
		if err == nil && cut < min(end, alloc) {
			err = writeZeros(f.Name(), cut, min(end, alloc))
		}
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
	}
	return nil
}

func writeZeros(path string, from, to int64) error {
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	_, err = f.WriteAt(make([]byte, to-from), from)
	return err
}
