package clicklog

import (
	"iter"
	"maps"
	"slices"

	"github.com/linkforge/linkforge"
)

// logState is the journal's state in memory: the truth while the process
// runs, rebuilt from the click log at open. Per link, per hour it counted
// in: the minutes' absolute counts and flushed counts, and the hour's counts
// by dimension and value; and its visitor hashes not yet in a sketch. A
// link clicked once costs one map entry and four small allocations, its
// key list shared with the links clicked with the same values, about 160
// bytes (docs/adr/014-click-log.md, "Memory";
// docs/performance.md).
type logState struct {
	nodeID       string
	seedPending  bool
	purgedBefore int64
	// links holds each link's rows and visits in one entry, behind a
	// pointer: a Go map's tables double when they fill, so its slots
	// cost up to twice their size per entry (a 1,000,000-link burst sits
	// just past a doubling), and one map of 16-byte slots wastes less of
	// that than two maps of 32- and 40-byte ones did (docs/performance.md).
	links map[int64]*linkRows
	// held counts the entries with hours (the rest hold visits only).
	held int
	// byHour lists, per hour, the links that hold rows of it: what purge
	// visits.
	byHour map[int64][]int64
	// dropped lists, per hour, the links (ascending) whose rows of that
	// hour were dropped from memory once flushed, their actor evicted: a
	// later click in the hour starts rows to be seeded from the rollup
	// (hourRows.seeding). 8 bytes per (link, hour), until the hour ends before
	// the purge horizon, after which no click can land in it.
	dropped map[int64][]int64
	// unsorted: per hour of dropped appended to by the record being
	// applied, where its sorted part ends.
	unsorted map[int64]int
	// stale counts, per hour, the byHour entries of links dropped since
	// the hour's list was last compacted: it is compacted once they are
	// half of it, so a dropped link's entry costs memory only for a while.
	stale map[int64]int
	// values interns the (dimension, value)s of the hours' cells.
	values *valueTable
	// peak is the most entries of links since it was last rebuilt: a Go
	// map keeps its buckets after deletes, so purge rebuilds it once it
	// has shrunk to a quarter.
	peak int
}

// linkRows is what the state holds of one link; an entry of logState.links
// holds hours or visits or both, and leaves the map when it holds neither.
type linkRows struct {
	// hours is the first of the link's hours, chained by hourRows.next
	// in ascending order: a one-off link holds one, and a list costs it
	// 16 bytes less than a slice and the slice's own allocation.
	hours *hourRows
	// visits are the visitor hashes journaled and not yet marked as stored
	// in a sketch (docs/adr/024-visitor-hash.md), nil when there are
	// none: behind a pointer, since a flush marks them all and the link's
	// hours stay until its actor is evicted.
	visits *linkVisits
}

// linkVisits are a link's unmarked visits: those numbered flushed+1 on.
type linkVisits struct {
	flushed int64
	list    []Visit
}

// visitsBlock is a link's first visits and their first one in one
// allocation: one fewer per link of a burst, and of another size class
// than linkRows, so that the spans its blocks fill are freed whole when a
// flush marks them, not left half full between the entries that stay.
type visitsBlock struct {
	linkVisits
	first [1]Visit
}

// hoursOf yields link's hours, ascending.
func (s *logState) hoursOf(link int64) iter.Seq[*hourRows] {
	var first *hourRows
	if e := s.links[link]; e != nil {
		first = e.hours
	}
	return hoursFrom(first)
}

// all yields e's hours, ascending.
func (e *linkRows) all() iter.Seq[*hourRows] { return hoursFrom(e.hours) }

func hoursFrom(first *hourRows) iter.Seq[*hourRows] {
	return func(yield func(*hourRows) bool) {
		for h := first; h != nil; h = h.next {
			if !yield(h) {
				return
			}
		}
	}
}

// entry returns link's entry, created if it has none.
func (s *logState) entry(link int64) *linkRows {
	e := s.links[link]
	if e == nil {
		e = &linkRows{}
		s.links[link] = e
		s.peak = max(s.peak, len(s.links))
	}
	return e
}

// setHours sets the first hour of link's entry e, which leaves the map if
// it then holds nothing.
func (s *logState) setHours(link int64, e *linkRows, first *hourRows) {
	switch {
	case e.hours == nil && first != nil:
		s.held++
	case e.hours != nil && first == nil:
		s.held--
	}
	e.hours = first
	s.tidy(link, e)
}

