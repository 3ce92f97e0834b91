package buswire

import (
	"context"
	"sync"
	"time"
)

// Queue holds the events waiting to be sent. Put never blocks on the
// network and never fails the caller: an event is coalesced with the
// queued event of the same key, and past the bound new keys are dropped
// and counted (the bus tolerates loss by design).
type Queue struct {
	max    int
	fullAt int // queued bytes that fill a message
	m      *Metrics

	// mu owns closed (a Stop has begun: events are dropped) and the
	// queue.
	mu     sync.Mutex
	closed bool
	events []Event
	index  map[Key]int // position in events
	bytes  int
	wake   chan struct{} // capacity 1: something was queued
	full   chan struct{} // capacity 1: a message's worth is queued
}

// NewQueue returns a queue of at most maxPending keys that reports full
// once fullAt bytes of events are queued.
func NewQueue(maxPending, fullAt int, m *Metrics) *Queue {
	return &Queue{max: maxPending, fullAt: fullAt, m: m, index: make(map[Key]int),
		wake: make(chan struct{}, 1), full: make(chan struct{}, 1)}
}

// Put queues e, or drops it if encoding failed (err), the queue is closed
// or full.
func (q *Queue) Put(e Event, err error) {
	if err != nil { // cannot happen for these field types; never silently
		q.m.Dropped.WithLabelValues("encode").Inc()
		return
	}
	q.mu.Lock()
	if q.closed {
		q.mu.Unlock()
		q.m.Dropped.WithLabelValues("stopped").Inc()
		return
	}
	if i, ok := q.index[e.Key]; ok {
		q.bytes += len(e.Data) - len(q.events[i].Data)
		q.events[i] = e
	} else {
		if len(q.events) >= q.max {
			q.mu.Unlock()
			q.m.Dropped.WithLabelValues("queue_full").Inc()
			return
		}
		q.index[e.Key] = len(q.events)
		q.events = append(q.events, e)
		q.bytes += len(e.Data) + 1 // and its comma
	}
	full := q.bytes >= q.fullAt
	q.mu.Unlock()
	signal(q.wake)
	if full {
		signal(q.full)
	}
}

// Close makes every later Put a drop.
func (q *Queue) Close() {
	q.mu.Lock()
	q.closed = true
	q.mu.Unlock()
}

// Take empties the queue and returns what it held, in the order the keys
// were first queued.
func (q *Queue) Take() []Event {
	q.mu.Lock()
	defer q.mu.Unlock()
	events := q.events
	q.events = nil
	q.bytes = 0
	clear(q.index)
	select {
	case <-q.full: // about what is taken now
	default:
	}
	return events
}

func signal(c chan struct{}) {
	select {
	case c <- struct{}{}:
	default:
	}
}

// RunPublisher calls send with the queue's events one window after the
// first event queued, or as soon as a message's worth is queued, until stop
// is closed; then it sends what is left and returns. Idle, it waits on a
// channel and costs nothing.
func (q *Queue) RunPublisher(ctx context.Context, window time.Duration, stop <-chan struct{},
	send func(context.Context, []Event)) {
	flush := func() {
		if events := q.Take(); len(events) > 0 {
			send(ctx, events)
		}
	}
	t := time.NewTimer(time.Hour)
	t.Stop()
	for {
		select {
		case <-stop:
			flush()
			return
		case <-q.wake:
		}
		t.Reset(window)
		select {
		case <-stop:
			t.Stop()
			flush()
			return
		case <-t.C:
		case <-q.full:
			t.Stop()
		}
		flush()
	}
}
