package bustest

import (
	"fmt"
	"testing"

	"github.com/linkforge/linkforge"
)

// testCarriesDomains: an invalidation on a domain arrives with its host,
// one on the public host without, a domain write as one event, and an
// expiry and a link event with the link's domain id.
func testCarriesDomains(t *testing.T, tr Transport) {
	a, _ := listening(t, tr, NodeConfig{Node: "node-a"})
	recB := NewRecorder()
	b := tr.NewNode(t, NodeConfig{Node: "node-b", Handler: recB})
	StartNode(t, b)
	recB.MustWaitResync(t)

	a.PublishInvalidate("go.acme.com", "launch")
	a.PublishInvalidate("", "public")
	a.PublishDomain("go.acme.com")
	node := a
	node.PublishExpired(linkforge.Link{ID: 9, TenantID: 3, Slug: "gone", DomainID: 4})
	node.PublishLink(linkforge.LinkEvent{Op: linkforge.LinkCreated, TenantID: 3, LinkID: 10, Slug: "new", DomainID: 4})
	recB.MustWaitEvents(t, 5)

	recB.Lock()
	got := fmt.Sprint(recB.On, recB.Domains, len(recB.Expired), len(recB.Links))
	if len(recB.Expired) == 1 && len(recB.Links) == 1 {
		got += fmt.Sprint(" ", recB.Expired[0].DomainID, recB.Links[0].DomainID)
	}
	recB.Unlock()
	same(t, "domain events", got, fmt.Sprint([]string{"go.acme.com/launch"}, []string{"go.acme.com"}, 1, 1)+" 4 4")
	recB.Lock()
	defer recB.Unlock()
	same(t, "invalidations", recB.Invalid, []string{"", "public", ""})
}
