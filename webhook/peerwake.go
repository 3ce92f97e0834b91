package webhook

import (
	"time"

	"github.com/linkforge/linkforge"
)

// Announce returns what a node's store tells after each commit that added
// webhook deliveries: local (this node's scheduler, its Reschedule) at
// once, and the other nodes through bus, so that their schedulers wake
// too rather than at their next re-read of the store (30 s). Any node
// may claim a delivery, and the one whose write queued it may be at its
// concurrency cap for that webhook or tenant: a burst is then spread over
// the nodes at once. A nil bus (one node) tells local alone.
//
// What the other nodes hear calls their scheduler's Reschedule only (a
// linkforge.DeliveryBusHandler), never Announce again: one word per
// commit, no echo.
func Announce(local func(due time.Time), bus linkforge.DeliveryPublisher) func(due time.Time) {
	if bus == nil {
		return local
	}
	return func(due time.Time) {
		local(due)
		bus.PublishDeliveries(due)
	}
}