// tidy removes link's entry e from the map if it holds nothing.
func (s *logState) tidy(link int64, e *linkRows) {
	if e.hours == nil && e.visits == nil {
		delete(s.links, link)
	}
}

type hourRows struct {
	next *hourRows // the link's next hour
	hour int64
	mins []minCell // ascending bucket
	// The hour's counts by dimension and value (cells.go): set is the
	// interned list of its cells' (dimension, value) ids, in the order
	// values arrived, while every cell has the same two counts, un and uf
	// (int32s: a count past that takes the wide form, so that the hour
	// fits 64 bytes); wide the cells' own keys and counts once they
	// differ. Both nil: no cells.
	set    *keySet
	wide   *wideCounts
	un, uf int32
}

// seeding reports whether h's rows restarted after a drop: the rollup's
// counts of this node for the link and hour are added before their first
// flush (linkcounter's Counter.seedHours). Until then every row of the hour
// is unflushed. The mark is kept in the wide form (rare: an hour clicked
// again after its link was dropped), so that the shared one, a one-off
// link's, fits 64 bytes.
func (h *hourRows) seeding() bool { return h.wide != nil && h.wide.seed }

// setSeeding sets h's seed mark.
func (s *logState) setSeeding(h *hourRows, on bool) {
	switch {
	case on:
		s.expand(h)
		h.wide.seed = true
	case h.wide != nil && h.wide.seed:
		h.wide.seed = false
		s.compact(h)
	}
}

// minCell is a minute's count, flushed count and automated part of the
// count (a mark of flushed covers the automated clicks among them).
type minCell struct{ bucket, n, flushed, auto int64 }

func newLogState() *logState {
	return &logState{links: make(map[int64]*linkRows), byHour: make(map[int64][]int64),
		dropped: make(map[int64][]int64), unsorted: make(map[int64]int), stale: make(map[int64]int),
		values: newValueTable()}
}

// hourOf returns link's rows of hour, created if create.
func (s *logState) hourOf(link, hour int64, create bool) *hourRows {
	e := s.links[link]
	var prev, next *hourRows
	if e != nil {
		// A link holds a few hours: those not yet purged.
		for next = e.hours; next != nil && next.hour < hour; next = next.next {
			prev = next
		}
		if next != nil && next.hour == hour {
			return next
		}
	}
	if !create {
		return nil
	}
	h := &hourRows{hour: hour, next: next}
	if _, was := slices.BinarySearch(s.dropped[hour], link); was {
		// The rollup holds what the dropped rows counted: this fresh
		// count must add it before its first flush, or the upsert would
		// keep the larger old count and lose the new clicks under it.
		s.setSeeding(h, true)
	}
	if prev != nil {
		prev.next = h
	} else {
		s.setHours(link, s.entry(link), h)
	}
	s.byHour[hour] = append(s.byHour[hour], link)
	return h
}

