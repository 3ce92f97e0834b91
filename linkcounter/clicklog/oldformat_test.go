package clicklog

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/linkforge/linkforge"
)

// oldFrame encodes r as a frame of version 1, 2 or 3, the format before
// version 4 (format.go): increments without their automated part, and
// dims numbered as then (oldformat.go), a recDim's dim holding the old
// number. It is the old encoder, kept to test the conversion.
func oldFrame(version byte, r *logRecord) []byte {
	var strs []string
	index := map[string]uint64{}
	idx := func(s string) uint64 {
		i, ok := index[s]
		if !ok {
			i = uint64(len(strs))
			index[s] = i
			strs = append(strs, s)
		}
		return i
	}
	for _, list := range [][]recDim{r.dims, r.dimMarks} {
		for _, d := range list {
			idx(d.value)
		}
	}
	dims := func(b []byte, list []recDim) []byte {
		b = binary.AppendUvarint(b, uint64(len(list)))
		var link, hour int64
		for _, d := range list {
			b = binary.AppendVarint(b, d.link-link)
			b = binary.AppendVarint(b, d.hour-hour)
			b = append(b, byte(d.dim))
			b = binary.AppendUvarint(b, idx(d.value))
			b = binary.AppendVarint(b, d.v)
			link, hour = d.link, d.hour
		}
		return b
	}
	b := []byte{version}
	var flags uint64
	if r.meta {
		flags |= flagMeta
	}
	b = binary.AppendUvarint(b, flags)
	if r.meta {
		b = append(appendString(b, r.nodeID), 0)
	}
	b = binary.AppendVarint(b, r.purge)
	b = binary.AppendUvarint(b, uint64(len(strs)))
	for _, s := range strs {
		b = appendString(b, s)
	}
	b = appendRows(b, r.incs)
	b = dims(b, r.dims)
	b = appendRows(b, r.marks)
	b = dims(b, r.dimMarks)
	if version >= formatV2 {
		b = binary.AppendUvarint(b, 0) // drops
		b = appendRows(b, r.hourMarks)
	}
	if version >= formatV3 {
		b = binary.AppendUvarint(b, 0) // visits
		b = appendRows(b, nil)
	}
	out := binary.LittleEndian.AppendUint32(nil, uint32(len(b))) //nolint:gosec // G115: a test record
	out = binary.LittleEndian.AppendUint32(out, crc32.Checksum(b, castagnoli))
	return append(out, b...)
}

// oldClick is one click's 23 rows of the old format in hour, minute m of
// it: the all-traffic cells of the 8 dimensions, traffic_minute, and the
// 14 shadows with their placeholders.
func oldClick(link, hour int64, m int, automated bool, country string) []recDim {
	traffic, minute := linkforge.TrafficHuman, linkforge.TrafficHuman
	if automated {
		traffic, minute = linkforge.TrafficAutomated, fmt.Sprintf("%02d", m)
	}
	vals := []string{country, "direct", "other", "other", "other", "none", "none", traffic}
	var out []recDim
	for d, v := range vals {
		out = append(out, recDim{link: link, hour: hour, dim: cellDim(d), value: v, v: 1})
	}
	out = append(out, recDim{link: link, hour: hour, dim: oldDimTrafficMinute, value: minute, v: 1})
	for d, v := range vals[:oldDimTraffic] {
		human, auto := v, oldPlaceholderHuman
		if automated {
			human, auto = oldPlaceholderRobots, v
		}
		out = append(out,
			recDim{link: link, hour: hour, dim: cellDim(oldDimShadows + 2*d), value: human, v: 1},
			recDim{link: link, hour: hour, dim: cellDim(oldDimShadows + 2*d + 1), value: auto, v: 1})
	}
	return out
}

