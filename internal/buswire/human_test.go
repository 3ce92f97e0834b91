package buswire

import (
	"log/slog"
	"testing"
	"time"

	"github.com/linkforge/linkforge"
)

// clicksHandler keeps the counts it receives; the rest is not asked for.
type clicksHandler struct {
	linkforge.BusHandler
	got []linkforge.BucketCount
}

func (h *clicksHandler) PeerClicks(_ string, c linkforge.BucketCount) { h.got = append(h.got, c) }

// TestClicksHuman: a count's human clicks are on the wire as "human", zero
// included; a count of a node of the previous release, which has no such
// field, arrives with HumanKnown false rather than as zero human clicks.
func TestClicksHuman(t *testing.T) {
	bucket := time.Date(2026, 12, 1, 9, 30, 0, 0, time.UTC)
	for _, tt := range []struct {
		c    linkforge.BucketCount
		want string
	}{
		{linkforge.BucketCount{TenantID: 1, LinkID: 7, Slug: "abc", Bucket: bucket, Count: 42, Human: 40, HumanKnown: true, Total: 1234, TotalKnown: true},
			`{"type":"clicks","tenant":1,"link":7,"slug":"abc","bucket":1796117400,"count":42,"human":40,"total":1234}`},
		{linkforge.BucketCount{TenantID: 1, LinkID: 7, Slug: "abc", Bucket: bucket, Count: 3, HumanKnown: true},
			`{"type":"clicks","tenant":1,"link":7,"slug":"abc","bucket":1796117400,"count":3,"human":0}`},
		{linkforge.BucketCount{TenantID: 1, LinkID: 7, Slug: "abc", Bucket: bucket, Count: 3},
			`{"type":"clicks","tenant":1,"link":7,"slug":"abc","bucket":1796117400,"count":3}`},
	} {
		e, err := Clicks(tt.c)
		if err != nil {
			t.Fatal(err)
		}
		if string(e.Data) != tt.want {
			t.Errorf("Clicks(%+v) = %s, want %s", tt.c, e.Data, tt.want)
		}
	}

	h := &clicksHandler{}
	r := &Receiver{Self: NewIdentity("new"), Handler: h, Metrics: NewMetrics(func() bool { return true }), Log: slog.New(slog.DiscardHandler)}
	r.Deliver([]byte(`{"v":1,"node":"old","inst":"AAAAAAAA","ev":[` +
		`{"type":"clicks","tenant":1,"link":7,"slug":"abc","bucket":1796117400,"count":42,"total":1234},` +
		`{"type":"clicks","tenant":1,"link":8,"slug":"def","bucket":1796117400,"count":5,"human":0}]}`))
	want := []linkforge.BucketCount{
		{TenantID: 1, LinkID: 7, Slug: "abc", Bucket: bucket, Count: 42, Total: 1234, TotalKnown: true},
		{TenantID: 1, LinkID: 8, Slug: "def", Bucket: bucket, Count: 5, Human: 0, HumanKnown: true},
	}
	if len(h.got) != len(want) {
		t.Fatalf("received %+v, want %+v", h.got, want)
	}
	for i := range want {
		if h.got[i] != want[i] {
			t.Errorf("count %d: %+v, want %+v", i, h.got[i], want[i])
		}
	}
}
