package bustest

import (
	"fmt"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/linkforge/linkforge"
)

// DeliveryRecorder is a Recorder that hears of the webhook deliveries
// other nodes queued (linkforge.DeliveryBusHandler).
type DeliveryRecorder struct {
	*Recorder
	Due []time.Time
}

// NewDeliveryRecorder returns an empty DeliveryRecorder.
func NewDeliveryRecorder() *DeliveryRecorder { return &DeliveryRecorder{Recorder: NewRecorder()} }

// PeerDeliveries records due.
func (r *DeliveryRecorder) PeerDeliveries(due time.Time) {
	// Counted among Invalid too, so that MustWaitEvents counts it.
	r.record(func() { r.Due = append(r.Due, due); r.Invalid = append(r.Invalid, "") })
}

// testCarriesDeliveries: deliveries queued on one node reach the others'
// schedulers with their due time rounded down to the second, one event
// per second however many were queued in it (queued before Start, so
// that the batching is deterministic); a handler that does not hear of
// deliveries gets nothing of them, and both count the event as received.
func testCarriesDeliveries(t *testing.T, tr Transport) {
	recB := NewDeliveryRecorder()
	b := tr.NewNode(t, NodeConfig{Node: "node-b", Handler: recB})
	StartNode(t, b)
	recB.MustWaitResync(t)
	regC := prometheus.NewRegistry()
	_, recC := listening(t, tr, NodeConfig{Node: "node-c", Registerer: regC}) // an older handler

	regA := prometheus.NewRegistry()
	node := tr.NewNode(t, NodeConfig{Node: "node-a", Registerer: regA})
	a, ok := node.(linkforge.DeliveryPublisher)
	if !ok {
		t.Fatalf("%T does not publish webhook deliveries (linkforge.DeliveryPublisher)", node)
	}
	second := time.Date(2026, 12, 1, 9, 30, 0, 0, time.UTC)
	for _, ms := range []int{100, 500, 999} { // one second: one event
		a.PublishDeliveries(second.Add(time.Duration(ms) * time.Millisecond))
	}
	a.PublishDeliveries(second.Add(1200 * time.Millisecond))
	StartNode(t, node)
	// The last event proves nothing more was on its way before it.
	node.PublishInvalidate("", "last")
	recB.MustWaitEvents(t, 3)
	recC.MustWaitEvents(t, 1)
	// Stopped before its counter is read: a publisher counts a send once
	// it returns, which may be after the receivers have the events.
	if err := node.Stop(t.Context()); err != nil {
		t.Fatal(err)
	}

	recB.Lock()
	same(t, "due times", fmt.Sprint(recB.Due), fmt.Sprint([]time.Time{second, second.Add(time.Second)}))
	recB.Unlock()
	recC.Lock()
	same(t, "older handler's events", recC.Invalid, []string{"last"})
	recC.Unlock()
	if n := Metric(t, regA, "linkforge_bus_events_published_total"); n != 3 {
		t.Errorf("events published = %v, want 3", n)
	}
	if d := Metric(t, regC, "linkforge_bus_events_dropped_total", "reason", "unknown_type"); d != 0 {
		t.Errorf("an older handler dropped %v deliveries events as unknown, want 0: the bus knows the kind", d)
	}
}
