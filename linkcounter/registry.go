package linkcounter

import "sync"

// registry maps link ids to their live actors: plain maps in shards, each
// behind a read-write lock. A sync.Map costs some 100 bytes per entry (its
// trie nodes and boxed keys), a map entry about 25, and a viral burst holds
// an entry for each of a million one-off links at once
// (docs/performance.md); a click's lookup is one read lock
// of one of many shards, so clicks of different links rarely meet.
type registry struct {
	shards [registryShards]registryShard
}

// registryShards spreads the locks.
const (
	registryShardBits = 6
	registryShards    = 1 << registryShardBits
)

type registryShard struct {
	mu sync.RWMutex
	m  map[int64]*actor
	// peak is the most entries since m was made: a Go map keeps its
	// buckets after deletes, so shrink makes a new one once it holds a
	// quarter of that.
	peak int
	_    [24]byte // one shard per cache line, or so
}

func (r *registry) shard(id int64) *registryShard {
	// Fibonacci hashing: the top bits of the product spread sequential ids
	// and ids with any stride alike.
	return &r.shards[(uint64(id)*0x9e3779b97f4a7c15)>>(64-registryShardBits)] //nolint:gosec // G115: any bits will do
}

// load returns id's actor, if any.
func (r *registry) load(id int64) (*actor, bool) {
	s := r.shard(id)
	s.mu.RLock()
	a, ok := s.m[id]
	s.mu.RUnlock()
	return a, ok
}

// loadOrStore returns id's actor, storing a if there is none; loaded
// reports whether one was there.
func (r *registry) loadOrStore(id int64, a *actor) (actual *actor, loaded bool) {
	s := r.shard(id)
	s.mu.Lock()
	defer s.mu.Unlock()
	if old, ok := s.m[id]; ok {
		return old, true
	}
	if s.m == nil {
		s.m = make(map[int64]*actor)
	}
	s.m[id] = a
	s.peak = max(s.peak, len(s.m))
	return a, false
}

// compareAndDelete removes id's entry if it is a.
func (r *registry) compareAndDelete(id int64, a *actor) bool {
	s := r.shard(id)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.m[id] != a {
		return false
	}
	delete(s.m, id)
	return true
}

// rangeActors calls f for each actor, until f returns false. f runs with
// no lock of the registry held, so it may lock the actor and remove it: it
// sees each shard as it was when the shard's turn came, like sync.Map's
// Range sees no one consistent snapshot.
func (r *registry) rangeActors(f func(id int64, a *actor) bool) {
	var list []*actor
	for i := range r.shards {
		s := &r.shards[i]
		s.mu.RLock()
		list = list[:0]
		for _, a := range s.m {
			list = append(list, a)
		}
		s.mu.RUnlock()
		for _, a := range list {
			if !f(a.id, a) {
				return
			}
		}
	}
}

// shrink rebuilds the shards that hold a quarter of their peak or less, so
// that the memory of a burst's entries goes with them.
func (r *registry) shrink() {
	for i := range r.shards {
		s := &r.shards[i]
		s.mu.Lock()
		if s.peak >= 64 && len(s.m) <= s.peak/4 {
			m := make(map[int64]*actor, len(s.m))
			for id, a := range s.m {
				m[id] = a
			}
			s.m, s.peak = m, len(m)
		}
		s.mu.Unlock()
	}
}
