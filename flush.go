package linkforge

import (
	"fmt"
	"time"
)

// CheckFlush reports whether a flush (RollupStore.UpsertClicks) has
// anything to write, and refuses one that a caller bug made, before a store
// writes any of it: an empty node id, a bucket that is not the start of a
// minute, an hour that is not the start of an hour, an unknown dimension,
// an empty value, a negative count or an automated part larger than its count. An empty flush is no error, whatever
// its node id.
func CheckFlush(nodeID string, rows []RollupRow, dims []DimRow) (bool, error) {
	if len(rows) == 0 && len(dims) == 0 {
		return false, nil
	}
	if nodeID == "" {
		return false, InvalidField("node_id", "must not be empty")
	}
	for _, r := range rows {
		if !r.Bucket.Equal(r.Bucket.Truncate(time.Minute)) {
			return false, InvalidField("bucket", fmt.Sprintf("%s is not the start of a minute", r.Bucket.UTC().Format(time.RFC3339Nano)))
		}
		if r.Count < 0 {
			return false, InvalidField("count", fmt.Sprintf("negative count %d", r.Count))
		}
		if r.Automated < 0 || r.Automated > r.Count {
			return false, InvalidField("automated", fmt.Sprintf("automated %d of count %d", r.Automated, r.Count))
		}
	}
	for _, d := range dims {
		if !d.Hour.Equal(d.Hour.Truncate(time.Hour)) {
			return false, InvalidField("hour", fmt.Sprintf("%s is not the start of an hour", d.Hour.UTC().Format(time.RFC3339Nano)))
		}
		if !d.Dim.Public() {
			return false, InvalidField("dimension", fmt.Sprintf("unknown dimension %d", d.Dim))
		}
		if d.Dim == DimTraffic && d.Automated != (d.Value == TrafficAutomated) {
			return false, InvalidField("automated", fmt.Sprintf("traffic row %q under automated=%t", d.Value, d.Automated))
		}
		if d.Value == "" {
			return false, InvalidField("value", "must not be empty")
		}
		if d.Count < 0 {
			return false, InvalidField("count", fmt.Sprintf("negative count %d", d.Count))
		}
	}
	return true, nil
}
