package web

import "encoding/json"

// deliveryLink returns the slug of the link a delivery's event is about,
// read from the event's body: data.slug of the link.* events (the link),
// data.link of link.clicks, link.limit_reached and alarm.dead; "" when the
// body names none (a deleted link's dead alarm) or cannot be read. The
// delivery log names the link with it, so that a reader need not open each
// body.
func deliveryLink(body json.RawMessage) string {
	var ev struct {
		Data struct {
			Slug json.RawMessage `json:"slug"`
			Link json.RawMessage `json:"link"`
		} `json:"data"`
	}
	if json.Unmarshal(body, &ev) != nil {
		return ""
	}
	for _, raw := range []json.RawMessage{ev.Data.Slug, ev.Data.Link} {
		var s string
		if len(raw) > 0 && json.Unmarshal(raw, &s) == nil && s != "" {
			return s
		}
	}
	return ""
}
