package certs

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/caddyserver/certmagic"

	"github.com/linkforge/linkforge"
)

// storage is certmagic.Storage over the main database (linkforge.TLSStore):
// every node reads and writes the same certificates, ACME account and
// challenge tokens, and its Lock is the cluster-wide lock that makes one
// node issue for a host.
//
// certmagic writes a certificate as three keys, one after the other: the
// private key, the certificate, then its metadata. A process killed between
// two of those writes would leave a renewed key beside the certificate it
// replaced. storage therefore holds the first two in memory and writes the
// three in one transaction when the metadata comes: the database only ever
// has whole certificates.
type storage struct {
	db    linkforge.TLSStore
	owner string // this process's lock owner: node id and a random suffix
	now   func() time.Time
	ttl   time.Duration // a lock's lease, extended every ttl/3 while held
	poll  time.Duration // how often Lock retries a lock held elsewhere

	mu     sync.Mutex
	staged map[string]linkforge.TLSAsset // key and certificate waiting for their metadata
	held   map[string]heldLock           // the locks this process holds, by name
}

type heldLock struct {
	local chan struct{} // closed by Unlock: this process's other waiters retry
	stop  context.CancelFunc
	done  chan struct{} // closed when the lease extension has stopped
}

var (
	_ certmagic.Storage   = (*storage)(nil)
	_ certmagic.TryLocker = (*storage)(nil)
)

func newStorage(db linkforge.TLSStore, owner string, now func() time.Time, ttl, poll time.Duration) *storage {
	return &storage{db: db, owner: owner, now: now, ttl: ttl, poll: poll,
		staged: map[string]linkforge.TLSAsset{}, held: map[string]heldLock{}}
}

// staged reports whether key is a certificate's private key or certificate,
// written before its metadata (see storage).
func isStaged(key string) bool {
	return strings.HasPrefix(key, "certificates/") && (strings.HasSuffix(key, ".key") || strings.HasSuffix(key, ".crt"))
}

func isMeta(key string) bool {
	return strings.HasPrefix(key, "certificates/") && strings.HasSuffix(key, ".json")
}

// Store writes value at key; a certificate's key and certificate wait for
// its metadata (see storage).
func (s *storage) Store(ctx context.Context, key string, value []byte) error {
	a := linkforge.TLSAsset{Key: key, Value: slices.Clone(value), Modified: s.now().UTC()}
	if isStaged(key) {
		s.mu.Lock()
		s.staged[key] = a
		s.mu.Unlock()
		return nil
	}
	assets := []linkforge.TLSAsset{a}
	if isMeta(key) {
		dir := path.Dir(key) + "/"
		s.mu.Lock()
		for k, v := range s.staged {
			if strings.HasPrefix(k, dir) && !strings.Contains(k[len(dir):], "/") {
				assets = append(assets, v)
				delete(s.staged, k)
			}
		}
		s.mu.Unlock()
	}
	if err := s.db.PutTLSAssets(ctx, assets); err != nil {
		return fmt.Errorf("certs: store %s: %w", key, err)
	}
	return nil
}

// Load returns the value at key, or fs.ErrNotExist.
func (s *storage) Load(ctx context.Context, key string) ([]byte, error) {
	a, err := s.db.TLSAsset(ctx, key)
	if linkforge.ErrorCode(err) == linkforge.ENotFound {
		return nil, fs.ErrNotExist
	}
	if err != nil {
		return nil, fmt.Errorf("certs: load %s: %w", key, err)
	}
	return a.Value, nil
}

// Delete removes key and everything under it.
func (s *storage) Delete(ctx context.Context, key string) error {
	s.mu.Lock()
	for k := range s.staged {
		if k == key || strings.HasPrefix(k, key+"/") {
			delete(s.staged, k)
		}
	}
	s.mu.Unlock()
	if err := s.db.DeleteTLSAssets(ctx, key); err != nil {
		return fmt.Errorf("certs: delete %s: %w", key, err)
	}
	return nil
}

// Exists reports whether key is a value or a directory.
func (s *storage) Exists(ctx context.Context, key string) bool {
	_, err := s.Stat(ctx, key)
	return err == nil
}

// List returns the keys under dir: all of them when recursive, else its
// direct children (values and directories).
func (s *storage) List(ctx context.Context, dir string, recursive bool) ([]string, error) {
	keys, err := s.db.TLSAssetKeys(ctx, dir)
	if err != nil {
		return nil, fmt.Errorf("certs: list %s: %w", dir, err)
	}
	if len(keys) == 0 {
		return nil, fs.ErrNotExist
	}
	if recursive {
		return keys, nil
	}
	base := ""
	if dir != "" {
		base = dir + "/"
	}
	var children []string
	for _, k := range keys {
		child, _, _ := strings.Cut(k[len(base):], "/")
		if c := base + child; len(children) == 0 || children[len(children)-1] != c {
			children = append(children, c)
		}
	}
	return children, nil
}

