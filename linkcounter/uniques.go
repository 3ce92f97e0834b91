package linkcounter

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/linkcounter/clicklog"
	"github.com/linkforge/linkforge/visitor"
)

// Daily unique visitors (docs/adr/024-visitor-hash.md). A click with a
// visitor hash journals it with the click (committer.add); the actor keeps
// this node's sketch of each UTC day its link was clicked in; a flush that
// writes rows first inserts the journal's unmarked hashes into the sketches
// (an insert is idempotent, so a hash inserted before a crash and again
// from the replayed journal counts once), seeds a sketch the actor has not
// read from the store yet with this node's stored one (after an eviction
// or a restart), writes each changed sketch whole, and marks the hashes
// stored in the same journal commit as the rows' flush marks. The store
// then always holds a superset of what it held: overwriting is safe on a
// retry and on a replay, as the rollup's absolute counts are.

// daySketch is an actor's sketch of one UTC day, kept encoded as last
// written: a link clicked once holds a few bytes where a decoded sketch
// costs some 150 (docs/performance.md); a flush decodes it,
// adds the day's new visits and encodes it again, which it writes anyway.
type daySketch struct {
	day int64 // unix seconds of its UTC midnight
	enc []byte
	// seeded: the node's stored sketch of the day is merged in.
	seeded bool
}

// sketchOf returns a's sketch of day, nil if none. a.io must be held.
func (a *actor) sketchOf(day int64) *daySketch {
	if a.uniq == nil {
		return nil
	}
	days := *a.uniq
	for i := range days {
		if days[i].day == day {
			return &days[i]
		}
	}
	return nil
}

// uniqueStore returns st as a UniqueStore, or nil when it keeps no
// sketches (a test's fake store).
func uniqueStore(st Store) linkforge.UniqueStore {
	if u, ok := st.(linkforge.UniqueStore); ok {
		return u
	}
	return nil
}

// flushUniques brings the sketches of batch's links up to date with the
// journal's unmarked visits and returns the changed ones, to be written,
// and the visit marks to commit once they are. a.io of every actor in
// batch is held, which is what serializes their sketches.
func (c *Counter) flushUniques(ctx context.Context, batch []*actor, ids []int64) ([]linkforge.UniqueSketch, []clicklog.VisitMark, error) {
	if c.uniques == nil {
		return nil, nil, nil
	}
	visits := c.journal.Visits(ids)
	if len(visits) == 0 {
		return nil, nil, nil
	}
	byID := make(map[int64]*actor, len(batch))
	for _, a := range batch {
		byID[a.id] = a
	}
	type key struct{ link, day int64 }
	type work struct {
		a      *actor
		sk     *visitor.Sketch
		seeded bool
	}
	changed := make(map[key]*work)
	var order []key
	marks := make([]clicklog.VisitMark, 0, len(visits))
	for _, lv := range visits {
		a := byID[lv.LinkID]
		for _, v := range lv.Visits {
			k := key{lv.LinkID, v.Day}
			w := changed[k]
			if w == nil {
				w = &work{a: a, sk: visitor.NewSketch()}
				if ds := a.sketchOf(v.Day); ds != nil {
					sk, err := visitor.ParseSketch(ds.enc)
					if err != nil {
						return nil, nil, fmt.Errorf("sketch of link %d kept in memory: %w", lv.LinkID, err)
					}
					w.sk, w.seeded = sk, ds.seeded
				}
				changed[k] = w
				order = append(order, k)
			}
			w.sk.Insert(v.Hash)
		}
		marks = append(marks, clicklog.VisitMark{LinkID: lv.LinkID, Seq: lv.Seq})
	}
	var seed []linkforge.UniqueKey
	for _, k := range order {
		if !changed[k].seeded {
			seed = append(seed, linkforge.UniqueKey{LinkID: k.link, Day: time.Unix(k.day, 0).UTC()})
		}
	}
	if len(seed) > 0 {
		stored, err := c.uniques.NodeUniques(ctx, c.nodeID, seed)
		if err != nil {
			return nil, nil, fmt.Errorf("read the stored sketches of %d link days: %w", len(seed), err)
		}
		for _, u := range stored {
			w := changed[key{u.LinkID, u.Day.Unix()}]
			if w == nil {
				continue
			}
			s, err := visitor.ParseSketch(u.Sketch)
			if err != nil {
				return nil, nil, fmt.Errorf("stored sketch of link %d: %w", u.LinkID, err)
			}
			if err := w.sk.Merge(s); err != nil {
				return nil, nil, err
			}
		}
		for _, k := range seed {
			changed[key{k.LinkID, k.Day.Unix()}].seeded = true
		}
	}
	out := make([]linkforge.UniqueSketch, 0, len(order))
	for _, k := range order {
		w := changed[k]
		b, err := w.sk.MarshalBinary()
		if err != nil {
			return nil, nil, err
		}
		// The actor keeps what is written, as it kept the sketch it wrote:
		// a failed write is retried from the journal's unmarked visits,
		// whose inserts change nothing twice.
		if ds := w.a.sketchOf(k.day); ds != nil {
			ds.enc, ds.seeded = b, w.seeded
		} else {
			if w.a.uniq == nil {
				w.a.uniq = new([]daySketch)
			}
			*w.a.uniq = append(*w.a.uniq, daySketch{day: k.day, enc: b, seeded: w.seeded})
		}
		out = append(out, linkforge.UniqueSketch{LinkID: k.link, Day: time.Unix(k.day, 0).UTC(), Sketch: b})
	}
	return out, marks, nil
}

// pruneSketches drops a's sketches of the days before now's: no click is
// counted in them any more but a late one, and a sketch made for that is
// seeded from the store again. a.io must be held.
func pruneSketches(a *actor, now time.Time) {
	today := visitor.Day(now).Unix()
	if a.uniq == nil {
		return
	}
	*a.uniq = slices.DeleteFunc(*a.uniq, func(ds daySketch) bool { return ds.day < today })
	if len(*a.uniq) == 0 {
		a.uniq = nil
	}
}

// writeSketches writes a flush's changed sketches (none: no I/O).
func (c *Counter) writeSketches(ctx context.Context, sketches []linkforge.UniqueSketch) error {
	if len(sketches) == 0 {
		return nil
	}
	if err := c.uniques.UpsertUniques(ctx, c.nodeID, sketches); err != nil {
		return fmt.Errorf("flush %d visitor sketches: %w", len(sketches), err)
	}
	return nil
}
