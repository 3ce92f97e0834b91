package bustest

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/linkforge/linkforge"
)

// Wait bounds every wait for an event. It is a hang guard, not a latency
// assertion: a healthy run takes milliseconds.
const Wait = 30 * time.Second

// Recorder is a BusHandler that keeps what it receives, and lets a test
// wait for a number of events or for a Resync.
type Recorder struct {
	mu      sync.Mutex
	Clicks  []PeerClicks
	Invalid []string // the slugs of PeerInvalidate ("" for one on a domain)
	On      []string // host/slug of each PeerInvalidate on a domain
	Domains []string
	Expired []linkforge.Link
	Links   []linkforge.LinkEvent
	changed chan struct{} // capacity 1: something arrived
	resyncs chan struct{} // one per Resync
}

// PeerClicks is one received count and its sender.
type PeerClicks struct {
	Node string
	C    linkforge.BucketCount
}

// NewRecorder returns an empty Recorder.
func NewRecorder() *Recorder {
	return &Recorder{changed: make(chan struct{}, 1), resyncs: make(chan struct{}, 64)}
}

func (r *Recorder) PeerClicks(node string, c linkforge.BucketCount) {
	r.record(func() { r.Clicks = append(r.Clicks, PeerClicks{node, c}) })
}
func (r *Recorder) PeerInvalidate(host, slug string) {
	r.record(func() {
		if host != "" {
			// Counted among Invalid too, so that MustWaitEvents counts it.
			r.On = append(r.On, host+"/"+slug)
			slug = ""
		}
		r.Invalid = append(r.Invalid, slug)
	})
}
func (r *Recorder) PeerDomain(host string) {
	r.record(func() { r.Domains = append(r.Domains, host); r.Invalid = append(r.Invalid, "") })
}
func (r *Recorder) PeerExpired(l linkforge.Link) {
	r.record(func() { r.Expired = append(r.Expired, l) })
}
func (r *Recorder) PeerLink(e linkforge.LinkEvent) {
	r.record(func() { r.Links = append(r.Links, e) })
}
func (r *Recorder) Resync() { r.resyncs <- struct{}{} }

func (r *Recorder) record(add func()) {
	r.mu.Lock()
	add()
	r.mu.Unlock()
	select {
	case r.changed <- struct{}{}:
	default:
	}
}

// Lock locks the recorded events for reading; Unlock unlocks them.
func (r *Recorder) Lock()   { r.mu.Lock() }
func (r *Recorder) Unlock() { r.mu.Unlock() }

// Count is the number of events received.
func (r *Recorder) Count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.Clicks) + len(r.Invalid) + len(r.Expired) + len(r.Links)
}

// MustWaitEvents waits until r has received at least n events.
func (r *Recorder) MustWaitEvents(t testing.TB, n int) {
	t.Helper()
	deadline := time.After(Wait)
	for r.Count() < n {
		select {
		case <-r.changed:
		case <-deadline:
			t.Fatalf("received %d events, want %d", r.Count(), n)
		}
	}
}

// MustWaitResync waits for the next Resync: the bus (re)started listening.
func (r *Recorder) MustWaitResync(t testing.TB) {
	t.Helper()
	select {
	case <-r.resyncs:
	case <-time.After(Wait):
		t.Fatal("no Resync: the bus did not (re)start listening")
	}
}

// Resynced reports whether a Resync came that no MustWaitResync took.
func (r *Recorder) Resynced() bool {
	select {
	case <-r.resyncs:
		return true
	default:
		return false
	}
}

// Metric returns the value of the counter or gauge name in reg whose
// labels include the name-value pairs labels; 0 if there is none.
func Metric(t testing.TB, reg prometheus.Gatherer, name string, labels ...string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			have := make(map[string]string)
			for _, lp := range m.GetLabel() {
				have[lp.GetName()] = lp.GetValue()
			}
			match := true
			for i := 0; i+1 < len(labels); i += 2 {
				match = match && have[labels[i]] == labels[i+1]
			}
			if !match {
				continue
			}
			if c := m.GetCounter(); c != nil {
				return c.GetValue()
			}
			return m.GetGauge().GetValue()
		}
	}
	return 0
}

// waitFor polls cond until it holds, or fails with what.
func waitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(Wait)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting until %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// Largest is how many of the largest events PublishLargest publishes:
// clicks of distinct links, then invalidations.
const (
	LargestClicks        = 3000
	LargestInvalidations = 500
)

// largestSlug is the longest slug allowed.
func largestSlug(i int) string { return fmt.Sprintf("%064d", i) }

// PublishLargest publishes thousands of events with the longest slugs and
// the largest numbers, none coalescible, for a transport's test of its
// message size limit; CheckLargest checks that rec got them all, in order.
func PublishLargest(b linkforge.Bus) {
	bucket := time.Date(2026, 11, 30, 8, 1, 0, 0, time.UTC)
	for i := range LargestClicks {
		b.PublishClicks(linkforge.BucketCount{TenantID: 1 << 40, LinkID: 1<<50 + int64(i), Slug: largestSlug(i),
			Bucket: bucket, Count: 1<<40 + int64(i), Total: 1 << 50, TotalKnown: true})
	}
	for i := range LargestInvalidations {
		b.PublishInvalidate("", largestSlug(i))
	}
}

// CheckLargest waits for PublishLargest's events on rec and checks them.
func CheckLargest(t testing.TB, rec *Recorder) {
	t.Helper()
	rec.MustWaitEvents(t, LargestClicks+LargestInvalidations)
	rec.Lock()
	defer rec.Unlock()
	if len(rec.Clicks) != LargestClicks || len(rec.Invalid) != LargestInvalidations {
		t.Fatalf("received %d clicks and %d invalidations, want %d and %d", len(rec.Clicks), len(rec.Invalid),
			LargestClicks, LargestInvalidations)
	}
	for i, pc := range rec.Clicks {
		if c := pc.C; c.LinkID != 1<<50+int64(i) || c.Count != 1<<40+int64(i) || c.Slug != largestSlug(i) || c.Total != 1<<50 {
			t.Fatalf("event %d = %+v", i, c)
		}
	}
	for i, slug := range rec.Invalid {
		if slug != largestSlug(i) {
			t.Fatalf("invalidation %d = %s", i, slug)
		}
	}
}
