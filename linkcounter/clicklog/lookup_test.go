package clicklog

import (
	"bytes"
	"strings"
	"testing"
)

// TestFrameIndexesEveryValue: the encoder's memos (of a value's memory, of
// each dimension's last value) give each dimension row its own value
// back, whether a value repeats in its dimension, moves to another, or
// alternates, in the same memory or in a copy; and a reused encoder
// writes the bytes a fresh one writes.
func TestFrameIndexesEveryValue(t *testing.T) {
	var r logRecord
	values := []string{"a", "a", "b", "a", "c", "c", "b", "", "a", strings.Clone("b"), strings.Clone("ab")[:1]}
	for i, v := range values {
		r.dims = append(r.dims, recDim{link: int64(i%3 + 1), hour: 3600, dim: cellDim(i % 2), value: v, v: int64(i + 1)})
		r.dimMarks = append(r.dimMarks, recDim{link: 1, hour: 7200, dim: cellDim(i%3) | automatedBit, value: values[len(values)-1-i], v: int64(i)})
	}
	var e encoder
	for range 2 { // the second frame starts from the first one's memo
		payload, _, ok := nextFrame(e.frame(&r))
		if !ok {
			t.Fatal("the encoded frame does not read back")
		}
		var got logRecord
		var d decoder
		if err := d.decode(payload, &got); err != nil {
			t.Fatal(err)
		}
		for i := range r.dims {
			if got.dims[i] != r.dims[i] {
				t.Fatalf("dimension row %d: %+v, want %+v", i, got.dims[i], r.dims[i])
			}
			if got.dimMarks[i] != r.dimMarks[i] {
				t.Fatalf("dimension mark %d: %+v, want %+v", i, got.dimMarks[i], r.dimMarks[i])
			}
		}
		var fresh encoder
		if !bytes.Equal(fresh.frame(&r), e.frame(&r)) {
			t.Fatal("a reused encoder writes other bytes than a fresh one")
		}
		r.dims[0].value, r.dimMarks[0].value = "z", "a"
	}
}
