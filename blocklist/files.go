package blocklist

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/linkforge/linkforge"
)

// Files are the --blocklist files and the operator's entries, merged into
// the Lists that the link writes consult. Load reads every file (the
// server does not start when one cannot be parsed); Reload, called
// periodically, re-reads a file whose modification time or size changed
// and keeps the last good copy of one that no longer parses. Its methods
// are safe for concurrent use; BlockedHost takes no lock.
type Files struct {
	logger *slog.Logger
	paths  []string

	mu       sync.Mutex // serializes Load, Reload and SetOperator
	files    map[string]*file
	operator Lists // the operator's entries (the database's)
	store    linkforge.TargetEntryStore

	lists atomic.Pointer[Lists] // the merged lists, read by BlockedHost
}

// file is the last good copy of one file.
type file struct {
	mod  time.Time
	size int64
	set  *Set
}

// NewFiles returns the Files of paths, empty until Load.
func NewFiles(paths []string, logger *slog.Logger) *Files {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	f := &Files{logger: logger, paths: paths, files: make(map[string]*file)}
	f.lists.Store(&Lists{Block: &Set{}, Allow: &Set{}})
	return f
}

// Load reads every file; the error names the file and line of the first
// that cannot be read or parsed.
func (f *Files) Load() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, p := range f.paths {
		st, err := os.Stat(p)
		if err != nil {
			return fmt.Errorf("blocklist %s: %w", p, err)
		}
		c, err := f.read(p, st)
		if err != nil {
			return err
		}
		f.files[p] = c
	}
	f.merge()
	return nil
}

// read parses the file p, whose stat is st.
func (f *Files) read(p string, st os.FileInfo) (*file, error) {
	data, err := os.ReadFile(p) //nolint:gosec // G304: p is an operator's --blocklist flag
	if err != nil {
		return nil, fmt.Errorf("blocklist %s: %w", p, err)
	}
	r, err := Parse(data)
	if err != nil {
		return nil, fmt.Errorf("blocklist %s: %w", p, err)
	}
	attrs := []any{"file", p, "format", r.Format, "entries", r.Set.Len()}
	if r.Skipped > 0 {
		attrs = append(attrs, "skipped", r.Skipped, "first_skipped", r.FirstSkipped)
	}
	f.logger.Info("blocklist loaded", attrs...)
	return &file{mod: st.ModTime(), size: st.Size(), set: r.Set}, nil
}

// Reload re-reads each file that changed since it was read, and reports
// whether the lists changed. A file that cannot be read or parsed keeps
// its last good copy, with an error logged.
func (f *Files) Reload() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	changed := false
	for _, p := range f.paths {
		st, err := os.Stat(p)
		if err != nil {
			f.logger.Error("blocklist reload: keeping the last good copy", "file", p, "error", err)
			continue
		}
		if old := f.files[p]; old != nil && old.mod.Equal(st.ModTime()) && old.size == st.Size() {
			continue
		}
		c, err := f.read(p, st)
		if err != nil {
			f.logger.Error("blocklist reload: keeping the last good copy", "file", p, "error", err)
			// Not again until the file changes once more.
			if old := f.files[p]; old != nil {
				old.mod, old.size = st.ModTime(), st.Size()
			}
			continue
		}
		f.files[p] = c
		changed = true
	}
	if changed {
		f.merge()
	}
	return changed
}

// SetOperator replaces the operator's entries (the database's).
func (f *Files) SetOperator(l Lists) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.operator = l
	f.merge()
}

// UseStore makes RefreshOperator read the operator's entries from st.
func (f *Files) UseStore(st linkforge.TargetEntryStore) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.store = st
}

// RefreshOperator reads the operator's entries from the store of
// UseStore (none: nothing to do) and applies them: after the operator's
// write on this node at once, and on the others at their next Run tick.
// An entry stored in a form Normalize no longer accepts is skipped.
func (f *Files) RefreshOperator(ctx context.Context) error {
	f.mu.Lock()
	st := f.store
	f.mu.Unlock()
	if st == nil {
		return nil
	}
	entries, err := st.TargetEntries(ctx)
	if err != nil {
		return fmt.Errorf("blocklist: operator entries: %w", err)
	}
	l := Lists{Block: &Set{}, Allow: &Set{}}
	for _, e := range entries {
		h, err := Normalize(e.Host)
		if err != nil {
			continue
		}
		if e.List == linkforge.TargetAllow {
			l.Allow.Add(h, h)
		} else {
			l.Block.Add(h, h)
		}
	}
	f.SetOperator(l)
	return nil
}

// merge publishes the union of the files and the operator's entries.
func (f *Files) merge() {
	block, allow := &Set{}, &Set{}
	for _, p := range f.paths {
		if c := f.files[p]; c != nil {
			block.Merge(c.set)
		}
	}
	if f.operator.Block != nil {
		block.Merge(f.operator.Block)
	}
	if f.operator.Allow != nil {
		allow.Merge(f.operator.Allow)
	}
	f.lists.Store(&Lists{Block: block, Allow: allow})
}

// BlockedHost implements linkforge.TargetPolicy.
func (f *Files) BlockedHost(host string) (string, bool) {
	return f.lists.Load().BlockedHost(host)
}

// Empty reports whether f blocks nothing (linkforge.CheckTargets then
// parses no URL).
func (f *Files) Empty() bool { return f.lists.Load().Empty() }

// Run calls Reload and RefreshOperator every interval until stop is
// closed; tick, when not nil, replaces the ticker's channel (tests drive
// it).
func (f *Files) Run(interval time.Duration, tick <-chan time.Time, stop <-chan struct{}) {
	if tick == nil {
		t := time.NewTicker(interval)
		defer t.Stop()
		tick = t.C
	}
	for {
		select {
		case <-stop:
			return
		case <-tick:
			f.Reload()
			ctx, cancel := context.WithTimeout(context.Background(), interval/2+time.Second)
			if err := f.RefreshOperator(ctx); err != nil {
				f.logger.Error("blocklist: keeping the operator's entries read last", "error", err)
			}
			cancel()
		}
	}
}
