package natsbus

import (
	"context"
	"fmt"
	"time"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/internal/buswire"
)

// Stop sends the queued events, closes the subscriptions and the
// connection, and waits for the bus's goroutines. If ctx ends first, the
// send under way is cut short (its events are dropped). It is safe to call
// twice and works if Start was never called; either way, events published
// afterwards are dropped.
func (b *Bus) Stop(ctx context.Context) error {
	b.queue.Close()
	return b.life.Stop(ctx, func() error { return b.stop(ctx) })
}

func (b *Bus) stop(ctx context.Context) error {
	close(b.stopPub)
	var err error
	select {
	case <-b.pubDone:
	case <-ctx.Done():
		err = fmt.Errorf("natsbus: stop: queued events dropped: %w", ctx.Err())
	}
	if b.cancelRcv != nil {
		b.cancelRcv()
	}
	b.rcv.Wait()
	// What the publisher handed the client is on its way once flushed.
	fctx, cancel := context.WithTimeout(ctx, ioTimeout)
	defer cancel()
	if ferr := b.nc.FlushWithContext(fctx); ferr != nil && err == nil && b.nc.IsConnected() {
		err = fmt.Errorf("natsbus: stop: flush: %w", ferr)
	}
	b.closing.Store(true)
	b.nc.Close() // cuts a publish still under way, which then returns
	<-b.pubDone
	return err
}

// Healthy reports whether the bus has heard from the server within the
// health window (a message, or the answer to its liveness flush): whether
// the other nodes' invalidations can be trusted to reach this node. It is
// unhealthy at once when the connection breaks, and once the window passes
// when it dies silently; the link cache then revalidates its entries
// within a second (web.PeerHealth). A bus without a handler subscribes to
// nothing and is never healthy. It does not allocate.
func (b *Bus) Healthy() bool {
	t := b.heardAt.Load()
	return t != 0 && time.Now().UnixNano()-t < int64(b.cfg.HealthWindow)
}

func (b *Bus) heard() { b.heardAt.Store(time.Now().UnixNano()) }

// PublishClicks queues this node's count of a bucket.
func (b *Bus) PublishClicks(c linkforge.BucketCount) { b.queue.Put(buswire.Clicks(c)) }

// PublishInvalidate queues an invalidation of slug on the domain host
// ("": the public host).
func (b *Bus) PublishInvalidate(host, slug string) { b.queue.Put(buswire.Invalidate(host, slug)) }

// PublishDomain queues a write of the domain host: the other nodes reload
// their host tables.
func (b *Bus) PublishDomain(host string) { b.queue.Put(buswire.Domain(host)) }

// PublishDeliveries queues "webhook deliveries are due at due" for the
// other nodes' schedulers; the events of one second coalesce.
func (b *Bus) PublishDeliveries(due time.Time) { b.queue.Put(buswire.Deliveries(due)) }

// PublishExpired queues the expiry of l.
func (b *Bus) PublishExpired(l linkforge.Link) { b.queue.Put(buswire.Expired(l)) }

// PublishLink queues a link write.
func (b *Bus) PublishLink(e linkforge.LinkEvent) { b.queue.Put(buswire.LinkWrite(e)) }

// send packs a window's events into messages, subject by subject in the
// order each subject first appears, and hands them to the client, which
// writes them from its own buffer. A message the client refuses (the
// connection is down: there is no reconnect buffer) drops its events:
// they are live updates and invalidations whose loss the receivers
// tolerate, and after an outage the receivers resync anyway.
func (b *Bus) send(_ context.Context, events []buswire.Event) {
	var (
		order  []string
		groups = make(map[string][]buswire.Event)
	)
	for _, e := range events {
		s := b.subjectOf(e)
		if _, ok := groups[s]; !ok {
			order = append(order, s)
		}
		groups[s] = append(groups[s], e)
	}
	tooLarge := func(e buswire.Event) {
		b.m.Dropped.WithLabelValues("too_large").Inc()
		b.log.Error("bus: event larger than a message; dropped", "type", e.Key.Kind, "bytes", len(e.Data))
	}
	failed, dropped := 0, 0
	var lastErr error
	for _, subj := range order {
		for _, msg := range buswire.Pack(b.self.Prefix, groups[subj], b.cfg.MaxMessage, tooLarge) {
			if err := b.nc.Publish(subj, msg.Data); err != nil {
				failed++
				dropped += msg.Events
				lastErr = err
				continue
			}
			b.m.Published.Inc()
			b.m.PublishedBytes.Add(float64(len(msg.Data)))
			b.m.PublishedEvents.Add(float64(msg.Events))
		}
	}
	if failed > 0 {
		b.m.PublishFailures.Add(float64(failed))
		b.m.Dropped.WithLabelValues("publish_failed").Add(float64(dropped))
		if n, ok := b.publishLog.Allow(time.Now()); ok {
			b.log.Warn("bus: publish failed; events dropped", "events", dropped, "messages", failed,
				"failures_since_last_log", n, "error", lastErr)
		}
	}
}

// runReceiver hands the messages to the handler, and the resyncs the
// connection's callbacks ask for, on this one goroutine.
func (b *Bus) runReceiver(ctx context.Context) {
	defer b.rcv.Done()
	for {
		select {
		case <-ctx.Done():
			return
		case <-b.resync:
			b.cfg.Handler.Resync()
		case m := <-b.msgs:
			b.heard()
			b.receive.Deliver(m.Data)
		}
	}
}

// runHealth asks the server for a round trip when nothing was heard for a
// ping interval: its answer is what keeps a quiet bus healthy, and its
// absence what makes a silently dead one unhealthy.
func (b *Bus) runHealth(ctx context.Context) {
	defer b.rcv.Done()
	t := time.NewTicker(b.cfg.PingInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		last := b.heardAt.Load()
		if last == 0 || time.Since(time.Unix(0, last)) < b.cfg.PingInterval {
			continue // down (the client reconnects), or heard lately
		}
		fctx, cancel := context.WithTimeout(ctx, b.cfg.HealthWindow)
		err := b.nc.FlushWithContext(fctx)
		cancel()
		if err == nil && b.nc.IsConnected() {
			b.heard()
		}
	}
}
