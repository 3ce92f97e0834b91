// Package buswire is the part of a cluster bus (linkforge.Bus) that does
// not depend on how the bytes travel: the wire format of the events, the
// coalescing queue a publisher fills without ever blocking, the packing of
// queued events into messages, the decoding of a message into calls of a
// linkforge.BusHandler, and the bus metrics. The NATS bus (natsbus) is
// built on it, so that a node's events mean the same on either transport;
// docs/adr/004-scale-out.md says why each
// piece is as it is.
//
// The wire format is compact JSON, one envelope per message:
//
//	{"v":1,"node":"n1","inst":"K3QF7A2B","ev":[
//	  {"type":"clicks","tenant":1,"link":7,"slug":"abc","bucket":1764489660,"count":42,"human":40,"total":1234},
//	  {"type":"invalidate","slug":"abc"},
//	  {"type":"expired","tenant":1,"link":7,"slug":"abc","expires_at":"...","expired_at":"..."},
//	  {"type":"link","tenant":1,"link":7,"slug":"abc","op":"updated"},
//	  {"type":"invalidate","slug":"abc","host":"go.example.com"},
//	  {"type":"domain","slug":"go.example.com","host":"go.example.com"},
//	  {"type":"deliveries","slug":"webhook","due":1764489660}]}
//
// A count's human is how many of its clicks were people's; a node of an
// older release sends none, and the receiver then has the count with
// HumanKnown false (not zero human clicks), as it has a total the sender
// did not know.
//
// An invalidation on a tenant's domain carries its host (absent: the
// public host); an expiry and a link event carry the link's domain id
// (absent: the public domain). A domain event's slug is its host, so that
// older nodes skip it as an unknown type, not as a malformed event; a
// deliveries event's slug is "webhook" for the same reason. Its due is in
// unix seconds, rounded down: the receiver wakes at most a second early
// and reads the exact schedule from the store, and the queue holds one
// event per second however many deliveries a burst queues.
//
// It is the same as the PostgreSQL bus's payload.
package buswire

import (
	"crypto/rand"
	"encoding/json"
	"fmt"
	"time"

	"github.com/linkforge/linkforge"
)

// Version is the version of the envelope. A node ignores messages of
// another version, so that nodes of two releases can run side by side
// during a rolling upgrade (losing only live updates).
const Version = 1

// Event kinds on the wire.
const (
	KindClicks     = "clicks"
	KindInvalidate = "invalidate"
	KindExpired    = "expired"
	KindLink       = "link"
	KindDomain     = "domain"
	KindDeliveries = "deliveries"
)

// Key is what two queued events must share to be coalesced: the later
// replaces the earlier.
type Key struct {
	Kind   string
	Link   int64
	Bucket int64
	Slug   string
	Op     linkforge.LinkOp
	Domain int64
}

// Event is one encoded event, ready to be concatenated into a message.
type Event struct {
	Key    Key
	Tenant int64  // 0 for an invalidation, which names a slug only
	Data   []byte // the event's JSON
}

// wireEvent is one event in a message. Fields an event type does not use
// are left out.
type wireEvent struct {
	Type      string     `json:"type"`
	Tenant    int64      `json:"tenant,omitempty"`
	Link      int64      `json:"link,omitempty"`
	Slug      string     `json:"slug"`
	Bucket    int64      `json:"bucket,omitempty"` // unix seconds
	Count     int64      `json:"count,omitempty"`
	Human     *int64     `json:"human,omitempty"` // absent: a sender of an older release
	Total     *int64     `json:"total,omitempty"` // absent: the sender does not know it
	ExpiresAt *time.Time `json:"expires_at,omitempty"`
	ExpiredAt *time.Time `json:"expired_at,omitempty"`
	Op        string     `json:"op,omitempty"` // a link event's
	// Host is the domain of an invalidation or a domain event; absent:
	// the public host. Domain is the domain id of an expiry or a link
	// event.
	Host   string `json:"host,omitempty"`
	Domain int64  `json:"domain,omitempty"`
	// Due is when a deliveries event's deliveries are due, in unix
	// seconds.
	Due int64 `json:"due,omitempty"`
}

type envelope struct {
	V        int         `json:"v"`
	Node     string      `json:"node"`
	Instance string      `json:"inst"`
	Ev       []wireEvent `json:"ev"`
}

// Suffix closes every message.
var Suffix = []byte("]}")

