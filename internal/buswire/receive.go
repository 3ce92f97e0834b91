package buswire

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"time"

	"github.com/linkforge/linkforge"
)

// LogEvery spaces out the logs of a repeated failure (an outage).
const LogEvery = 10 * time.Second

// Receiver decodes the messages of the other nodes and hands their events
// to a handler. It is owned by one goroutine, the bus's receiving one, so
// that the handler's methods are called from one goroutine, in order.
type Receiver struct {
	Self    Identity
	Handler linkforge.BusHandler
	Metrics *Metrics
	Log     *slog.Logger
	shared  LogLimiter
}

// Deliver hands the events of one message to the handler. A message that
// cannot be decoded is logged and dropped: one bad message must not stop
// the others. A message of this process is ignored without decoding.
func (r *Receiver) Deliver(msg []byte) {
	if bytes.HasPrefix(msg, r.Self.Prefix) {
		r.Metrics.Received.WithLabelValues("self").Inc()
		return
	}
	r.Metrics.Received.WithLabelValues("peer").Inc()
	r.Metrics.ReceivedBytes.Add(float64(len(msg)))
	var env envelope
	if err := json.Unmarshal(msg, &env); err != nil {
		r.Metrics.Dropped.WithLabelValues("malformed").Inc()
		r.Log.Warn("bus: malformed message dropped", "bytes", len(msg), "error", err)
		return
	}
	if env.V != Version {
		r.Metrics.Dropped.WithLabelValues("version").Add(float64(len(env.Ev)))
		r.Log.Debug("bus: message of another version ignored", "version", env.V, "node", env.Node)
		return
	}
	if env.Node == r.Self.Node {
		// Another process runs with this node's id: both write the same
		// rollup rows, absolute counts overwriting each other, so clicks
		// are lost. Its events are still delivered; the error is for the
		// operator.
		r.Metrics.SharedNodeID.Inc()
		if n, ok := r.shared.Allow(time.Now()); ok {
			r.Log.Error("bus: another process runs with this node's id; their rollup rows overwrite each other",
				"node_id", env.Node, "instance", r.Self.Instance, "other_instance", env.Instance, "notifications_since_last_log", n)
		}
	}
	for _, e := range env.Ev {
		if r.dispatch(env.Node, e) {
			r.Metrics.ReceivedEvents.Inc()
		}
	}
}

// dispatch hands one event to the handler and reports whether it was
// valid.
func (r *Receiver) dispatch(node string, e wireEvent) bool {
	if e.Slug == "" {
		r.Metrics.Dropped.WithLabelValues("malformed").Inc()
		return false
	}
	switch e.Type {
	case KindClicks:
		c := linkforge.BucketCount{TenantID: e.Tenant, LinkID: e.Link, Slug: e.Slug,
			Bucket: time.Unix(e.Bucket, 0).UTC(), Count: e.Count}
		if e.Human != nil {
			c.Human, c.HumanKnown = *e.Human, true
		}
		if e.Total != nil {
			c.Total, c.TotalKnown = *e.Total, true
		}
		r.Handler.PeerClicks(node, c)
	case KindInvalidate:
		r.Handler.PeerInvalidate(e.Host, e.Slug)
	case KindDomain:
		r.Handler.PeerDomain(e.Host)
	case KindDeliveries:
		if e.Due <= 0 {
			r.Metrics.Dropped.WithLabelValues("malformed").Inc()
			return false
		}
		if dh, ok := r.Handler.(linkforge.DeliveryBusHandler); ok {
			dh.PeerDeliveries(time.Unix(e.Due, 0).UTC())
		}
	case KindExpired:
		r.Handler.PeerExpired(linkforge.Link{ID: e.Link, TenantID: e.Tenant, Slug: e.Slug,
			ExpiresAt: linkforge.NormalizeTime(e.ExpiresAt), ExpiredAt: linkforge.NormalizeTime(e.ExpiredAt), DomainID: e.Domain})
	case KindLink:
		op := linkforge.LinkOp(e.Op)
		if !op.Valid() || e.Tenant == 0 {
			r.Metrics.Dropped.WithLabelValues("malformed").Inc()
			return false
		}
		r.Handler.PeerLink(linkforge.LinkEvent{Op: op, TenantID: e.Tenant, LinkID: e.Link, Slug: e.Slug, DomainID: e.Domain})
	default:
		r.Metrics.Dropped.WithLabelValues("unknown_type").Inc()
		return false
	}
	return true
}

// LogLimiter lets a repeated failure be logged once per LogEvery, with the
// number of failures not logged. It is owned by one goroutine.
type LogLimiter struct {
	last       time.Time
	suppressed int
}

// Allow reports whether to log now, and how many were not logged since the
// last one.
func (l *LogLimiter) Allow(now time.Time) (suppressed int, ok bool) {
	if !l.last.IsZero() && now.Sub(l.last) < LogEvery {
		l.suppressed++
		return 0, false
	}
	n := l.suppressed
	l.last, l.suppressed = now, 0
	return n, true
}
