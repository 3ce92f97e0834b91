package web

import "testing"

// TestDeliveryLink: the delivery log's link is the slug the event's body
// names, whichever event it is, and none for a body that names none.
func TestDeliveryLink(t *testing.T) {
	for _, c := range []struct{ body, want string }{
		{`{"id":"evt_1","type":"link.created","data":{"slug":"spring","url":"https://example.com/"}}`, "spring"},
		{`{"id":"evt_2","type":"link.clicks","data":{"link":"spring","buckets":[],"total":3}}`, "spring"},
		{`{"id":"evt_3","type":"link.limit_reached","data":{"link":"capped","max_clicks":3,"total":3}}`, "capped"},
		{`{"id":"evt_4","type":"alarm.dead","data":{"alarm_id":7,"alarm":"link_expiry","link":"flash","attempts":7}}`, "flash"},
		{`{"id":"evt_5","type":"alarm.dead","data":{"alarm_id":8,"alarm":"link_expiry","link":null,"attempts":7}}`, ""},
		{`{"id":"evt_6","type":"link.updated","data":{"slug":{"not":"a string"}}}`, ""},
		{`not json`, ""},
		{``, ""},
	} {
		if got := deliveryLink([]byte(c.body)); got != c.want {
			t.Errorf("deliveryLink(%s) = %q, want %q", c.body, got, c.want)
		}
	}
}