// Clicks encodes a node's count of a bucket; a queued count of the same
// bucket is replaced (counts are absolute: the latest is the one).
func Clicks(c linkforge.BucketCount) (Event, error) {
	e := wireEvent{Type: KindClicks, Tenant: c.TenantID, Link: c.LinkID, Slug: c.Slug,
		Bucket: c.Bucket.Unix(), Count: c.Count}
	if c.HumanKnown {
		e.Human = &c.Human
	}
	if c.TotalKnown {
		e.Total = &c.Total
	}
	return encode(Key{Kind: KindClicks, Link: c.LinkID, Bucket: e.Bucket}, e)
}

// Invalidate encodes an invalidation of slug on the domain host; "" is
// the public host (the slug alone on the wire, as before domains).
func Invalidate(host, slug string) (Event, error) {
	if host == "" {
		return encode(Key{Kind: KindInvalidate, Slug: slug}, wireEvent{Type: KindInvalidate, Slug: slug})
	}
	return encode(Key{Kind: KindInvalidate, Slug: host + "/" + slug}, wireEvent{Type: KindInvalidate, Slug: slug, Host: host})
}

// Domain encodes a write of the domain host: the receivers reload their
// host tables.
func Domain(host string) (Event, error) {
	return encode(Key{Kind: KindDomain, Slug: host}, wireEvent{Type: KindDomain, Slug: host, Host: host})
}

// deliveriesSlug is the slug of every deliveries event: see the package
// comment.
const deliveriesSlug = "webhook"

// Deliveries encodes "webhook deliveries are due at due", rounded down to
// the second; queued events of the same second coalesce.
func Deliveries(due time.Time) (Event, error) {
	sec := due.Unix()
	return encode(Key{Kind: KindDeliveries, Bucket: sec}, wireEvent{Type: KindDeliveries, Slug: deliveriesSlug, Due: sec})
}

// Expired encodes the expiry of l.
func Expired(l linkforge.Link) (Event, error) {
	return encode(Key{Kind: KindExpired, Link: l.ID}, wireEvent{Type: KindExpired, Tenant: l.TenantID,
		Link: l.ID, Slug: l.Slug, ExpiresAt: linkforge.NormalizeTime(l.ExpiresAt), ExpiredAt: linkforge.NormalizeTime(l.ExpiredAt),
		Domain: l.DomainID})
}

// LinkWrite encodes a link write. Two events of the same link and write
// coalesce: the receiver reads the link as it is when the event arrives,
// so two updates show the same. The slug is part of the key: an import's
// events have no LinkID.
func LinkWrite(e linkforge.LinkEvent) (Event, error) {
	return encode(Key{Kind: KindLink, Link: e.LinkID, Slug: e.Slug, Op: e.Op, Domain: e.DomainID}, wireEvent{Type: KindLink,
		Tenant: e.TenantID, Link: e.LinkID, Slug: e.Slug, Op: string(e.Op), Domain: e.DomainID})
}

func encode(k Key, e wireEvent) (Event, error) {
	data, err := json.Marshal(e)
	if err != nil {
		return Event{}, fmt.Errorf("buswire: encode %s event: %w", e.Type, err)
	}
	return Event{Key: k, Tenant: e.Tenant, Data: data}, nil
}

// Identity is who sends: the node id, and a random id of the process
// (Instance) that tells two processes apart that wrongly share a node id.
type Identity struct {
	Node     string
	Instance string
	// Prefix opens every message this process sends.
	Prefix []byte
}

// NewIdentity returns node's identity with a fresh instance id.
func NewIdentity(node string) Identity {
	id := Identity{Node: node, Instance: rand.Text()[:8]}
	quoted, _ := json.Marshal(node) // a string always encodes
	id.Prefix = fmt.Appendf(nil, `{"v":%d,"node":%s,"inst":%q,"ev":[`, Version, quoted, id.Instance)
	return id
}

// Message is a packed message and the number of events it holds.
type Message struct {
	Data   []byte
	Events int
}

// Pack concatenates events into messages of at most limit bytes, each
// opened by prefix, in order. An event too large for any message is left
// out and reported to tooLarge.
func Pack(prefix []byte, events []Event, limit int, tooLarge func(Event)) []Message {
	var (
		msgs []Message
		cur  []byte
		n    int
	)
	for _, e := range events {
		if len(prefix)+len(e.Data)+len(Suffix) > limit {
			tooLarge(e)
			continue
		}
		if cur != nil && len(cur)+1+len(e.Data)+len(Suffix) > limit {
			msgs = append(msgs, Message{Data: append(cur, Suffix...), Events: n})
			cur, n = nil, 0
		}
		if cur == nil {
			cur = append(make([]byte, 0, min(limit, 64<<10)), prefix...)
		} else {
			cur = append(cur, ',')
		}
		cur = append(cur, e.Data...)
		n++
	}
	if cur != nil {
		msgs = append(msgs, Message{Data: append(cur, Suffix...), Events: n})
	}
	return msgs
}
