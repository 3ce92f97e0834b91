package linkcounter

import (
	"cmp"
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"

	"github.com/linkforge/linkforge"
)

// dimIncrementSQL returns the statement adding rows (link, hour, dim, value,
// add) dimension rows, distinct keys.
func dimIncrementSQL(rows int) string {
	var b strings.Builder
	b.WriteString("INSERT INTO dims (link_id, hour, dim, value, n) VALUES ")
	for i := range rows {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString("(?,?,?,?,?)")
	}
	b.WriteString(" ON CONFLICT (link_id, hour, dim, value) DO UPDATE SET n = n + excluded.n")
	return b.String()
}

// applyDims adds dims to their rows in tx, bounded by MaxDimValues: a value
// the journal does not hold yet for its (link, hour, dim) is kept only while
// fewer than MaxDimValues values other than MoreValue are held; past that
// its clicks go to MoreValue. New values of one commit are taken in value
// order.
//
// The decision is the journal's. The committer keeps, per (link, hour) and
// dimension, a count that is never below the number of values the journal
// holds: loaded from the journal once per (link, hour) and process, raised
// by every value a commit sends (new or not), set exactly whenever the
// values are read, and dropped when a commit fails or a seed writes behind
// the committer. The counts live in the link's actor, so they cost nothing
// once it is evicted (a later actor reloads them). Only a (link, hour, dim) whose count plus the commit's
// values could pass the bound reads its values from the journal and decides
// from them; the others cannot reach the bound whatever is new, and go
// straight to a plain multi-row upsert. A hot link with one value per
// dimension reads them once in about 64 commits. Deciding in SQL for every
// row (a window over correlated counts) cost the commit as much again as the
// upsert itself (docs/adr/009-click-dimensions.md, "Cost").
func (j *Journal) applyDims(ctx context.Context, tx *sql.Tx, dims []dimInc) error {
	slices.SortFunc(dims, func(a, b dimInc) int {
		return cmp.Or(cmp.Compare(a.linkID, b.linkID), cmp.Compare(a.hour, b.hour),
			cmp.Compare(a.dim, b.dim), strings.Compare(a.value, b.value))
	})
	if err := j.loadHeld(ctx, tx, dims); err != nil {
		return err
	}
	// Per (link, hour, dim) group, in order: does it need the careful path?
	for start := 0; start < len(dims); {
		end := start + 1
		for end < len(dims) && dims[end].linkID == dims[start].linkID &&
			dims[end].hour == dims[start].hour && dims[end].dim == dims[start].dim {
			end++
		}
		g := dims[start:end]
		h := g[0].held()
		if h[g[0].dim]+len(g) > MaxDimValues {
			n, err := j.boundGroup(ctx, tx, g)
			if err != nil {
				return err
			}
			h[g[0].dim] = n
		} else {
			h[g[0].dim] += len(g)
		}
		start = end
	}
	// Merge the rows boundGroup sent to MoreValue (still sorted by group).
	out := dims[:0]
	for _, d := range dims {
		if n := len(out); n > 0 && out[n-1].dimKey == d.dimKey {
			out[n-1].add += d.add
			continue
		}
		out = append(out, d)
	}
	args := make([]any, 0, 5*min(len(out), incSizes[0]))
	for rest := out; len(rest) > 0; {
		i := 0
		for incSizes[i] > len(rest) {
			i++
		}
		chunk := rest[:incSizes[i]]
		rest = rest[incSizes[i]:]
		args = args[:0]
		for _, d := range chunk {
			args = append(args, d.linkID, d.hour, int(d.dim), d.value, d.add)
		}
		if _, err := tx.StmtContext(ctx, j.dimInc[i]).ExecContext(ctx, args...); err != nil {
			return fmt.Errorf("add %d dimension rows: %w", len(out), err)
		}
	}
	return nil
}

// held returns the committer's count of d's (link, hour), loaded by
// loadHeld.
func (d *dimInc) held() *[linkforge.NumDimensions]int {
	if d.a == nil {
		return d.scratch
	}
	return d.a.held[d.hour]
}

