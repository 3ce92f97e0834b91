package clicklog

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"math"
	"unsafe"

	"github.com/linkforge/linkforge"
)

// The click log's record format (docs/adr/014-click-log.md).
//
// A frame is:
//
//	uint32 LE  payload length
//	uint32 LE  CRC32C (Castagnoli) of the payload
//	payload
//
// and a payload is, all integers varints (signed ones zigzag, link ids and
// buckets delta-coded against the previous row of their section):
//
//	byte     format version (1 to 5)
//	uvarint  flags: 1 meta, 2 reset, 4 drop every fully flushed link
//	[meta]   string node id, byte seed pending
//	varint   purge horizon (0: none)
//	uvarint  string count, strings (uvarint length, bytes): the record's
//	         dimension values, each once
//	uvarint  increments: (link, bucket, +k[, +automated: version 4])
//	uvarint  dimension increments: (link, hour, cell dim, string index, +k)
//	uvarint  flush marks: (link, bucket, flushed)
//	uvarint  dimension flush marks: (link, hour, dim, string index, flushed)
//	[version 2 on]
//	uvarint  drops: (link): drop the link's rows if every one is flushed
//	uvarint  hour marks: (link, hour, kind): kind 1 "dropped" (a click in
//	         that hour starts rows to be seeded), 2 "to be seeded", 3
//	         "seeded"
//	[version 3 on]
//	uvarint  visits: (link, day, hash as 8 bytes LE): visitor hashes
//	uvarint  visit marks: (link, 0, seq): the first seq visits are stored
//
// A record is applied as one unit (logState.apply), in that order: reset,
// meta, increments, dimension increments, marks, dimension marks, drops,
// hour marks, visit marks, visits, purge. Every record is written as
// version 5: a cell dim is the dimension and its traffic (cellDim, 16 the
// automated bit), and a minute's increment carries its automated part.
// Version 4 had 8 dimensions, 8 the automated bit, and no source: its
// cells are re-encoded and its traffic cells give the source cells
// (withSource). Versions 1 to 3 (no drops and hour marks before 2, no
// visits before 3) counted 23 cells per click (the all-traffic
// dimensions, traffic_minute, the traffic shadows): they are replayed
// converted (fromV3), then as version 4.

const (
	frameHeader   = 8
	formatVersion = 5
	// formatV4 has no source dimension and 8 as the automated bit.
	formatV4 = 4
	// formatV3 adds the visits and visit marks.
	formatV3 = 3
	// formatV2 adds the drops and hour marks.
	formatV2 = 2
	// formatV1 is the first format: no drops, no hour marks.
	formatV1 = 1
	// maxRecord bounds a frame's length field: a larger one is a torn or
	// corrupt header, not a record (a commit of 1,000,000 distinct rows is
	// well below it).
	maxRecord = 256 << 20

	flagMeta        = 1
	flagReset       = 2
	flagDropFlushed = 4
)

