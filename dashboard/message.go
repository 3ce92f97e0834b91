package dashboard

import (
	"encoding/json"
	"time"

	"github.com/linkforge/linkforge"
)

// Message types of the feed (operation liveFeed in web/openapi.json).
const (
	TypeClicks  = "clicks"
	TypeExpired = "expired"
	TypeLink    = "link"
)

// ClicksMessage is the feed's message for a live click count:
//
//	{"type":"clicks","link":"<slug>","bucket":"2026-11-30T08:01:00Z","count":42,"human":40,"total":1234}
//
// Count is the absolute count of the minute bucket as far as the sending node
// knows, Human the absolute count of its human clicks (count - human are
// automated; operation liveFeed). Human is absent while a node of an older
// release counts clicks of the bucket: a client then keeps the human count it
// has. Total is absent while the node cannot read the link's rollup total
// (its store is unreachable): a client then keeps the total it has rather
// than showing a wrong one.
type ClicksMessage struct {
	Type   string `json:"type"`
	Link   string `json:"link"`
	Bucket string `json:"bucket"`
	Count  int64  `json:"count"`
	Human  *int64 `json:"human,omitempty"`
	Total  *int64 `json:"total,omitempty"`
}

// ExpiredMessage is the feed's message for a link that has expired:
//
//	{"type":"expired","link":"<slug>","at":"2026-12-01T00:00:00Z"}
type ExpiredMessage struct {
	Type string `json:"type"`
	Link string `json:"link"`
	At   string `json:"at"`
}

// LinkMessage is the feed's message for a link written through the admin
// API, on any node:
//
//	{"type":"link","op":"created","link":{...}}
//
// Op is created, updated or deleted. For created and updated, Link is the
// link exactly as the admin API returns it (GET /api/v1/links/{slug}); for
// deleted, whose link is gone, only {"id":"7","slug":"abc"}: the id tells a
// deleted link from a new one that took its slug since.
type LinkMessage struct {
	Type string          `json:"type"`
	Op   string          `json:"op"`
	Link json.RawMessage `json:"link"`
}

func encodeClicks(d linkforge.BucketCount) ([]byte, error) {
	m := ClicksMessage{
		Type:   TypeClicks,
		Link:   d.Slug,
		Bucket: d.Bucket.UTC().Format(time.RFC3339),
		Count:  d.Count,
	}
	if d.HumanKnown {
		m.Human = &d.Human
	}
	if d.TotalKnown {
		m.Total = &d.Total
	}
	return json.Marshal(m)
}

// encodeExpired dates the event at the link's expires_at, the instant it
// started to answer 410; the alarm may have run later (ExpiredAt), or, for a
// link whose expires_at is unknown here, now.
func encodeExpired(l linkforge.Link, now time.Time) ([]byte, error) {
	at := now
	switch {
	case l.ExpiresAt != nil:
		at = *l.ExpiresAt
	case l.ExpiredAt != nil:
		at = *l.ExpiredAt
	}
	return json.Marshal(ExpiredMessage{Type: TypeExpired, Link: l.Slug, At: at.UTC().Format(time.RFC3339Nano)})
}

// encodeLink wraps the link's JSON, already rendered by the admin API's
// encoder (package web), into a link message. Marshal checks that link is
// one JSON value, so a caller's mistake cannot break the clients' parsers.
func encodeLink(op linkforge.LinkOp, link []byte) ([]byte, error) {
	return json.Marshal(LinkMessage{Type: TypeLink, Op: string(op), Link: link})
}
