package linkforge

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// testShortBase is a public URL with a port and a path: a public-host
// link's short_url keeps both, a tenant domain's takes only the scheme.
var testShortBase = ShortBase{URL: "https://lf.test:8443/base", Host: "lf.test", Scheme: "https"}

// TestShortBaseAddress: the addresses of links on the public host and on a
// tenant's domain, and what a store not told its public URL says.
func TestShortBaseAddress(t *testing.T) {
	for _, c := range []struct {
		base       ShortBase
		id         int64
		host, want string
	}{
		{testShortBase, PublicDomainID, "", "lf.test https://lf.test:8443/base/s"},
		{testShortBase, 5, "go.acme.com", "go.acme.com https://go.acme.com/s"},
		{ShortBase{}, PublicDomainID, "", " "},
		{ShortBase{}, 5, "go.acme.com", "go.acme.com "},
	} {
		a := c.base.Address(c.id, c.host, "s")
		if got := a.Domain + " " + a.ShortURL; got != c.want {
			t.Errorf("%+v.Address(%d, %q) = %q, want %q", c.base, c.id, c.host, got, c.want)
		}
	}
}

func TestAlarmDeadEvents(t *testing.T) {
	at := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	failures := []AlarmFailure{
		{Lease: AlarmLease{AlarmID: 7}, At: at, Error: "first", Dead: true},
		{Lease: AlarmLease{AlarmID: 8}, At: at.Add(time.Second), Error: "retry me", NextDue: at.Add(time.Minute)},
	}
	changed := []FailedAlarm{
		{ID: 7, TenantID: 3, State: AlarmDead, Attempts: 7, Slug: "doomed", DomainID: 5, Host: "go.acme.com"},
		{ID: 8, TenantID: 3, State: AlarmRetrying, Attempts: 2, Slug: "later"},
	}
	evs, err := AlarmDeadEvents(changed, failures, testShortBase)
	if err != nil || len(evs) != 1 {
		t.Fatalf("AlarmDeadEvents: %d events, %v; want 1", len(evs), err)
	}
	var body struct {
		Type      string          `json:"type"`
		CreatedAt time.Time       `json:"created_at"`
		Data      json.RawMessage `json:"data"`
	}
	if err := json.Unmarshal(evs[0].Body, &body); err != nil {
		t.Fatal(err)
	}
	want := `{"alarm_id":7,"alarm":"link_expiry","link":"doomed","domain":"go.acme.com","short_url":"https://go.acme.com/doomed","attempts":7,"error":"first"}`
	if body.Type != EventAlarmDead || !body.CreatedAt.Equal(at) || string(body.Data) != want || evs[0].TenantID != 3 {
		t.Errorf("alarm.dead event %s (tenant %d), want data %s at %v", evs[0].Body, evs[0].TenantID, want, at)
	}
}

func TestClickEvents(t *testing.T) {
	now := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	m1, m2 := now.Add(-2*time.Minute), now.Add(-time.Minute)
	four := int64(4)
	rows := []ClickRow{
		{LinkID: 1, TenantID: 3, Slug: "x", MaxClicks: &four, Total: 6, Bucket: &m1, Count: 3},
		{LinkID: 1, TenantID: 3, Slug: "x", MaxClicks: &four, Total: 6, Bucket: &m2, Count: 3},
		{LinkID: 2, TenantID: 3, Slug: "y", DomainID: 5, Host: "go.acme.com", Total: 0},
	}
	evs, err := ClickEvents(rows, testShortBase, now)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, ev := range evs {
		var body struct{ Data json.RawMessage }
		if err := json.Unmarshal(ev.Body, &body); err != nil {
			t.Fatal(err)
		}
		got = append(got, ev.Type+" "+ev.Key+" "+string(body.Data))
	}
	want := []string{
		`link.clicks  {"link":"x","domain":"lf.test","short_url":"https://lf.test:8443/base/x","buckets":[{"start":"2026-12-01T09:58:00Z","count":3},{"start":"2026-12-01T09:59:00Z","count":3}],"total":6}`,
		`link.limit_reached limit:1 {"link":"x","domain":"lf.test","short_url":"https://lf.test:8443/base/x","max_clicks":4,"total":6}`,
		`link.clicks  {"link":"y","domain":"go.acme.com","short_url":"https://go.acme.com/y","buckets":[],"total":0}`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("ClickEvents:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestApplyLinkUpdate(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	exp, expired := t0.Add(-time.Hour), t0.Add(-time.Minute)
	old := Link{ID: 1, TenantID: 2, Slug: "s", ExpiresAt: &exp, ExpiredAt: &expired, Clicks: 10, ImportedClicks: 4,
		CreatedAt: t0.Add(-2 * time.Hour), UpdatedAt: t0, Tags: []string{"a"}}
	later := t0.Add(time.Hour)
	up, err := ApplyLinkUpdate(old, t0.Add(-time.Second), func(l *Link) error {
		l.ID, l.Slug, l.ImportedClicks = 9, "other", 1
		*l.ExpiresAt = later // a copy: old keeps its expiry
		l.Tags[0] = "b"
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	l := up.Link
	if l.ID != 1 || l.Slug != "s" || l.Clicks != 7 || l.ExpiredAt != nil || !l.ExpiresAt.Equal(later) ||
		!l.UpdatedAt.Equal(t0.Add(time.Microsecond)) || up.Alarm != AlarmRescheduled {
		t.Errorf("update = %+v (alarm %d)", l, up.Alarm)
	}
	if !old.ExpiresAt.Equal(exp) || old.Tags[0] != "a" {
		t.Errorf("fn changed old: %+v", old)
	}
	up, _ = ApplyLinkUpdate(old, t0.Add(time.Second), func(l *Link) error { l.ExpiresAt = nil; return nil })
	if up.Alarm != AlarmDeleted || !up.Link.UpdatedAt.Equal(t0.Add(time.Second)) {
		t.Errorf("cleared expiry: alarm %d, updated %v", up.Alarm, up.Link.UpdatedAt)
	}
	up, _ = ApplyLinkUpdate(old, t0, func(l *Link) error { l.Title = "T"; return nil })
	if up.Alarm != AlarmKept || up.Link.ExpiredAt == nil {
		t.Errorf("unmoved expiry: alarm %d, expired %v", up.Alarm, up.Link.ExpiredAt)
	}
}
