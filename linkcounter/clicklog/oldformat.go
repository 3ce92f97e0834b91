package clicklog

import "github.com/linkforge/linkforge"

// Frames of versions 1 to 3 counted 23 cells per click: the 8 public
// dimensions over all traffic (0 to 7), traffic_minute (8: the minute of
// the hour "00" to "59" of an automated click, "human" for a person's),
// and the traffic shadows (9 + 2d "human:<d>", 10 + 2d "automated:<d>"
// for d before traffic), which counted the other traffic's clicks under a
// placeholder. Migration 00029 made the stored rows of the shadows and of
// traffic the (dimension, traffic) rows, with the same counts: the same
// cells, converted here, line up with them, marks included.
const (
	oldNumDims           = 23
	oldDimTraffic        = 7
	oldDimTrafficMinute  = 8
	oldDimShadows        = 9
	oldPlaceholderHuman  = "(HUMAN)"
	oldPlaceholderRobots = "(AUTOMATED)"
	// v4AutomatedBit is the automated bit of version 4's cell dims.
	v4AutomatedBit = 8
)

// withSource gives a record of version 4 or before the source cells its
// clicks had no value for: a click of then came by its link (the
// dimension's default), so each traffic cell's increment or mark is the
// same of its traffic's "link" cell, placed after it as a click of
// version 5 lists it. Migration 00051 gave the stored rows the same
// source rows, so the marks line up with them.
func (r *logRecord) withSource() {
	r.dims = addSource(r.dims)
	r.dimMarks = addSource(r.dimMarks)
}

func addSource(list []recDim) []recDim {
	n := 0
	for _, d := range list {
		if d.dim.dim() == linkforge.DimTraffic {
			n++
		}
	}
	if n == 0 {
		return list
	}
	out := make([]recDim, 0, len(list)+n)
	for _, d := range list {
		out = append(out, d)
		if d.dim.dim() == linkforge.DimTraffic {
			d.dim = cellOf(linkforge.DimSource, d.dim.automated())
			d.value = linkforge.SourceLink
			out = append(out, d)
		}
	}
	return out
}

// fromV3 converts a record decoded from a version 1 to 3 frame to the
// cells of version 4 (in version 5's encoding; withSource follows): a shadow's cell becomes its dimension's cell under
// its traffic (placeholders dropped), a traffic cell its value's traffic's
// cell, and a traffic_minute cell of an automated minute that minute's
// automated part (an increment of no clicks, appended after the record's
// increments: apply adds it to the minute they made). The all-traffic
// cells of the other dimensions go: the two traffics' cells sum to them.
// traffic_minute's marks go too: a minute's mark covers its automated
// part, and the old flush wrote both from one read.
//
// Version 1 records, and the SQLite journal of the releases before it,
// predate traffic: every click in them is human, and its all-traffic cells
// are its human cells (preTraffic).
func (r *logRecord) fromV3(preTraffic bool) {
	r.dims = convertV3(r.dims, &r.incs, preTraffic)
	r.dimMarks = convertV3(r.dimMarks, nil, preTraffic)
}

func convertV3(list []recDim, incs *[]recRow, preTraffic bool) []recDim {
	out := list[:0]
	for _, d := range list {
		raw := uint8(d.dim)
		switch {
		case raw == oldDimTraffic:
			d.dim = cellOf(linkforge.DimTraffic, d.value == linkforge.TrafficAutomated)
		case raw == oldDimTrafficMinute:
			if m, ok := minuteOfHour(d.value); ok && incs != nil {
				*incs = append(*incs, recRow{link: d.link, at: d.hour + 60*m, a: d.v})
			}
			continue
		case preTraffic:
			if raw > oldDimTraffic {
				continue
			}
			d.dim = cellOf(linkforge.Dimension(raw), false)
		case raw >= oldDimShadows:
			automated := (raw-oldDimShadows)%2 == 1
			if d.value == oldPlaceholderHuman || d.value == oldPlaceholderRobots {
				continue
			}
			d.dim = cellOf(linkforge.Dimension((raw-oldDimShadows)/2), automated)
		default:
			continue
		}
		out = append(out, d)
	}
	return out
}

// minuteOfHour parses an old traffic_minute value, "00" to "59".
func minuteOfHour(v string) (int64, bool) {
	if len(v) != 2 || v[0] < '0' || v[0] > '5' || v[1] < '0' || v[1] > '9' {
		return 0, false
	}
	return int64(v[0]-'0')*10 + int64(v[1]-'0'), true
}
