package bustest

import (
	"fmt"
	"testing"

	"github.com/linkforge/linkforge"
)

// DomainPublisher is what a bus publishes of domains besides
// linkforge.Bus: the web server finds it by a type assertion.
type DomainPublisher interface {
	PublishInvalidateOn(host, slug string)
	PublishDomain(host string)
}

// DomainRecorder is a Recorder that hears of domains too
// (linkforge.DomainBusHandler).
type DomainRecorder struct {
	*Recorder
	On      []string // host/slug of each PeerInvalidateOn
	Domains []string
}

// NewDomainRecorder returns an empty DomainRecorder.
func NewDomainRecorder() *DomainRecorder { return &DomainRecorder{Recorder: NewRecorder()} }

func (r *DomainRecorder) PeerInvalidateOn(host, slug string) {
	// Counted among Invalid too, so that MustWaitEvents counts it.
	r.record(func() { r.On = append(r.On, host+"/"+slug); r.Invalid = append(r.Invalid, "") })
}
func (r *DomainRecorder) PeerDomain(host string) {
	r.record(func() { r.Domains = append(r.Domains, host); r.Invalid = append(r.Invalid, "") })
}

// testCarriesDomains: an invalidation on a domain arrives with its host,
// a domain write as one event, and an expiry and a link event with the
// link's domain id; a handler that does not hear of domains gets the
// invalidation's slug alone, and no domain event.
func testCarriesDomains(t *testing.T, tr Transport) {
	node, _ := listening(t, tr, NodeConfig{Node: "node-a"})
	a, ok := node.(DomainPublisher)
	if !ok {
		t.Fatalf("%T does not publish domain events (PublishInvalidateOn, PublishDomain)", node)
	}
	recB := NewDomainRecorder()
	b := tr.NewNode(t, NodeConfig{Node: "node-b", Handler: recB})
	StartNode(t, b)
	recB.MustWaitResync(t)
	_, recC := listening(t, tr, NodeConfig{Node: "node-c"}) // an older handler

	a.PublishInvalidateOn("go.acme.com", "launch")
	a.PublishInvalidateOn("", "public")
	a.PublishDomain("go.acme.com")
	node.PublishExpired(linkforge.Link{ID: 9, TenantID: 3, Slug: "gone", DomainID: 4})
	node.PublishLink(linkforge.LinkEvent{Op: linkforge.LinkCreated, TenantID: 3, LinkID: 10, Slug: "new", DomainID: 4})
	recB.MustWaitEvents(t, 5)
	recC.MustWaitEvents(t, 4)

	recB.Lock()
	got := fmt.Sprint(recB.On, recB.Domains, len(recB.Expired), len(recB.Links))
	if len(recB.Expired) == 1 && len(recB.Links) == 1 {
		got += fmt.Sprint(" ", recB.Expired[0].DomainID, recB.Links[0].DomainID)
	}
	recB.Unlock()
	same(t, "domain-aware handler", got, fmt.Sprint([]string{"go.acme.com/launch"}, []string{"go.acme.com"}, 1, 1)+" 4 4")
	recC.Lock()
	defer recC.Unlock()
	same(t, "older handler's invalidations", recC.Invalid, []string{"launch", "public"})
}
