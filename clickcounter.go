package linkforge

import (
	"context"
	"time"
)

// ClickCounter counts redirects. The web server calls Record for every
// counted GET before it answers, so a 302 leaves only once its click is
// durable (the output gate). The linkcounter package implements it.
type ClickCounter interface {
	// Record counts one click of l at the given time, with its dimensions
	// (nil, or an empty entry: the dimension's Default). It returns an error
	// with code EGone, and counts nothing, when the link's MaxClicks is
	// reached. It does not keep dims once it returns (the caller reuses
	// it); the value strings may be kept, but not for longer than the
	// click's commit, so a holder need not clone them.
	Record(ctx context.Context, l *Link, at time.Time, dims *ClickDims) error
}

// VisitCounter is a ClickCounter that also counts unique visitors: the
// web server calls RecordVisit instead of Record for a click that has a
// visitor hash (package visitor's daily keyed hash; a private click has
// none), with the same contract as Record.
type VisitCounter interface {
	RecordVisit(ctx context.Context, l *Link, at time.Time, dims *ClickDims, visit uint64) error
}