// TestReplaysOldFrames: a journal of version 2 and 3 frames (23 cells per
// click, the traffic shadows and traffic_minute) replays as version 4
// cells: one per public dimension under the click's traffic, the minute's
// automated part from traffic_minute, and the flush marks of the shadows
// on the (dimension, traffic) cells they became, so that what was flushed
// is not flushed again and what was not is. The journal then writes
// version 4 only, and replays the same again.
func TestReplaysOldFrames(t *testing.T) {
	const hour = 1_700_002_800
	bucket := int64(hour + 7*60)
	var records []*logRecord
	// Minute 7: 3 automated clicks from DE, 2 human from GB, in one commit.
	var commit logRecord
	commit.meta, commit.nodeID = true, "edge-1"
	commit.incs = []recRow{{link: 1, at: bucket, v: 5}}
	for i := range 5 {
		auto := i < 3
		c := "GB"
		if auto {
			c = "DE"
		}
		commit.dims = append(commit.dims, oldClick(1, hour, 7, auto, c)...)
	}
	records = append(records, &commit)
	// Flushed: the minute and every cell, with their absolute counts.
	flush := &logRecord{marks: []recRow{{link: 1, at: bucket, v: 5}}}
	sums := map[[2]any]int64{}
	for _, d := range commit.dims {
		sums[[2]any{d.dim, d.value}] += d.v
	}
	for k, n := range sums {
		flush.dimMarks = append(flush.dimMarks, recDim{link: 1, hour: hour, dim: k[0].(cellDim), value: k[1].(string), v: n})
	}
	slices.SortFunc(flush.dimMarks, func(a, b recDim) int { return int(a.dim) - int(b.dim) })
	records = append(records, flush)
	// Minute 9: one more automated click from DE, unflushed (version 3).
	records = append(records, &logRecord{incs: []recRow{{link: 1, at: hour + 9*60, v: 1}}, dims: oldClick(1, hour, 9, true, "DE")})

	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, logDirName), 0o755); err != nil {
		t.Fatal(err)
	}
	var seg []byte
	for i, r := range records {
		v := byte(formatV2)
		if i == 2 {
			v = formatV3
		}
		seg = append(seg, oldFrame(v, r)...)
	}
	if err := os.WriteFile(filepath.Join(dir, logDirName, segmentName(1)), seg, 0o600); err != nil {
		t.Fatal(err)
	}

	check := func(j *Journal) {
		t.Helper()
		rows := j.Rows(1)
		want := []Row{{LinkID: 1, Bucket: bucket, N: 5, Flushed: 5, Automated: 3}, {LinkID: 1, Bucket: hour + 9*60, N: 1, Automated: 1}}
		if !slices.Equal(rows, want) {
			t.Fatalf("minute rows %+v, want %+v", rows, want)
		}
		cells := j.DimRows(1)
		if len(cells) != 2*int(publicDims) {
			t.Errorf("%d cells, want %d: %+v", len(cells), 2*publicDims, cells)
		}
		byTraffic := map[bool]map[linkforge.Dimension]int64{false: {}, true: {}}
		for _, c := range cells {
			if c.Value == oldPlaceholderHuman || c.Value == oldPlaceholderRobots {
				t.Errorf("placeholder cell %+v", c)
			}
			byTraffic[c.Automated][c.Dim] += c.N
			var want DimRow
			switch {
			case c.Dim == linkforge.DimCountry && c.Automated:
				want = DimRow{Value: "DE", N: 4, Flushed: 3}
			case c.Dim == linkforge.DimCountry:
				want = DimRow{Value: "GB", N: 2, Flushed: 2}
			case c.Automated:
				want = DimRow{Value: c.Value, N: 4, Flushed: 3}
			default:
				want = DimRow{Value: c.Value, N: 2, Flushed: 2}
			}
			if c.Value != want.Value || c.N != want.N || c.Flushed != want.Flushed {
				t.Errorf("cell %+v, want %s=%q n=%d flushed=%d", c, c.Dim, want.Value, want.N, want.Flushed)
			}
		}
		for d := range publicDims {
			if byTraffic[false][d] != 2 || byTraffic[true][d] != 4 {
				t.Errorf("%s: human %d, automated %d; want 2 and 4", d, byTraffic[false][d], byTraffic[true][d])
			}
		}
		if tr := j.HeldBy(1, linkforge.DimTraffic); tr[linkforge.TrafficAutomated] != 4 || tr[linkforge.TrafficHuman] != 2 {
			t.Errorf("traffic held %v, want automated 4, human 2", tr)
		}
	}
	j := mustJournal(t, dir, WithSync(SyncWriteOnly))
	check(j)
	// One more click, written as the current version; then replayed with
	// the rest.
	in := &Increment{LinkID: 1, Bucket: bucket, Add: 1}
	in.CountDims(&linkforge.ClickDims{linkforge.DimCountry: "GB"})
	if _, err := j.Commit(t.Context(), []*Increment{in}, nil, nil, 0, nil); err != nil {
		t.Fatal(err)
	}
	abandon(j)
	j2 := mustJournal(t, dir, WithSync(SyncWriteOnly))
	if r := j2.Rows(1); r[0].N != 6 || r[0].Automated != 3 || r[0].Flushed != 5 {
		t.Fatalf("after a new click: %+v, want 6 clicks, 3 automated, 5 flushed", r[0])
	}
	// Every frame written since is the current version.
	segs, err := filepath.Glob(filepath.Join(dir, logDirName, "*"+segmentSuffix))
	if err != nil {
		t.Fatal(err)
	}
	var versions []byte
	for _, seg := range segs {
		b, err := os.ReadFile(seg)
		if err != nil {
			t.Fatal(err)
		}
		for len(b) > 0 {
			p, n, ok := nextFrame(b)
			if !ok {
				break
			}
			versions = append(versions, p[0])
			b = b[n:]
		}
	}
	if len(versions) < 4 || !slices.Equal(versions[:3], []byte{2, 2, 3}) || slices.ContainsFunc(versions[3:], func(v byte) bool { return v != formatVersion }) {
		t.Errorf("frame versions %v, want the old 2, 2, 3, then version %d only", versions, formatVersion)
	}
}

