package clicklog

import (
	"hash/maphash"
	"math"
	"slices"
	"unsafe"

	"github.com/linkforge/linkforge"
)

// An hour's counts by dimension and value, packed (docs/performance.md):
// a click adds a value in each of linkforge.NumDimensions dimensions, so a
// link clicked once holds that many cells, and a viral burst of one-off
// links holds millions. A cell is the interned id of its (dimension, value)
// (4 bytes, in the hour's key list) and, only once the hour's cells
// differ, its two counts (hourRows.wide, which then holds the keys too):
// while every cell of the hour has the same count and flushed count, as a
// link clicked once (or always with the same values) has, the hour keeps
// those two numbers once (un, uf) and points at an interned key list
// (hourRows.set). The state is
// the same either way; the form is chosen by the changes applied, which
// replay applies again, and by nothing else.
//
// In the shared form an hour's keys are interned too (keySets): the links
// of a burst are clicked with a few thousand combinations of values at
// most, so a million one-off hours hold a few thousand key lists rather
// than a million 96-byte ones (docs/performance.md). An
// interned list is never written; an hour that changes its keys takes a
// copy of its own first, and that happens only in the wide form, which
// does not intern.

// wideCounts are the cells of an hour whose cells differ: its own keys,
// and cell i's count and flushed count at 2*i and 2*i+1. Behind a pointer,
// so that the shared form, the common one, pays 8 bytes for them rather
// than two slices' 48.
type wideCounts struct {
	keys []uint32
	c    []int64
	seed bool // hourRows.seeding
}

// cellDim is a cell's dimension and the traffic it counts, as one byte:
// the public dimension in the low 4 bits, 16 for automated clicks (8
// before the ninth dimension, source: frame version 4). A click adds one
// cell per public dimension, under its traffic: each (dimension, traffic)
// keeps its own MaxDimValues bound per hour, and the all-traffic count of
// a value is the sum of its two cells.
type cellDim uint8

// numCellDims is the number of cellDims: two per public dimension. Arrays
// by cellDim are indexed by cellDim.index, which is dense.
const numCellDims = 2 * int(publicDims)

// publicDims is the number of dimensions a click counts.
const publicDims = linkforge.NumDimensions

// automatedBit marks a cellDim of automated clicks; the bits below it hold
// the dimension.
const automatedBit cellDim = 16

// dimMask holds a cellDim's dimension.
const dimMask = automatedBit - 1

// A dimension past the bits below automatedBit (a seventeenth one) would
// share cells with the automated ones: widen automatedBit (and the frame's
// byte) with it. This fails to compile until then.
var _ [int(automatedBit) - int(publicDims)]struct{}

// cellOf is the cell of dimension d under a click's traffic.
func cellOf(d linkforge.Dimension, automated bool) cellDim {
	c := cellDim(d)
	if automated {
		c |= automatedBit
	}
	return c
}

// cellAt is the cellDim of index i (cellDim.index's inverse).
func cellAt(i int) cellDim {
	return cellOf(linkforge.Dimension(i%int(publicDims)), i >= int(publicDims)) //nolint:gosec // G115: i < numCellDims
}

// dim returns c's dimension.
func (c cellDim) dim() linkforge.Dimension { return linkforge.Dimension(c &^ automatedBit) }

// automated reports whether c counts automated clicks.
func (c cellDim) automated() bool { return c&automatedBit != 0 }

// index is c's place among the numCellDims cellDims: the human cells,
// then the automated ones.
func (c cellDim) index() int {
	i := int(c & dimMask)
	if c.automated() {
		i += int(publicDims)
	}
	return i
}

// valid reports whether c is a public dimension's cell.
func (c cellDim) valid() bool {
	return c&^(automatedBit|dimMask) == 0 && c&dimMask < cellDim(publicDims)
}

// dimCell is one (dimension, traffic, value) cell of an hour, as read.
type dimCell struct {
	value      string
	dim        cellDim
	n, flushed int64
}

// dimValue is an interned (dimension, value).
type dimValue struct {
	dim   cellDim
	value string
}

// valueTable interns the (dimension, value)s the cells hold, counting the
// cells that hold each, so that a value no cell holds leaves it (referrer
// hosts are not a closed set). Changed under the journal's write lock only.
type valueTable struct {
	ids  map[dimValue]uint32
	vals []dimValue
	refs []uint32
	free []uint32
	// sets interns the key lists of hours in the shared form.
	sets keySets
}