func cmpInt(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func (h *hourRows) min(bucket int64, create bool) *minCell {
	i, found := slices.BinarySearchFunc(h.mins, bucket, func(m minCell, t int64) int { return cmpInt(m.bucket, t) })
	if found {
		return &h.mins[i]
	}
	if !create {
		return nil
	}
	if h.mins == nil {
		// Most hours of a burst count one minute: no room for more.
		h.mins = []minCell{{bucket: bucket}}
		return &h.mins[0]
	}
	h.mins = slices.Insert(h.mins, i, minCell{bucket: bucket})
	return &h.mins[i]
}

// allFlushed reports whether the hour holds nothing the rollup lacks.
func (h *hourRows) allFlushed() bool {
	if h.seeding() {
		return false
	}
	for _, m := range h.mins {
		if m.n != m.flushed {
			return false
		}
	}
	return h.dimsAllFlushed()
}

// allFlushed reports whether each of e's hours is.
func (e *linkRows) allFlushed() bool {
	for h := range e.all() {
		if !h.allFlushed() {
			return false
		}
	}
	return true
}

// valuesOf returns how many values h holds for d that MaxDimValues bounds
// (all but MoreValue).
func (s *logState) valuesOf(h *hourRows, d cellDim) int {
	n := 0
	for _, id := range h.keys() {
		if v := s.values.vals[id]; v.dim == d && v.value != linkforge.MoreValue {
			n++
		}
	}
	return n
}

func hourStart(bucket int64) int64 {
	h := bucket - bucket%3600
	if bucket%3600 < 0 {
		h -= 3600
	}
	return h
}

// apply applies one record. It is the only code that changes the state, at
// commit and at replay alike, so that a replayed log gives exactly the state
// its commits gave. Marks only ever raise flushed, and never above n: an
// older mark replayed after a newer one changes nothing.
func (s *logState) apply(r *logRecord) (purged int64) {
	if r.reset {
		clear(s.links)
		s.held = 0
		clear(s.byHour)
		clear(s.dropped)
		clear(s.stale)
		s.values.reset()
	}
	if r.meta {
		s.nodeID, s.seedPending = r.nodeID, r.seedPending
	}
	for _, in := range r.incs {
		if in.v == 0 {
			// Only an automated part (a converted old frame, fromV3): of
			// a minute the record's increments made, or that a purge
			// left.
			if h := s.hourOf(in.link, hourStart(in.at), false); h != nil {
				if m := h.min(in.at, false); m != nil {
					m.auto = min(m.auto+in.a, m.n)
				}
			}
			continue
		}
		m := s.hourOf(in.link, hourStart(in.at), true).min(in.at, true)
		m.n += in.v
		m.auto += in.a
	}
	// A (link, hour)'s dimension rows come together (boundDims): they are
	// applied together, which keeps a one-off hour's cells in the shared
	// form (cells.go).
	for group := range hourGroups(r.dims) {
		s.addDims(s.hourOf(group[0].link, group[0].hour, true), group)
	}
	for _, m := range r.marks {
		if h := s.hourOf(m.link, hourStart(m.at), false); h != nil {
			if c := h.min(m.at, false); c != nil && m.v > c.flushed {
				c.flushed = min(m.v, c.n)
			}
		}
	}
	for group := range hourGroups(r.dimMarks) {
		if h := s.hourOf(group[0].link, group[0].hour, false); h != nil {
			s.markDims(h, group)
		}
	}
	if r.dropFlushed || len(r.drops) > 0 {
		if r.dropFlushed {
			for link := range s.links {
				s.drop(link)
			}
		}
		for _, link := range r.drops {
			s.drop(link)
		}
	}
	for _, m := range r.hourMarks {
		switch m.v {
		case hourDropped:
			s.addDropped(m.at, m.link)
		case hourToSeed, hourSeeded:
			if h := s.hourOf(m.link, m.at, false); h != nil {
				s.setSeeding(h, m.v == hourToSeed)
			}
		}
	}
	s.applyVisits(r)
	for hour, from := range s.unsorted {
		s.dropped[hour] = mergeSorted(s.dropped[hour], from)
	}
	clear(s.unsorted)
	for hour, n := range s.stale {
		if list := s.byHour[hour]; 2*n >= len(list) {
			kept := list[:0]
			for _, link := range list {
				if s.hourOf(link, hour, false) != nil {
					kept = append(kept, link)
				}
			}
			slices.Sort(kept)
			kept = slices.Compact(kept) // a link dropped and clicked again
			if len(kept) == 0 {
				delete(s.byHour, hour)
			} else {
				s.byHour[hour] = slices.Clip(slices.Clone(kept))
			}
			delete(s.stale, hour)
		}
	}
	if r.purge > 0 {
		purged = s.purge(r.purge)
	}
	s.shrink()
	return purged
}

// applyVisits applies r's visit marks, then its visits. A mark raises a
// link's stored seq and drops the visits it covers; a mark of a link
// holding none sets where its next visits are numbered from (what a
// snapshot restores), and an entry left empty goes.
func (s *logState) applyVisits(r *logRecord) {
	if len(r.visitMarks) == 0 && len(r.visits) == 0 {
		return
	}
	for _, m := range r.visitMarks {
		e := s.entry(m.link)
		if e.visits == nil {
			// Marked with no visits held: the visits that follow are
			// numbered from the mark.
			e.visits = &linkVisits{flushed: m.v}
			continue
		}
		if v := e.visits; m.v > v.flushed {
			k := min(m.v-v.flushed, int64(len(v.list)))
			v.list = v.list[k:]
			v.flushed = m.v
		}
	}
	for _, in := range r.visits {
		e := s.entry(in.link)
		if e.visits == nil {
			// Most links of a burst have one visit: room for that one,
			// in the same allocation.
			b := &visitsBlock{first: [1]Visit{{Day: in.day, Hash: in.hash}}}
			b.list = b.first[:]
			e.visits = &b.linkVisits
		} else {
			e.visits.list = append(e.visits.list, Visit{Day: in.day, Hash: in.hash})
		}
	}
	for _, m := range r.visitMarks {
		if e := s.links[m.link]; e != nil && e.visits != nil && len(e.visits.list) == 0 {
			// All marked: a later visit is numbered from its own mark, as
			// for a link never visited.
			e.visits = nil
			s.tidy(m.link, e)
		}
	}
}

// drop removes link's rows from memory if every one is flushed, and
// records their hours in dropped (docs/adr/014-click-log.md, "Memory").
// Its entries in byHour stay until purge visits their hour, which skips a
// link without rows there.
func (s *logState) drop(link int64) {
	e := s.links[link]
	if e == nil || e.hours == nil {
		return
	}
	if !e.allFlushed() {
		return // a click came after the eviction: its new actor has it
	}
	for h := range e.all() {
		s.addDropped(h.hour, link)
		s.stale[h.hour]++
		s.releaseCells(h)
	}
	s.setHours(link, e, nil)
}

// addDropped appends link to hour's dropped links; apply sorts the lists
// it appended to (mergeSorted) before the record ends.
func (s *logState) addDropped(hour, link int64) {
	if _, ok := s.unsorted[hour]; !ok {
		s.unsorted[hour] = len(s.dropped[hour])
	}
	s.dropped[hour] = append(s.dropped[hour], link)
}

// mergeSorted sorts list, whose elements before from are sorted already,
// and removes duplicates: it sorts only the tail, then merges, so a record
// dropping a few links costs what it drops, not the hour's whole list.
func mergeSorted(list []int64, from int) []int64 {
	head, tail := list[:from], list[from:]
	slices.Sort(tail)
	if len(head) == 0 || len(tail) == 0 || head[len(head)-1] < tail[0] {
		return slices.Compact(list)
	}
	out := make([]int64, 0, len(list))
	i, k := 0, 0
	for i < len(head) || k < len(tail) {
		var v int64
		if k == len(tail) || (i < len(head) && head[i] <= tail[k]) {
			v, i = head[i], i+1
		} else {
			v, k = tail[k], k+1
		}
		if len(out) == 0 || out[len(out)-1] != v {
			out = append(out, v)
		}
	}
	return out
}

// shrink rebuilds links once it holds a quarter of its peak: a Go map keeps
// its buckets after deletes.
func (s *logState) shrink() {
	if len(s.links) < s.peak/4 {
		// Not maps.Clone: it copies the buckets too.
		links := make(map[int64]*linkRows, len(s.links))
		maps.Copy(links, s.links)
		s.links = links
		s.peak = len(s.links)
	}
}

// purge drops flushed minutes of buckets before horizon, and an hour's
// flushed dimension rows once the hour ended before it: while clicks can
// still land in an hour its values decide MaxDimValues, and its absolute
// counts must not restart below the store's. Unflushed rows stay however
// old.
func (s *logState) purge(horizon int64) int64 {
	if horizon > s.purgedBefore {
		s.purgedBefore = horizon
	}
	var purged int64
	// Only the hours before the horizon are visited, through byHour: a
	// purge costs the rows it can drop (and the unflushed ones it keeps),
	// not every link held, since it runs on the commit path.
	for hour, links := range s.byHour {
		if hour >= horizon {
			continue
		}
		kept := links[:0]
		for _, link := range links {
			e := s.links[link]
			if e == nil {
				continue
			}
			var prev, h *hourRows
			for h = e.hours; h != nil && h.hour < hour; h = h.next {
				prev = h
			}
			if h == nil || h.hour != hour {
				continue
			}
			mins := h.mins[:0]
			for _, m := range h.mins {
				if m.n == m.flushed && m.bucket < horizon {
					purged++
					continue
				}
				mins = append(mins, m)
			}
			h.mins = mins
			if h.hour+3600 <= horizon {
				purged += s.purgeDims(h)
			}
			if len(h.mins) > 0 || h.ncells() > 0 {
				kept = append(kept, link)
				continue
			}
			if prev != nil {
				prev.next = h.next
			} else {
				s.setHours(link, e, h.next)
			}
		}
		delete(s.stale, hour)
		if len(kept) == 0 {
			delete(s.byHour, hour)
		} else {
			// A link dropped and clicked again in the hour is listed twice.
			slices.Sort(kept)
			kept = slices.Compact(kept)
			clear(links[len(kept):])
			s.byHour[hour] = kept
		}
	}
	// No click lands in an hour ended before the horizon (bucketOf): its
	// dropped links need no seed any more.
	for hour := range s.dropped {
		if hour+3600 <= horizon {
			delete(s.dropped, hour)
		}
	}
	return purged
}

// records returns the state as records that rebuild it when applied to an
// empty state: a snapshot. Each holds at most about chunk rows.
func (s *logState) records(chunk int, emit func(*logRecord) error) error {
	r := &logRecord{meta: true, nodeID: s.nodeID, seedPending: s.seedPending, purge: s.purgedBefore}
	if err := emit(r); err != nil {
		return err
	}
	r = &logRecord{}
	rows := 0
	links := slices.Sorted(maps.Keys(s.links)) // smaller deltas, and a deterministic file
	for _, l := range links {
		for h := range s.links[l].all() {
			for _, m := range h.mins {
				r.incs = append(r.incs, recRow{link: l, at: m.bucket, v: m.n, a: m.auto})
				if m.flushed > 0 {
					r.marks = append(r.marks, recRow{link: l, at: m.bucket, v: m.flushed})
				}
			}
			for i := range h.ncells() {
				d := s.cell(h, i)
				r.dims = append(r.dims, recDim{link: l, hour: h.hour, dim: d.dim, value: d.value, v: d.n})
				if d.flushed > 0 {
					r.dimMarks = append(r.dimMarks, recDim{link: l, hour: h.hour, dim: d.dim, value: d.value, v: d.flushed})
				}
			}
			rows += len(h.mins) + h.ncells()
		}
		if rows >= chunk {
			if err := emit(r); err != nil {
				return err
			}
			r.reuse()
			rows = 0
		}
	}
	// Hour marks after every row, so that replaying the snapshot derives
	// no seed mark from them: marks to be seeded are listed as they are.
	for _, l := range links {
		for h := range s.links[l].all() {
			if h.seeding() {
				r.hourMarks = append(r.hourMarks, recRow{link: l, at: h.hour, v: hourToSeed})
				rows++
			}
		}
	}
	hours := slices.Sorted(maps.Keys(s.dropped))
	for _, hour := range hours {
		for _, l := range s.dropped[hour] {
			r.hourMarks = append(r.hourMarks, recRow{link: l, at: hour, v: hourDropped})
			rows++
			if rows >= chunk {
				if err := emit(r); err != nil {
					return err
				}
				r.reuse()
				rows = 0
			}
		}
	}
	// The visits last, each link's with the seq they are numbered from
	// (applyVisits takes a record's marks before its visits).
	for _, l := range links {
		v := s.links[l].visits
		if v == nil {
			continue
		}
		r.visitMarks = append(r.visitMarks, recRow{link: l, v: v.flushed})
		for _, x := range v.list {
			r.visits = append(r.visits, recVisit{link: l, day: x.Day, hash: x.Hash})
		}
		if rows += 1 + len(v.list); rows >= chunk {
			if err := emit(r); err != nil {
				return err
			}
			r.reuse()
			rows = 0
		}
	}
	if rows > 0 {
		return emit(r)
	}
	return nil
}

// keepPart drops from r what belongs to links outside part p of parts
// (link id modulo parts), keeping what applies to every link (node id,
// reset, purge horizon, drop of the flushed): applied to a state of part
// p's links, the rest is what r changes of them. A (link, hour)'s
// dimension rows stay together, as apply takes them.
func (r *logRecord) keepPart(parts, p int) {
	out := func(link int64) bool { return int(uint64(link)%uint64(parts)) != p } //nolint:gosec // G115: parts is small and positive
	r.incs = slices.DeleteFunc(r.incs, func(x recRow) bool { return out(x.link) })
	r.marks = slices.DeleteFunc(r.marks, func(x recRow) bool { return out(x.link) })
	r.dims = slices.DeleteFunc(r.dims, func(x recDim) bool { return out(x.link) })
	r.dimMarks = slices.DeleteFunc(r.dimMarks, func(x recDim) bool { return out(x.link) })
	r.drops = slices.DeleteFunc(r.drops, out)
	r.hourMarks = slices.DeleteFunc(r.hourMarks, func(x recRow) bool { return out(x.link) })
	r.visits = slices.DeleteFunc(r.visits, func(x recVisit) bool { return out(x.link) })
	r.visitMarks = slices.DeleteFunc(r.visitMarks, func(x recRow) bool { return out(x.link) })
}

func cmpBool(a, b bool) int {
	switch {
	case a == b:
		return 0
	case b:
		return -1
	}
	return 1
}