// loadHeld reads, in one query, the held counts of the (link, hour)s of
// dims that their actors do not have (yet, or any more: heldGen moved).
// An actor keeps the hours of the last two hours it counted in: clicks land
// at most maxClickAge back.
func (j *Journal) loadHeld(ctx context.Context, tx *sql.Tx, dims []dimInc) error {
	gen := j.heldGen.Load()
	var buf []byte
	missing := 0
	type linkHour struct{ linkID, hour int64 }
	fresh := make(map[linkHour]*[linkforge.NumDimensions]int)
	for i := range dims {
		d := &dims[i]
		if d.a == nil {
			// A test commit without actors: count from the journal
			// every time.
			k := linkHour{d.linkID, d.hour}
			if fresh[k] == nil {
				fresh[k] = new([linkforge.NumDimensions]int)
				buf = appendTriple(buf, missing, d.linkID, d.hour, 0)
				missing++
			}
			d.scratch = fresh[k]
			continue
		}
		a := d.a
		if a.heldGen != gen {
			a.held, a.heldGen = nil, gen
		}
		if a.held[d.hour] != nil {
			continue
		}
		if a.held == nil {
			a.held = make(map[int64]*[linkforge.NumDimensions]int, 2)
		}
		for h := range a.held {
			if h < d.hour-3600 {
				delete(a.held, h)
			}
		}
		h := new([linkforge.NumDimensions]int)
		a.held[d.hour] = h
		fresh[linkHour{d.linkID, d.hour}] = h
		buf = appendTriple(buf, missing, d.linkID, d.hour, 0)
		missing++
	}
	if missing == 0 {
		return nil
	}
	rows, err := tx.QueryContext(ctx, `SELECT d.link_id, d.hour, d.dim, COUNT(*) FROM json_each(?) AS m
		JOIN dims d ON d.link_id = m.value ->> 0 AND d.hour = m.value ->> 1
		WHERE d.value <> ? GROUP BY d.link_id, d.hour, d.dim`, string(append(buf, ']')), linkforge.MoreValue)
	if err != nil {
		return fmt.Errorf("read held dimension values: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var (
			k   linkHour
			dim linkforge.Dimension
			n   int
		)
		if err := rows.Scan(&k.linkID, &k.hour, &dim, &n); err != nil {
			return fmt.Errorf("read held dimension values: %w", err)
		}
		if h := fresh[k]; h != nil && dim < linkforge.NumDimensions {
			h[dim] = n
		}
	}
	return rows.Err()
}

// boundGroup decides, from the journal's values of one (link, hour, dim),
// which of g's values (sorted) are kept and which go to MoreValue, and
// returns how many values other than MoreValue the group then holds.
func (j *Journal) boundGroup(ctx context.Context, tx *sql.Tx, g []dimInc) (int, error) {
	rows, err := tx.QueryContext(ctx, `SELECT value FROM dims WHERE link_id = ? AND hour = ? AND dim = ?`,
		g[0].linkID, g[0].hour, int(g[0].dim))
	if err != nil {
		return 0, fmt.Errorf("read dimension values: %w", err)
	}
	defer rows.Close()
	known := make(map[string]bool)
	for rows.Next() {
		var v string
		if err := rows.Scan(&v); err != nil {
			return 0, fmt.Errorf("read dimension values: %w", err)
		}
		known[v] = true
	}
	if err := rows.Err(); err != nil {
		return 0, fmt.Errorf("read dimension values: %w", err)
	}
	held := len(known)
	if known[linkforge.MoreValue] {
		held--
	}
	for i := range g {
		switch v := g[i].value; {
		case known[v] || v == linkforge.MoreValue:
		case held < MaxDimValues:
			held++
		default:
			g[i].value = linkforge.MoreValue
		}
	}
	// A MoreValue row now sorts among the group's values; keep the group
	// sorted so that equal keys are adjacent for the merge.
	slices.SortFunc(g, func(a, b dimInc) int { return strings.Compare(a.value, b.value) })
	return held, nil
}
