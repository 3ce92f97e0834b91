package linkcounter

import (
	"errors"
	"os"
	"sync"
	"sync/atomic"
)

// faultFiles is a layer under the journal's segment files: it counts
// syncs, can fail writes (as a full disk does), and simulates a power cut,
// which drops every byte written since the last sync of each file. The
// files are real; only what a power loss takes from them is simulated.
type faultFiles struct {
	failWrites atomic.Bool
	syncs      atomic.Int64

	mu    sync.Mutex
	files []*faultFile
}

type faultFile struct {
	*os.File
	ff *faultFiles

	mu     sync.Mutex
	size   int64 // written
	synced int64 // durable
}

func (ff *faultFiles) option() JournalOption {
	return func(o *journalOptions) {
		o.wrap = func(f *os.File) logFile {
			st, _ := f.Stat()
			w := &faultFile{File: f, ff: ff, size: st.Size(), synced: st.Size()}
			ff.mu.Lock()
			ff.files = append(ff.files, w)
			ff.mu.Unlock()
			return w
		}
	}
}

var errInjected = errors.New("injected write failure")

func (f *faultFile) Write(p []byte) (int, error) {
	if f.ff.failWrites.Load() {
		// Half the record reaches the file, as in a real short write.
		n, _ := f.File.Write(p[:len(p)/2])
		f.mu.Lock()
		f.size += int64(n)
		f.mu.Unlock()
		return n, errInjected
	}
	n, err := f.File.Write(p)
	f.mu.Lock()
	f.size += int64(n)
	f.mu.Unlock()
	return n, err
}

func (f *faultFile) Sync() error {
	f.ff.syncs.Add(1)
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.File.Sync(); err != nil {
		return err
	}
	f.synced = f.size
	return nil
}

func (f *faultFile) Truncate(size int64) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.File.Truncate(size); err != nil {
		return err
	}
	f.size = size
	f.synced = min(f.synced, size)
	return nil
}

// powerCut drops, in every file the layer has seen, what was not synced
// but keep bytes of it (a torn write: part of the unsynced data made it).
// Call it once the process under test has stopped writing.
func (ff *faultFiles) powerCut(keep int64) error {
	ff.mu.Lock()
	defer ff.mu.Unlock()
	for _, f := range ff.files {
		f.mu.Lock()
		size := min(f.size, f.synced+keep)
		f.mu.Unlock()
		if err := os.Truncate(f.Name(), size); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
	}
	return nil
}
