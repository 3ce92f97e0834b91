// Package visitortest holds an in-memory visitor.KeyStore for tests: in
// production the key store is the main store, shared by the nodes.
package visitortest

import (
	"context"
	"sync"
	"time"
)

// MemoryKeys is a visitor.KeyStore for a single process, as
// MemoryKeys[visitor.Key]: the keys live in its memory only. The zero
// value is ready to use. It is generic in the key only so that package
// visitor's own tests can use it: this package cannot import visitor.
type MemoryKeys[K any] struct {
	mu   sync.Mutex
	keys map[time.Time]K
}

// DayKey implements visitor.KeyStore.
func (m *MemoryKeys[K]) DayKey(_ context.Context, day time.Time, candidate K) (K, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if k, ok := m.keys[day]; ok {
		return k, nil
	}
	if m.keys == nil {
		m.keys = make(map[time.Time]K)
	}
	m.keys[day] = candidate
	return candidate, nil
}

// DeleteKeysBefore implements visitor.KeyStore.
func (m *MemoryKeys[K]) DeleteKeysBefore(_ context.Context, day time.Time) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	for d := range m.keys {
		if d.Before(day) {
			delete(m.keys, d)
		}
	}
	return nil
}

// Len returns how many day keys m holds, for the tests of their
// destruction.
func (m *MemoryKeys[K]) Len() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.keys)
}

// Has reports whether m holds the key of day.
func (m *MemoryKeys[K]) Has(day time.Time) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	_, ok := m.keys[day]
	return ok
}
