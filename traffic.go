package linkforge

// AddTraffic divides st's counts by traffic: automatedTotal is the
// automated part of Total, automated that of each bucket, by its start in
// unix seconds. A store reads both in the snapshot it read st from, from
// the traffic dimensions' rows (DimTraffic for all time, DimTrafficMinute
// for buckets), and the rest of each count is human: clicks counted before
// classification existed count as human, as in DimTraffic's default.
func AddTraffic(st *Stats, automatedTotal int64, automated map[int64]int64) {
	st.Automated = min(automatedTotal, st.Total)
	st.Human = st.Total - st.Automated
	for i := range st.Buckets {
		b := &st.Buckets[i]
		b.Automated = min(automated[b.Start.Unix()], b.Count)
		b.Human = b.Count - b.Automated
	}
}

// CheckTraffic answers EInvalid unless traffic is "" (both),
// TrafficHuman or TrafficAutomated: the traffic= of a query.
func CheckTraffic(traffic string) error {
	if _, _, ok := DimTraffic.TrafficView(traffic); !ok {
		return InvalidField("traffic", "must be human or automated")
	}
	return nil
}
