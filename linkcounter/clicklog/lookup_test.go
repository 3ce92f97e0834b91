package clicklog

import (
	"testing"
)

// TestFrameIndexesEveryValue: the encoder's per-dimension memo of the last
// value gives each dimension row its own value back, whether a value
// repeats in its dimension, moves to another, or alternates.
func TestFrameIndexesEveryValue(t *testing.T) {
	var r logRecord
	values := []string{"a", "a", "b", "a", "c", "c", "b", "", "a"}
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
		r.dims[0].value, r.dimMarks[0].value = "z", "a"
	}
}
