package visitor

import (
	"fmt"

	"github.com/axiomhq/hyperloglog"
)

// Sketch estimates how many distinct visitor hashes it was given: a
// HyperLogLog of precision 14 (16,384 registers, a standard error of about
// 0.8 %), sparse while it holds few hashes, so that a link with a handful of
// visitors costs a few hundred bytes rather than the 16 KiB of the dense
// form. Sketches merge exactly: the union of two is the sketch of the union
// of their hashes. The hashes are Hash's, already uniform, so they go in as
// they are; a sketch holds register values only, from which no hash, let
// alone an address, can be read back.
type Sketch struct{ s *hyperloglog.Sketch }

// NewSketch returns an empty sketch.
func NewSketch() *Sketch { return &Sketch{s: hyperloglog.New14()} }

// Insert adds one visitor hash. Adding a hash twice changes nothing.
func (k *Sketch) Insert(hash uint64) { k.s.InsertHash(hash) }

// Merge adds every hash of o to k.
func (k *Sketch) Merge(o *Sketch) error {
	if err := k.s.Merge(o.s); err != nil {
		return fmt.Errorf("visitor: merge sketch: %w", err)
	}
	return nil
}

// Estimate returns the estimated number of distinct hashes inserted.
func (k *Sketch) Estimate() int64 { return int64(k.s.Estimate()) } //nolint:gosec // G115: an estimate of distinct 64-bit hashes stays far below 2^63

// MarshalBinary encodes k as stored (the library's format).
func (k *Sketch) MarshalBinary() ([]byte, error) {
	b, err := k.s.MarshalBinary()
	if err != nil {
		return nil, fmt.Errorf("visitor: encode sketch: %w", err)
	}
	return b, nil
}

// ParseSketch decodes a sketch MarshalBinary encoded.
func ParseSketch(b []byte) (*Sketch, error) {
	s := hyperloglog.New14()
	if err := s.UnmarshalBinary(b); err != nil {
		return nil, fmt.Errorf("visitor: decode sketch: %w", err)
	}
	return &Sketch{s: s}, nil
}

// UnionEstimate returns the estimated number of distinct visitors of the
// union of the encoded sketches (zero for none).
func UnionEstimate(blobs [][]byte) (int64, error) {
	u := NewSketch()
	for _, b := range blobs {
		s, err := ParseSketch(b)
		if err != nil {
			return 0, err
		}
		if err := u.Merge(s); err != nil {
			return 0, err
		}
	}
	return u.Estimate(), nil
}
