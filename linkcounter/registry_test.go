package linkcounter

import (
	"sync"
	"testing"
)

// The registry keeps one actor per id however clicks race for it, ranges
// over every actor while they are removed, and after shrinking still holds
// exactly the actors left.
func TestRegistry(t *testing.T) {
	var r registry
	const ids = 5000
	var wg sync.WaitGroup
	got := make([][]*actor, 4)
	for w := range got {
		wg.Go(func() {
			for id := int64(1); id <= ids; id++ {
				a, _ := r.loadOrStore(id, &actor{id: id})
				got[w] = append(got[w], a)
			}
		})
	}
	wg.Wait()
	for id := int64(1); id <= ids; id++ {
		a, ok := r.load(id)
		if !ok || a.id != id {
			t.Fatalf("load(%d) = %v, %v", id, a, ok)
		}
		for w := range got {
			if got[w][id-1] != a {
				t.Fatalf("goroutine %d got another actor for link %d", w, id)
			}
		}
	}
	if r.compareAndDelete(1, &actor{id: 1}) {
		t.Fatal("compareAndDelete removed another actor's entry")
	}
	seen := 0
	r.rangeActors(func(id int64, a *actor) bool {
		seen++
		if id%10 != 0 && !r.compareAndDelete(id, a) {
			t.Errorf("compareAndDelete(%d) of its own actor = false", id)
		}
		return true
	})
	if seen != ids {
		t.Fatalf("ranged over %d actors, want %d", seen, ids)
	}
	r.shrink()
	left := 0
	r.rangeActors(func(id int64, _ *actor) bool {
		if id%10 != 0 {
			t.Errorf("actor %d is still registered", id)
		}
		left++
		return true
	})
	if left != ids/10 {
		t.Fatalf("%d actors left, want %d", left, ids/10)
	}
	stopped := 0
	r.rangeActors(func(int64, *actor) bool { stopped++; return false })
	if stopped != 1 {
		t.Fatalf("range went on after false: %d calls", stopped)
	}
}