// Stat describes key: a value, or a directory of values.
func (s *storage) Stat(ctx context.Context, key string) (certmagic.KeyInfo, error) {
	a, err := s.db.TLSAsset(ctx, key)
	if err == nil {
		return certmagic.KeyInfo{Key: key, Modified: a.Modified, Size: int64(len(a.Value)), IsTerminal: true}, nil
	}
	if linkforge.ErrorCode(err) != linkforge.ENotFound {
		return certmagic.KeyInfo{}, fmt.Errorf("certs: stat %s: %w", key, err)
	}
	keys, err := s.db.TLSAssetKeys(ctx, key)
	if err != nil {
		return certmagic.KeyInfo{}, fmt.Errorf("certs: stat %s: %w", key, err)
	}
	if len(keys) == 0 {
		return certmagic.KeyInfo{}, fs.ErrNotExist
	}
	return certmagic.KeyInfo{Key: key, IsTerminal: false}, nil
}

// Lock takes the cluster-wide lock name, waiting while another node or
// another goroutine of this process holds it. While held, its lease is
// extended every ttl/3: a node killed while issuing stops extending it,
// and another node takes it over once the lease has run out.
func (s *storage) Lock(ctx context.Context, name string) error {
	for {
		ok, wait, err := s.tryLock(ctx, name)
		if err != nil || ok {
			return err
		}
		timer := time.NewTimer(s.poll)
		select {
		case <-ctx.Done():
			timer.Stop()
			return ctx.Err()
		case <-wait:
			timer.Stop()
		case <-timer.C:
		}
	}
}

// TryLock takes the lock name if it is free.
func (s *storage) TryLock(ctx context.Context, name string) (bool, error) {
	ok, _, err := s.tryLock(ctx, name)
	return ok, err
}

// tryLock takes name if neither this process nor another node holds it;
// wait is closed when this process's holder lets it go.
func (s *storage) tryLock(ctx context.Context, name string) (ok bool, wait <-chan struct{}, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if h, held := s.held[name]; held {
		return false, h.local, nil
	}
	// Under s.mu: this process asks the database for a name once at a time.
	ok, err = s.db.AcquireTLSLock(ctx, name, s.owner, s.now(), s.ttl)
	if err != nil {
		return false, nil, fmt.Errorf("certs: lock %s: %w", name, err)
	}
	if !ok {
		return false, nil, nil
	}
	extendCtx, stop := context.WithCancel(context.WithoutCancel(ctx))
	h := heldLock{local: make(chan struct{}), stop: stop, done: make(chan struct{})}
	s.held[name] = h
	go s.extend(extendCtx, name, h.done)
	return true, nil, nil
}

// extend keeps the lease of a held lock until Unlock stops it.
func (s *storage) extend(ctx context.Context, name string, done chan struct{}) {
	defer close(done)
	ticker := time.NewTicker(s.ttl / 3)
	defer ticker.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-ticker.C:
			// A failed extension is retried at the next tick; the lease
			// covers two of them.
			_, _ = s.db.ExtendTLSLock(ctx, name, s.owner, s.now(), s.ttl)
		}
	}
}

// Unlock releases the lock name this process holds. The database's lock
// goes first: until then this process's other waiters keep waiting, and
// none of them can take the row (same owner) that the release then deletes.
func (s *storage) Unlock(ctx context.Context, name string) error {
	s.mu.Lock()
	h, held := s.held[name]
	s.mu.Unlock()
	if !held {
		return fmt.Errorf("certs: unlock %s: not held", name)
	}
	h.stop()
	<-h.done
	err := s.db.ReleaseTLSLock(context.WithoutCancel(ctx), name, s.owner)
	s.mu.Lock()
	delete(s.held, name)
	s.mu.Unlock()
	close(h.local)
	if err != nil {
		// The lease runs out on its own.
		return fmt.Errorf("certs: unlock %s: %w", name, err)
	}
	return nil
}

// releaseAll releases the locks still held, at shutdown.
func (s *storage) releaseAll(ctx context.Context) error {
	s.mu.Lock()
	names := make([]string, 0, len(s.held))
	for name := range s.held {
		names = append(names, name)
	}
	s.mu.Unlock()
	var errs []error
	for _, name := range names {
		errs = append(errs, s.Unlock(ctx, name))
	}
	return errors.Join(errs...)
}
