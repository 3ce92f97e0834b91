package webhook_test

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/internal/bustest"
	"github.com/linkforge/linkforge/schedule"
	"github.com/linkforge/linkforge/store/postgres"
	"github.com/linkforge/linkforge/webhook"
)

// wakeHandler is a bus handler that hears only of deliveries: it wakes
// its node's scheduler, as the cluster feed does.
type wakeHandler struct {
	*bustest.Recorder
	wake func(time.Time)
}

func (h wakeHandler) PeerDeliveries(due time.Time) { h.wake(due) }

// TestDeliveryQueuedOnOneNodeIsSentByAnother: two nodes on one PostgreSQL
// and its bus, each allowed one attempt in flight per webhook, their
// schedulers re-reading the store once an hour, an attempt timing out
// after an hour (a transport without the guarded one's 10 s wait for an
// answer). The receiver holds every
// request. Two deliveries are queued through node A: A claims one, and
// is at its cap for the other. That the second arrives while the first
// is still held means the other node sent it, and the only thing that
// can have woken it within the hour is node A's word on the bus.
func TestDeliveryQueuedOnOneNodeIsSentByAnother(t *testing.T) {
	url := migratedPostgres(t)
	rcv, free := newHeldReceiver(t)
	regs := []*prometheus.Registry{prometheus.NewRegistry(), prometheus.NewRegistry()}
	var (
		stores []*postgres.DB
		nodes  []*node
	)
	for i, reg := range regs {
		db := openPostgres(t, url)
		stores = append(stores, db)
		n := startNode(t, db, schedule.Config{Owner: fmt.Sprintf("node-%d", i), Resolution: 5 * time.Millisecond,
			PollInterval: time.Hour}, webhook.Config{AllowPrivate: true, PerWebhook: 1, Timeout: time.Hour,
			Transport: http.DefaultTransport.(*http.Transport).Clone(), Registry: reg})
		nodes = append(nodes, n)
		bus, err := postgres.NewBus(db, postgres.BusConfig{Node: fmt.Sprintf("node-%d", i),
			Handler: wakeHandler{Recorder: bustest.NewRecorder(), wake: n.sched.Reschedule}})
		if err != nil {
			t.Fatal(err)
		}
		if err := bus.Start(t.Context()); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			if err := bus.Stop(context.Background()); err != nil {
				t.Errorf("bus Stop: %v", err)
			}
		})
		db.OnDeliveries(webhook.Announce(n.sched.Reschedule, bus))
	}
	// Last, so first at cleanup: a failed test must not leave the nodes'
	// stops waiting on held requests.
	t.Cleanup(free)
	tn := mustTenant(t, stores[0], "acme")
	wh := mustWebhook(t, stores[0], tn.ID, rcv, linkforge.EventLinkCreated)
	for i := range 2 {
		ev, err := linkforge.NewEvent(tn.ID, "webhook.test", map[string]int{"n": i}, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		if _, err := stores[0].EnqueueDelivery(t.Context(), tn.ID, wh.ID, ev, time.Now()); err != nil {
			t.Fatal(err)
		}
	}
	// A hang guard, not a latency bound: without the bus the second
	// delivery would wait an hour.
	rcv.waitFor(t, 20*time.Second, "both deliveries in flight at once", func(r []request) bool { return len(r) >= 2 })
	free()
	for _, n := range nodes {
		n.stop(t)
	}
	if a, b := delivered(t, regs[0]), delivered(t, regs[1]); a != 1 || b != 1 {
		t.Errorf("nodes delivered %v and %v, want 1 each", a, b)
	}
}

// newHeldReceiver returns a receiver that holds every request until free
// is called (free may be called more than once).
func newHeldReceiver(t *testing.T) (rcv *receiver, free func()) {
	release := make(chan struct{})
	var once sync.Once
	rcv = newReceiver(t, nil)
	inner := rcv.Config.Handler
	rcv.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		inner.ServeHTTP(&heldWriter{ResponseWriter: w, release: release}, r)
	})
	return rcv, func() { once.Do(func() { close(release) }) }
}

// heldWriter answers only once release is closed: the request stays in
// flight on its sender.
type heldWriter struct {
	http.ResponseWriter
	release <-chan struct{}
}

func (w *heldWriter) WriteHeader(code int) {
	<-w.release
	w.ResponseWriter.WriteHeader(code)
}

// TestReleasedDeliveryReachesAnotherNode: a delivery a node claimed past
// its cap and gave back must reach another node at once. Node B runs
// first and finds nothing; two deliveries are then queued with no word on
// the bus (as when that word reached B while A held them); node A starts,
// claims both in one claim, keeps one (one in flight per webhook) and
// gives the other back. Both in flight at once means B sent the second,
// and only A's word at the release can have told it within the hour.
func TestReleasedDeliveryReachesAnotherNode(t *testing.T) {
	url := migratedPostgres(t)
	rcv, free := newHeldReceiver(t)
	dcfg := func(reg prometheus.Registerer) webhook.Config {
		return webhook.Config{AllowPrivate: true, PerWebhook: 1, Timeout: time.Hour,
			Transport: http.DefaultTransport.(*http.Transport).Clone(), Registry: reg}
	}
	ecfg := func(owner string) schedule.Config {
		return schedule.Config{Owner: owner, Resolution: 5 * time.Millisecond, PollInterval: time.Hour}
	}
	regA, regB := prometheus.NewRegistry(), prometheus.NewRegistry()
	dbA, dbB := openPostgres(t, url), openPostgres(t, url)

	b := startNode(t, dbB, ecfg("node-b"), dcfg(regB))
	busB, err := postgres.NewBus(dbB, postgres.BusConfig{Node: "node-b",
		Handler: wakeHandler{Recorder: bustest.NewRecorder(), wake: b.sched.Reschedule}})
	if err != nil {
		t.Fatal(err)
	}
	busA, err := postgres.NewBus(dbA, postgres.BusConfig{Node: "node-a"})
	if err != nil {
		t.Fatal(err)
	}
	for _, bus := range []*postgres.Bus{busB, busA} {
		if err := bus.Start(t.Context()); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			if err := bus.Stop(context.Background()); err != nil {
				t.Errorf("bus Stop: %v", err)
			}
		})
	}
	t.Cleanup(free)

	tn := mustTenant(t, dbA, "acme")
	wh := mustWebhook(t, dbA, tn.ID, rcv, linkforge.EventLinkCreated)
	for i := range 2 {
		ev, err := linkforge.NewEvent(tn.ID, "webhook.test", map[string]int{"n": i}, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		if _, err := dbA.EnqueueDelivery(t.Context(), tn.ID, wh.ID, ev, time.Now()); err != nil {
			t.Fatal(err)
		}
	}
	cfgA := dcfg(regA)
	cfgA.Released = busA.PublishDeliveries
	a := startNode(t, dbA, ecfg("node-a"), cfgA)

	// A hang guard, not a latency bound: without the word at the release
	// the second delivery would wait an hour.
	rcv.waitFor(t, 20*time.Second, "both deliveries in flight at once", func(r []request) bool { return len(r) >= 2 })
	free()
	a.stop(t)
	b.stop(t)
	if da, db := delivered(t, regA), delivered(t, regB); da != 1 || db != 1 {
		t.Errorf("nodes delivered %v and %v, want 1 each", da, db)
	}
}