// A version 1 record (before drops, hour marks and traffic) still
// decodes: its clicks are human, each all-traffic cell its human cell.
func TestDecodeFormatV1(t *testing.T) {
	r := &logRecord{purge: 60,
		incs:  []recRow{{link: 1, at: 3600, v: 2}},
		dims:  []recDim{{link: 1, hour: 3600, dim: 0, value: "NL", v: 2}},
		marks: []recRow{{link: 1, at: 3600, v: 1}}}
	payload := oldFrame(formatV1, r)[frameHeader:]
	var d decoder
	var got logRecord
	if err := d.decode(payload, &got); err != nil {
		t.Fatalf("decode version 1: %v", err)
	}
	want := []recDim{{link: 1, hour: 3600, dim: cellOf(linkforge.DimCountry, false), value: "NL", v: 2}}
	if fmt.Sprint(got.incs, got.dims, got.marks, got.purge) != fmt.Sprint(r.incs, want, r.marks, r.purge) {
		t.Errorf("decoded %+v, want %+v", got, r)
	}
	bad := slices.Clone(payload)
	bad[0] = formatVersion + 1
	if err := d.decode(bad, &got); err == nil {
		t.Errorf("version %d decoded, want an error", formatVersion+1)
	}
}

// v4Frame encodes r as a frame of version 4: version 5's layout, with
// the cell dims of then (8 dimensions, 8 the automated bit; a recDim's
// dim holds that byte) and no source cells.
func v4Frame(r *logRecord) []byte {
	var e encoder
	b := slices.Clone(e.frame(r))
	b[frameHeader] = formatV4
	binary.LittleEndian.PutUint32(b[4:8], crc32.Checksum(b[frameHeader:], castagnoli))
	return b
}

// v4Click is one click's 8 cells of version 4 (no source), as v4Frame
// takes them.
func v4Click(link, hour int64, automated bool, country string) []recDim {
	traffic, bit := linkforge.TrafficHuman, cellDim(0)
	if automated {
		traffic, bit = linkforge.TrafficAutomated, v4AutomatedBit
	}
	var out []recDim
	for d, v := range []string{country, "direct", "other", "other", "other", "none", "none", traffic} {
		out = append(out, recDim{link: link, hour: hour, dim: cellDim(d) | bit, value: v, v: 1})
	}
	return out
}

