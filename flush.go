package linkforge

import (
	"fmt"
	"time"
)

// CheckFlush refuses a flush (RollupStore.UpsertClicks) that a caller bug
// made, before a store writes any of it: an empty node id, a bucket that
// is not the start of a minute, an hour that is not the start of an hour,
// an unknown dimension, an empty value or a negative count.
func CheckFlush(nodeID string, rows []RollupRow, dims []DimRow) error {
	if nodeID == "" {
		return InvalidField("node_id", "must not be empty")
	}
	for _, r := range rows {
		if !r.Bucket.Equal(r.Bucket.Truncate(time.Minute)) {
			return InvalidField("bucket", fmt.Sprintf("%s is not the start of a minute", r.Bucket.UTC().Format(time.RFC3339Nano)))
		}
		if r.Count < 0 {
			return InvalidField("count", fmt.Sprintf("negative count %d", r.Count))
		}
	}
	for _, d := range dims {
		if !d.Hour.Equal(d.Hour.Truncate(time.Hour)) {
			return InvalidField("hour", fmt.Sprintf("%s is not the start of an hour", d.Hour.UTC().Format(time.RFC3339Nano)))
		}
		if d.Dim >= NumDimensions {
			return InvalidField("dimension", fmt.Sprintf("unknown dimension %d", d.Dim))
		}
		if d.Value == "" {
			return InvalidField("value", "must not be empty")
		}
		if d.Count < 0 {
			return InvalidField("count", fmt.Sprintf("negative count %d", d.Count))
		}
	}
	return nil
}