// keySets interns key lists (the ids of an hour's cells, in order),
// counting the hours that hold each. By hash, with the lists of a hash
// chained: a map keyed by the lists' bytes would hold each list twice,
// which a burst whose lists are all distinct would pay per link.
type keySets struct {
	seed    maphash.Seed
	m       map[uint64]*keySet
	scratch []uint32
}

type keySet struct {
	keys []uint32 // never written: an hour that changes its keys copies them
	refs int
	hash uint64
	next *keySet // of the same hash
}

// intern returns the interned list equal to keys, for one more hour; keys
// itself is not kept.
func (t *keySets) intern(keys []uint32) *keySet {
	h := maphash.Bytes(t.seed, keyBytes(keys))
	for e := t.m[h]; e != nil; e = e.next {
		if slices.Equal(e.keys, keys) {
			e.refs++
			return e
		}
	}
	e := &keySet{keys: slices.Clip(slices.Clone(keys)), refs: 1, hash: h, next: t.m[h]}
	t.m[h] = e
	return e
}

// release gives back one hour's hold of the interned list e.
func (t *keySets) release(e *keySet) {
	if e.refs--; e.refs == 0 {
		t.unlink(e.hash, e)
	}
}

// unlink removes e from the chain of hash h.
func (t *keySets) unlink(h uint64, e *keySet) {
	if t.m[h] == e {
		if e.next == nil {
			delete(t.m, h)
		} else {
			t.m[h] = e.next
		}
		return
	}
	for p := t.m[h]; p.next != nil; p = p.next {
		if p.next == e {
			p.next = e.next
			return
		}
	}
}

// keyBytes returns the bytes of keys (not a copy), to hash.
func keyBytes(keys []uint32) []byte {
	if len(keys) == 0 {
		return nil
	}
	// Read only, to hash: the ids' bytes in memory order, which is all a
	// hash within this process needs.
	return unsafe.Slice((*byte)(unsafe.Pointer(&keys[0])), 4*len(keys)) //nolint:gosec // G103: a read-only view of a live slice, of its exact length
}

func newValueTable() *valueTable {
	return &valueTable{ids: make(map[dimValue]uint32), sets: keySets{seed: maphash.MakeSeed(), m: make(map[uint64]*keySet)}}
}

// lookup returns the id of (d, value), false if no cell holds it.
func (t *valueTable) lookup(d cellDim, value string) (uint32, bool) {
	id, ok := t.ids[dimValue{d, value}]
	return id, ok
}

// acquire returns the id of (d, value) for one more cell.
func (t *valueTable) acquire(d cellDim, value string) uint32 {
	k := dimValue{d, value}
	if id, ok := t.ids[k]; ok {
		t.refs[id]++
		return id
	}
	var id uint32
	if n := len(t.free); n > 0 {
		id, t.free = t.free[n-1], t.free[:n-1]
		t.vals[id], t.refs[id] = k, 1
	} else {
		id = uint32(len(t.vals)) //nolint:gosec // G115: one id per distinct value held, far below 2^32
		t.vals, t.refs = append(t.vals, k), append(t.refs, 1)
	}
	t.ids[k] = id
	return id
}

// release gives back one cell's hold of id.
func (t *valueTable) release(id uint32) {
	if t.refs[id]--; t.refs[id] == 0 {
		delete(t.ids, t.vals[id])
		t.vals[id] = dimValue{}
		t.free = append(t.free, id)
	}
}

func (t *valueTable) reset() { *t = *newValueTable() }

// keys returns the ids of h's cells, in order (not a copy: written only
// in the wide form, whose keys are the hour's own).
func (h *hourRows) keys() []uint32 {
	switch {
	case h.wide != nil:
		return h.wide.keys
	case h.set != nil:
		return h.set.keys
	}
	return nil
}

// ncells returns the number of cells of h.
func (h *hourRows) ncells() int { return len(h.keys()) }

func (h *hourRows) cellN(i int) int64 {
	if h.wide == nil {
		return int64(h.un)
	}
	return h.wide.c[2*i]
}

func (h *hourRows) cellFlushed(i int) int64 {
	if h.wide == nil {
		return int64(h.uf)
	}
	return h.wide.c[2*i+1]
}

// expand gives every cell of h its own counts, and its own keys.
func (s *logState) expand(h *hourRows) {
	if h.wide != nil {
		return
	}
	keys := h.keys()
	c := make([]int64, 2*len(keys), 2*len(keys)+2)
	for i := range keys {
		c[2*i], c[2*i+1] = int64(h.un), int64(h.uf)
	}
	var own []uint32
	if len(keys) > 0 {
		own = make([]uint32, len(keys), len(keys)+1)
		copy(own, keys)
		s.values.sets.release(h.set)
	}
	h.wide, h.set, h.un, h.uf = &wideCounts{keys: own, c: c}, nil, 0, 0
}