// TestReplaysV4Frames: a journal of version 4 frames (8 dimensions, the
// automated bit 8, no source) left by a crash replays to the same counts,
// each cell under its traffic, and every click of then counted under
// source "link", flush marks included, so that what was flushed is not
// flushed again. A QR scan written after it counts under "qr", and the
// whole replays the same again.
func TestReplaysV4Frames(t *testing.T) {
	const hour = 1_700_002_800
	bucket := int64(hour + 7*60)
	commit := &logRecord{meta: true, nodeID: "edge-1", incs: []recRow{{link: 1, at: bucket, v: 5, a: 3}}}
	for i := range 5 {
		c := "GB"
		if i < 3 {
			c = "DE"
		}
		commit.dims = append(commit.dims, v4Click(1, hour, i < 3, c)...)
	}
	flush := &logRecord{marks: []recRow{{link: 1, at: bucket, v: 5}}}
	sums := map[recDim]int64{}
	for _, d := range commit.dims {
		sums[recDim{dim: d.dim, value: d.value}] += d.v
	}
	for k, n := range sums {
		flush.dimMarks = append(flush.dimMarks, recDim{link: 1, hour: hour, dim: k.dim, value: k.value, v: n})
	}
	slices.SortFunc(flush.dimMarks, func(a, b recDim) int { return int(a.dim) - int(b.dim) })
	// Minute 9: one more automated click from DE, unflushed.
	later := &logRecord{incs: []recRow{{link: 1, at: hour + 9*60, v: 1, a: 1}}, dims: v4Click(1, hour, true, "DE")}

	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, logDirName), 0o755); err != nil {
		t.Fatal(err)
	}
	var seg []byte
	for _, r := range []*logRecord{commit, flush, later} {
		seg = append(seg, v4Frame(r)...)
	}
	if err := os.WriteFile(filepath.Join(dir, logDirName, segmentName(1)), seg, 0o600); err != nil {
		t.Fatal(err)
	}
	check := func(j *Journal, qr int64) {
		t.Helper()
		want := []Row{{LinkID: 1, Bucket: bucket, N: 5, Flushed: 5, Automated: 3}, {LinkID: 1, Bucket: hour + 9*60, N: 1 + qr, Automated: 1}}
		if rows := j.Rows(1); !slices.Equal(rows, want) {
			t.Fatalf("minute rows %+v, want %+v", rows, want)
		}
		for _, c := range j.DimRows(1) {
			var n, flushed, scans int64 = 2 + qr, 2, qr // human: GB, and the QR scans
			if c.Automated {
				n, flushed, scans = 4, 3, 0
			}
			switch {
			case c.Dim == linkforge.DimSource && c.Value == linkforge.SourceQR:
				if c.Automated || c.N != qr || c.Flushed != 0 {
					t.Errorf("cell %+v, want human, %d unflushed", c, qr)
				}
			case c.Dim == linkforge.DimSource:
				if c.Value != linkforge.SourceLink || c.N != n-scans || c.Flushed != flushed {
					t.Errorf("cell %+v, want link n=%d flushed=%d", c, n-scans, flushed)
				}
			case c.Dim == linkforge.DimCountry || c.Dim == linkforge.DimTraffic:
			case c.N != n || c.Flushed != flushed:
				t.Errorf("cell %+v, want n=%d flushed=%d", c, n, flushed)
			}
		}
		if src := j.HeldBy(1, linkforge.DimSource); src[linkforge.SourceLink] != 6 || src[linkforge.SourceQR] != qr {
			t.Errorf("source held %v, want link 6, qr %d", src, qr)
		}
		if tr := j.HeldBy(1, linkforge.DimTraffic); tr[linkforge.TrafficAutomated] != 4 || tr[linkforge.TrafficHuman] != 2+qr {
			t.Errorf("traffic held %v, want automated 4, human %d", tr, 2+qr)
		}
		if c := j.HeldBy(1, linkforge.DimCountry); c["DE"] != 4 || c["GB"] != 2 || c["unknown"] != qr {
			t.Errorf("country held %v, want DE 4, GB 2, unknown %d", c, qr)
		}
	}
	j := mustJournal(t, dir, WithSync(SyncWriteOnly))
	check(j, 0)
	in := &Increment{LinkID: 1, Bucket: hour + 9*60, Add: 2}
	for range 2 {
		in.CountDims(&linkforge.ClickDims{linkforge.DimSource: linkforge.SourceQR})
	}
	if _, err := j.Commit(t.Context(), []*Increment{in}, nil, nil, 0, nil); err != nil {
		t.Fatal(err)
	}
	check(j, 2)
	abandon(j)
	check(mustJournal(t, dir, WithSync(SyncWriteOnly)), 2)
}
