package clicklog

// WriteLegacyJournal is writeLegacyJournal for the external tests
// (clicklog_test), which drive the counter over an imported journal.
var WriteLegacyJournal = writeLegacyJournal

// len returns the number of lists interned.
func (t *keySets) len() int {
	n := 0
	for _, e := range t.m {
		for ; e != nil; e = e.next {
			n++
		}
	}
	return n
}

// cellsOf returns h's cells, in the order their values arrived.
func (s *logState) cellsOf(h *hourRows) []dimCell {
	out := make([]dimCell, h.ncells())
	for i := range out {
		out[i] = s.cell(h, i)
	}
	return out
}