// compact returns h to the shared form if its cells' counts are all equal.
func (s *logState) compact(h *hourRows) {
	if h.wide == nil || h.wide.seed {
		return // a seed mark stays in the wide form
	}
	keys := h.wide.keys
	if len(keys) == 0 {
		h.set, h.wide, h.un, h.uf = nil, nil, 0, 0
		return
	}
	c := h.wide.c
	n, f := c[0], c[1]
	if int64(int32(n)) != n || int64(int32(f)) != f { //nolint:gosec // G115: the conversion is the check
		return // the shared counts are int32s
	}
	for i := 1; i < len(keys); i++ {
		if c[2*i] != n || c[2*i+1] != f {
			return
		}
	}
	h.wide, h.un, h.uf = nil, int32(n), int32(f) //nolint:gosec // G115: checked above
	h.set = s.values.sets.intern(keys)
}

// cell returns cell i of h.
func (s *logState) cell(h *hourRows, i int) dimCell {
	v := s.values.vals[h.keys()[i]]
	return dimCell{dim: v.dim, value: v.value, n: h.cellN(i), flushed: h.cellFlushed(i)}
}

// findCell returns the index of h's cell of (d, value), -1 if none.
func (s *logState) findCell(h *hourRows, d cellDim, value string) int {
	keys := h.keys()
	if len(keys) == 0 {
		return -1
	}
	id, ok := s.values.lookup(d, value)
	if !ok {
		return -1
	}
	return slices.Index(keys, id)
}

// findCellAt is findCell with a guess, index k: values arrive in the order
// the hour's cells were made from the first click's (a link's clicks
// mostly differ in a few values), so the k-th value of a click is mostly
// the k-th cell. A hit costs one comparison where findCell hashes the
// value, which made the value table's map the committer's largest cost
// per click (17 % of a counted redirect's CPU in BenchmarkRedirectCountedLinks'
// profile); a miss asks findCell. An hour holds a value in one cell at
// most, so the answer is findCell's either way.
func (s *logState) findCellAt(h *hourRows, k int, d cellDim, value string) int {
	if keys := h.keys(); k < len(keys) {
		if v := &s.values.vals[keys[k]]; v.dim == d && v.value == value {
			return k
		}
	}
	return s.findCell(h, d, value)
}

// dimOf returns h's cell of (d, value); false if none (h may be nil).
func (s *logState) dimOf(h *hourRows, d cellDim, value string) (dimCell, bool) {
	if h == nil {
		return dimCell{}, false
	}
	if i := s.findCell(h, d, value); i >= 0 {
		return s.cell(h, i), true
	}
	return dimCell{}, false
}

// hasDimAt reports whether h (nil: none) holds a cell of (d, value), k
// the guess of findCellAt. It is the committer's per-click lookup.
func (s *logState) hasDimAt(h *hourRows, k int, d cellDim, value string) bool {
	return h != nil && s.findCellAt(h, k, d, value) >= 0
}

// removeCell removes cell i of h, which is in the wide form (its keys
// are its own). An hour left without cells stays wide until compact, so
// that its caller may add the next cell.
func (s *logState) removeCell(h *hourRows, i int) {
	w := h.wide
	s.values.release(w.keys[i])
	w.keys = slices.Delete(w.keys, i, i+1)
	w.c = slices.Delete(w.c, 2*i, 2*i+2)
}

// releaseCells gives back the values of every cell of h, which goes.
func (s *logState) releaseCells(h *hourRows) {
	for _, id := range h.keys() {
		s.values.release(id)
	}
	if h.set != nil {
		s.values.sets.release(h.set)
	}
	h.set, h.wide, h.un, h.uf = nil, nil, 0, 0
}

// addDims applies one (link, hour)'s dimension increments of a record: each
// adds v to its cell, created if new; a cell left counting nothing goes (a
// seed moved its clicks to MoreValue, and an empty cell must not count
// towards MaxDimValues).
func (s *logState) addDims(h *hourRows, group []recDim) {
	if s.addShared(h, group) {
		return
	}
	s.expand(h)
	for k, d := range group {
		i := s.findCellAt(h, k, d.dim, d.value)
		w := h.wide
		if i < 0 {
			w.keys = append(w.keys, s.values.acquire(d.dim, d.value))
			w.c = append(w.c, 0, 0)
			i = len(w.keys) - 1
		}
		c := w.c
		c[2*i] += d.v
		if c[2*i] == 0 && c[2*i+1] == 0 {
			s.removeCell(h, i)
		}
	}
	s.compact(h)
}