// Hour mark kinds (docs/adr/014-click-log.md, "Memory").
const (
	// hourDropped: the link's rows of the hour were dropped from memory
	// while the rollup holds them; a later click in the hour starts rows
	// marked hourToSeed.
	hourDropped = 1
	// hourToSeed: the hour's rows restarted after a drop and must get the
	// rollup's counts of this node added before their first flush.
	hourToSeed = 2
	// hourSeeded: the seed is in (this record's increments and marks).
	hourSeeded = 3
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// logRecord is one record in memory: one group commit, a seed, a node id
// change, or a chunk of a snapshot.
type logRecord struct {
	meta  bool
	reset bool // drop every row first (node id change)
	// dropFlushed: drop every link whose rows are all flushed (start-up:
	// links replayed from the log that no actor holds).
	dropFlushed bool
	nodeID      string
	seedPending bool
	purge       int64

	incs     []recRow // at: bucket; v: clicks to add
	dims     []recDim // v: clicks to add
	marks    []recRow // at: bucket; v: absolute flushed count
	dimMarks []recDim // v: absolute flushed count
	// drops lists links whose rows go from memory if every one is flushed
	// (their actor was evicted), decided in apply so that replay decides
	// the same.
	drops []int64
	// hourMarks: at is the hour, v the kind (hourDropped...).
	hourMarks []recRow
	// visits: visitor hashes; visitMarks: v is the link's stored seq.
	visits     []recVisit
	visitMarks []recRow
}

type recVisit struct {
	link, day int64
	hash      uint64
}

// recRow: a is the automated part of an increment (clicks added, or
// absolute in a snapshot), 0 elsewhere.
type recRow struct{ link, at, v, a int64 }

type recDim struct {
	link, hour int64
	dim        cellDim
	value      string
	v          int64
}

func (r *logRecord) reuse() {
	*r = logRecord{incs: r.incs[:0], dims: r.dims[:0], marks: r.marks[:0], dimMarks: r.dimMarks[:0],
		drops: r.drops[:0], hourMarks: r.hourMarks[:0], visits: r.visits[:0], visitMarks: r.visitMarks[:0]}
}

// dropLarge lets go of the record's buffers past maxKeptBuffer once it is
// written: a burst's flush (a thousand links' dimension marks, a million
// links dropped at once) must not pin its buffers, and the strings in
// them, for the life of the process.
func (r *logRecord) dropLarge() {
	r.incs = bounded(r.incs)
	r.dims = bounded(r.dims)
	r.marks = bounded(r.marks)
	r.dimMarks = bounded(r.dimMarks)
	r.drops = bounded(r.drops)
	r.hourMarks = bounded(r.hourMarks)
	r.visits = bounded(r.visits)
	r.visitMarks = bounded(r.visitMarks)
}

// bounded returns s, or nil if its array is larger than maxKeptBuffer.
func bounded[T any](s []T) []T {
	var zero T
	if uintptr(cap(s))*unsafe.Sizeof(zero) > maxKeptBuffer {
		return nil
	}
	return s
}

// encoder appends records to a reusable buffer.
type encoder struct {
	buf     []byte
	strs    map[string]uint64
	strList []string
	// idx holds the string index of each of a record's dimension
	// increments, then of its dimension marks, as the dedup pass found
	// them: the encoding reads them rather than hashing every value again.
	idx []uint64
	// seen finds a value by its memory (address and length) without
	// hashing its bytes: most values are the classifier's interned
	// constants (a country code, a browser), the same memory in every
	// click, and the strs map's hash of each of a record's rows was half
	// of the encoding's time. A slot counts only in the frame of its gen.
	seen [seenSlots]seenSlot
	gen  uint32
	// last is, per dimension, the value the dedup pass met last and its
	// index: a value read from the request (a referrer host, a
	// utm_source) is other memory in every click, and neighbouring rows
	// of a record mostly repeat it; a compare is cheaper than a hash.
	last [numCellDims]struct {
		value string
		i     uint64
		ok    bool
	}
}

// seenSlots is the size of encoder.seen, larger than a record's distinct
// values mostly are.
const (
	seenBits  = 8
	seenSlots = 1 << seenBits
)

// seenSlot is a value's address and length and its string index. The
// address is a number, not a pointer: it keeps no value alive after its
// record, and within a frame every value it was taken from is alive in
// the record, so no other string can have it.
type seenSlot struct {
	p   uintptr
	n   int
	gen uint32
	i   uint32
}

// index returns the record's string index of value in dimension dim,
// adding it to the record's strings the first time.
func (e *encoder) index(dim cellDim, value string) uint64 {
	p := uintptr(unsafe.Pointer(unsafe.StringData(value))) //nolint:gosec // G103: the address is compared, never dereferenced
	slot := &e.seen[(uint64(p)^uint64(len(value)))*0x9e3779b97f4a7c15>>(64-seenBits)]
	if slot.gen == e.gen && slot.p == p && slot.n == len(value) {
		return uint64(slot.i)
	}
	l := &e.last[dim.index()]
	var i uint64
	if l.ok && l.value == value {
		i = l.i
	} else {
		var ok bool
		if i, ok = e.strs[value]; !ok {
			i = uint64(len(e.strList))
			e.strs[value] = i
			e.strList = append(e.strList, value)
		}
		l.value, l.i, l.ok = value, i, true
	}
	if i <= math.MaxUint32 {
		*slot = seenSlot{p: p, n: len(value), gen: e.gen, i: uint32(i)}
	}
	return i
}

// frame encodes r as one frame and returns it (valid until the next call).
func (e *encoder) frame(r *logRecord) []byte {
	if e.strs == nil {
		e.strs = make(map[string]uint64)
	}
	clear(e.strs)
	e.strList = e.strList[:0]
	e.idx = e.idx[:0]
	if e.gen++; e.gen == 0 {
		// Wrapped: a slot of the frame 2^32 frames ago would count.
		e.seen = [seenSlots]seenSlot{}
		e.gen = 1
	}
	e.last = [numCellDims]struct {
		value string
		i     uint64
		ok    bool
	}{}
	for _, list := range [][]recDim{r.dims, r.dimMarks} {
		for _, d := range list {
			e.idx = append(e.idx, e.index(d.dim, d.value))
		}
	}
	b := append(e.buf[:0], make([]byte, frameHeader)...)
	b = append(b, formatVersion)
	var flags uint64
	if r.meta {
		flags |= flagMeta
	}
	if r.reset {
		flags |= flagReset
	}
	if r.dropFlushed {
		flags |= flagDropFlushed
	}
	b = binary.AppendUvarint(b, flags)
	if r.meta {
		b = appendString(b, r.nodeID)
		if r.seedPending {
			b = append(b, 1)
		} else {
			b = append(b, 0)
		}
	}
	b = binary.AppendVarint(b, r.purge)
	b = binary.AppendUvarint(b, uint64(len(e.strList)))
	for _, s := range e.strList {
		b = appendString(b, s)
	}
	b = appendIncs(b, r.incs)
	b = appendDims(b, r.dims, e.idx[:len(r.dims)])
	b = appendRows(b, r.marks)
	b = appendDims(b, r.dimMarks, e.idx[len(r.dims):])
	b = binary.AppendUvarint(b, uint64(len(r.drops)))
	var link int64
	for _, l := range r.drops {
		b = binary.AppendVarint(b, l-link)
		link = l
	}
	b = appendRows(b, r.hourMarks)
	{
		b = binary.AppendUvarint(b, uint64(len(r.visits)))
		var link, day int64
		for _, v := range r.visits {
			b = binary.AppendVarint(b, v.link-link)
			b = binary.AppendVarint(b, v.day-day)
			b = binary.LittleEndian.AppendUint64(b, v.hash)
			link, day = v.link, v.day
		}
		b = appendRows(b, r.visitMarks)
	}
	payload := b[frameHeader:]
	binary.LittleEndian.PutUint32(b[0:4], uint32(len(payload))) //nolint:gosec // G115: a record is one commit (a million distinct rows is a few MiB, maxRecord 256 MiB), far below 4 GiB
	binary.LittleEndian.PutUint32(b[4:8], crc32.Checksum(payload, castagnoli))
	e.buf = b
	return b
}

func appendString(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

func appendRows(b []byte, rows []recRow) []byte {
	b = binary.AppendUvarint(b, uint64(len(rows)))
	var link, at int64
	for _, r := range rows {
		b = binary.AppendVarint(b, r.link-link)
		b = binary.AppendVarint(b, r.at-at)
		b = binary.AppendVarint(b, r.v)
		link, at = r.link, r.at
	}
	return b
}

// appendIncs appends increments with their automated parts (version 4).
func appendIncs(b []byte, rows []recRow) []byte {
	b = binary.AppendUvarint(b, uint64(len(rows)))
	var link, at int64
	for _, r := range rows {
		b = binary.AppendVarint(b, r.link-link)
		b = binary.AppendVarint(b, r.at-at)
		b = binary.AppendVarint(b, r.v)
		b = binary.AppendVarint(b, r.a)
		link, at = r.link, r.at
	}
	return b
}

// appendDims appends dims, idx[i] being the string index of dims[i]'s
// value.
func appendDims(b []byte, dims []recDim, idx []uint64) []byte {
	b = binary.AppendUvarint(b, uint64(len(dims)))
	var link, hour int64
	for i, d := range dims {
		if d.link == link && d.hour == hour && idx[i] < 0x80 && d.v >= 0 && d.v < 0x40 {
			// The common row, a value of the previous row's (link, hour)
			// counted a few times: five one-byte fields (zigzag v is 2v),
			// appended at once.
			b = append(b, 0, 0, byte(d.dim), byte(idx[i]), byte(d.v<<1))
			continue
		}
		b = binary.AppendVarint(b, d.link-link)
		b = binary.AppendVarint(b, d.hour-hour)
		b = append(b, byte(d.dim))
		b = binary.AppendUvarint(b, idx[i])
		b = binary.AppendVarint(b, d.v)
		link, hour = d.link, d.hour
	}
	return b
}

// errBadRecord: a frame whose checksum holds but whose payload does not
// decode. Only a bug or deliberate tampering produces one.
var errBadRecord = errors.New("malformed click log record")

// decoder decodes payloads into a reused record. Dimension values are
// interned, so that replaying a million records of the same few values
// allocates each once.
type decoder struct {
	p      []byte
	err    error
	intern map[string]string
	strs   []string
}

func (d *decoder) uvarint() uint64 {
	v, n := binary.Uvarint(d.p)
	if n <= 0 {
		d.fail()
		return 0
	}
	d.p = d.p[n:]
	return v
}

func (d *decoder) varint() int64 {
	v, n := binary.Varint(d.p)
	if n <= 0 {
		d.fail()
		return 0
	}
	d.p = d.p[n:]
	return v
}

func (d *decoder) byte1() byte {
	if len(d.p) == 0 {
		d.fail()
		return 0
	}
	c := d.p[0]
	d.p = d.p[1:]
	return c
}

func (d *decoder) fail() {
	if d.err == nil {
		d.err = errBadRecord
	}
	d.p = nil
}

func (d *decoder) str() string {
	n := d.uvarint()
	if n > uint64(len(d.p)) {
		d.fail()
		return ""
	}
	raw := d.p[:n]
	d.p = d.p[n:]
	if s, ok := d.intern[string(raw)]; ok {
		return s
	}
	s := string(raw)
	if d.intern == nil {
		d.intern = make(map[string]string)
	}
	if len(d.intern) < 1<<16 {
		d.intern[s] = s
	}
	return s
}

// count reads a section length, bounded by what the payload can hold.
func (d *decoder) count(minBytes int) int {
	n := d.uvarint()
	if n > uint64(len(d.p)/minBytes) { //nolint:gosec // G115: a length, never negative
		d.fail()
		return 0
	}
	return int(n) //nolint:gosec // G115: n <= len(d.p)/minBytes, checked above
}

// decode decodes payload into r (reset first).
func (d *decoder) decode(payload []byte, r *logRecord) error {
	r.reuse()
	d.p, d.err = payload, nil
	v := d.byte1()
	if (v < formatV1 || v > formatVersion) && d.err == nil {
		return fmt.Errorf("%w: format version %d, this binary reads %d to %d", errBadRecord, v, formatV1, formatVersion)
	}
	flags := d.uvarint()
	r.meta, r.reset, r.dropFlushed = flags&flagMeta != 0, flags&flagReset != 0, flags&flagDropFlushed != 0
	if r.meta {
		r.nodeID = d.str()
		r.seedPending = d.byte1() != 0
	}
	r.purge = d.varint()
	ns := d.count(1)
	d.strs = d.strs[:0]
	for range ns {
		d.strs = append(d.strs, d.str())
	}
	if v < formatV4 {
		r.incs = d.rows(r.incs)
	} else {
		r.incs = d.incs(r.incs)
	}
	r.dims = d.dims(r.dims, v)
	r.marks = d.rows(r.marks)
	r.dimMarks = d.dims(r.dimMarks, v)
	if v >= formatV2 {
		n := d.count(1)
		var link int64
		for range n {
			link += d.varint()
			r.drops = append(r.drops, link)
		}
		r.hourMarks = d.rows(r.hourMarks)
		for _, m := range r.hourMarks {
			if m.v < hourDropped || m.v > hourSeeded {
				d.fail()
			}
		}
	}
	if v >= formatV3 {
		r.visits = d.visits(r.visits)
		r.visitMarks = d.rows(r.visitMarks)
	}
	if d.err == nil && len(d.p) != 0 {
		d.fail()
	}
	if d.err == nil && v < formatV4 {
		r.fromV3(v == formatV1)
	}
	if d.err == nil && v < formatVersion {
		r.withSource()
	}
	return d.err
}

func (d *decoder) incs(out []recRow) []recRow {
	n := d.count(4)
	var link, at int64
	for range n {
		link += d.varint()
		at += d.varint()
		v := d.varint()
		out = append(out, recRow{link: link, at: at, v: v, a: d.varint()})
	}
	return out
}

func (d *decoder) rows(out []recRow) []recRow {
	n := d.count(3)
	var link, at int64
	for range n {
		link += d.varint()
		at += d.varint()
		out = append(out, recRow{link: link, at: at, v: d.varint()})
	}
	return out
}

func (d *decoder) visits(out []recVisit) []recVisit {
	n := d.count(10)
	var link, day int64
	for range n {
		link += d.varint()
		day += d.varint()
		if len(d.p) < 8 {
			d.fail()
			return out
		}
		h := binary.LittleEndian.Uint64(d.p)
		d.p = d.p[8:]
		out = append(out, recVisit{link: link, day: day, hash: h})
	}
	return out
}

// dims decodes a section of dimension rows of a frame of the given version.
// The cell dims of versions 1 to 3 are left as written, for fromV3;
// version 4's are re-encoded (its automated bit was 8).
func (d *decoder) dims(out []recDim, version byte) []recDim {
	n := d.count(5)
	var link, hour int64
	for range n {
		var raw byte
		var si uint64
		var v int64
		if p := d.p; len(p) >= 5 && p[0] == 0 && p[1] == 0 && p[3] < 0x80 && p[4] < 0x80 {
			// appendDims' common row: five one-byte fields.
			raw, si, v = p[2], uint64(p[3]), int64(p[4]>>1)^-int64(p[4]&1)
			d.p = p[5:]
		} else {
			link += d.varint()
			hour += d.varint()
			raw = d.byte1()
			si = d.uvarint()
			v = d.varint()
		}
		dim := cellDim(raw)
		ok := si < uint64(len(d.strs))
		switch {
		case version < formatV4:
			ok = ok && raw < oldNumDims
		case version == formatV4:
			ok = ok && raw < 2*v4AutomatedBit
			dim = cellOf(linkforge.Dimension(raw%v4AutomatedBit), raw >= v4AutomatedBit)
		default:
			ok = ok && dim.valid()
		}
		if !ok {
			d.fail()
			return out
		}
		out = append(out, recDim{link: link, hour: hour, dim: dim, value: d.strs[si], v: v})
	}
	return out
}

// nextFrame returns the payload of the frame at the start of b and the
// frame's size, or ok=false when b does not start with a whole, intact
// frame (a torn or corrupt record).
func nextFrame(b []byte) (payload []byte, size int, ok bool) {
	if len(b) < frameHeader {
		return nil, 0, false
	}
	n := binary.LittleEndian.Uint32(b[0:4])
	if n == 0 || n > maxRecord || uint64(n) > uint64(len(b)-frameHeader) { //nolint:gosec // G115: len(b) >= frameHeader, checked above
		return nil, 0, false
	}
	payload = b[frameHeader : frameHeader+int(n)]
	if crc32.Checksum(payload, castagnoli) != binary.LittleEndian.Uint32(b[4:8]) {
		return nil, 0, false
	}
	return payload, frameHeader + int(n), true
}