// addShared applies group to h in the shared form if it keeps every cell's
// counts equal: the increments of one click (or of clicks with the same
// values) to an hour without cells, or one for each cell of the hour, all
// of the same count. It reports whether it did.
func (s *logState) addShared(h *hourRows, group []recDim) bool {
	if h.wide != nil || len(group) == 0 || len(group) > 64 {
		return false
	}
	v := group[0].v
	for _, d := range group {
		if d.v != v {
			return false
		}
	}
	if v <= 0 || int64(h.un)+v > math.MaxInt32 {
		return false // a count past int32 takes the wide form
	}
	if h.set == nil {
		sets := &s.values.sets
		keys := sets.scratch[:0]
		for _, d := range group {
			id := s.values.acquire(d.dim, d.value)
			keys = append(keys, id)
			if slices.Contains(keys[:len(keys)-1], id) {
				for _, id := range keys {
					s.values.release(id)
				}
				sets.scratch = keys
				return false
			}
		}
		sets.scratch = keys
		h.set, h.un, h.uf = sets.intern(keys), int32(v), 0 //nolint:gosec // G115: checked above
		return true
	}
	if !s.coversAll(h, len(group), func(k int) (cellDim, string) { return group[k].dim, group[k].value }) {
		return false
	}
	h.un += int32(v) //nolint:gosec // G115: checked above
	return true
}

// coversAll reports whether the n (dimension, value)s at(0..n-1) are each
// of a distinct cell of h, and every cell is one of them.
func (s *logState) coversAll(h *hourRows, n int, at func(int) (cellDim, string)) bool {
	if n != h.ncells() || n > 64 {
		return false
	}
	var seen uint64
	for k := range n {
		d, v := at(k)
		i := s.findCellAt(h, k, d, v)
		if i < 0 || seen&(1<<i) != 0 {
			return false
		}
		seen |= 1 << i
	}
	return true
}

// markDims applies one (link, hour)'s dimension flush marks of a record:
// each raises its cell's flushed count to v, never above its count.
func (s *logState) markDims(h *hourRows, group []recDim) {
	if h.wide == nil && len(group) > 0 {
		v := group[0].v
		same := true
		for _, d := range group {
			same = same && d.v == v
		}
		if same && s.coversAll(h, len(group), func(k int) (cellDim, string) { return group[k].dim, group[k].value }) {
			if v > int64(h.uf) {
				h.uf = int32(min(v, int64(h.un))) //nolint:gosec // G115: at most un, an int32
			}
			return
		}
	}
	for k, m := range group {
		i := s.findCellAt(h, k, m.dim, m.value)
		if i < 0 || m.v <= h.cellFlushed(i) {
			continue
		}
		s.expand(h)
		h.wide.c[2*i+1] = min(m.v, h.wide.c[2*i])
	}
	s.compact(h)
}

// dimsAllFlushed reports whether every cell of h is flushed.
func (h *hourRows) dimsAllFlushed() bool {
	for i := range h.ncells() {
		if h.cellN(i) != h.cellFlushed(i) {
			return false
		}
	}
	return true
}

// purgeDims removes h's flushed cells and returns how many.
func (s *logState) purgeDims(h *hourRows) int64 {
	if h.wide == nil {
		// Every cell has the hour's two counts: all go, or none.
		n := int64(h.ncells())
		if n == 0 || h.un != h.uf {
			return 0
		}
		s.releaseCells(h)
		return n
	}
	var purged int64
	for i := h.ncells() - 1; i >= 0; i-- {
		if h.cellN(i) == h.cellFlushed(i) {
			s.removeCell(h, i)
			purged++
		}
	}
	s.compact(h)
	return purged
}

// hourGroups yields the runs of rows of the same (link, hour).
func hourGroups(rows []recDim) func(yield func([]recDim) bool) {
	return func(yield func([]recDim) bool) {
		for start := 0; start < len(rows); {
			end := start + 1
			for end < len(rows) && rows[end].link == rows[start].link && rows[end].hour == rows[start].hour {
				end++
			}
			if !yield(rows[start:end]) {
				return
			}
			start = end
		}
	}
}
