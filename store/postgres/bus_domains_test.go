package postgres_test

import (
	"fmt"
	"testing"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/internal/pgtest"
	"github.com/linkforge/linkforge/store/postgres"
)

// domainRecorder is a recorder that hears of domains too
// (linkforge.DomainBusHandler).
type domainRecorder struct {
	*recorder
	on      []string // host/slug of each PeerInvalidateOn
	domains []string
}

func (r *domainRecorder) PeerInvalidateOn(host, slug string) {
	r.mu.Lock()
	r.on = append(r.on, host+"/"+slug)
	r.invalid = append(r.invalid, "") // counted by recorder.count
	r.mu.Unlock()
	r.poke()
}

func (r *domainRecorder) PeerDomain(host string) {
	r.mu.Lock()
	r.domains = append(r.domains, host)
	r.invalid = append(r.invalid, "")
	r.mu.Unlock()
	r.poke()
}

// TestBusCarriesDomains: an invalidation on a domain arrives with its
// host, a domain write as one, and an expiry and a link event with the
// link's domain id; a handler that does not hear of domains gets the
// invalidation's slug alone.
func TestBusCarriesDomains(t *testing.T) {
	t.Parallel()
	db := mustOpenURL(t, pgtest.New(t))
	recB := &domainRecorder{recorder: newRecorder()}
	recC := newRecorder() // an older handler
	a := mustBus(t, db, postgres.BusConfig{Node: "node-a", Handler: newRecorder()}, true)
	mustBus(t, db, postgres.BusConfig{Node: "node-b", Handler: recB}, true)
	mustBus(t, db, postgres.BusConfig{Node: "node-c", Handler: recC}, true)
	recB.mustWaitResync(t)
	recC.mustWaitResync(t)

	a.PublishInvalidateOn("go.acme.com", "launch")
	a.PublishInvalidateOn("", "public")
	a.PublishDomain("go.acme.com")
	a.PublishExpired(linkforge.Link{ID: 9, TenantID: 3, Slug: "gone", DomainID: 4})
	a.PublishLink(linkforge.LinkEvent{Op: linkforge.LinkCreated, TenantID: 3, LinkID: 10, Slug: "new", DomainID: 4})
	recB.mustWaitEvents(t, 5)
	recC.mustWaitEvents(t, 4)

	recB.mu.Lock()
	got := fmt.Sprint(recB.on, recB.domains, recB.expired[0].DomainID, recB.links[0].DomainID)
	recB.mu.Unlock()
	if want := fmt.Sprint([]string{"go.acme.com/launch"}, []string{"go.acme.com"}, 4, 4); got != want {
		t.Errorf("domain-aware handler got %s, want %s", got, want)
	}
	recC.mu.Lock()
	defer recC.mu.Unlock()
	if fmt.Sprint(recC.invalid) != fmt.Sprint([]string{"launch", "public"}) {
		t.Errorf("older handler's invalidations = %v, want the slugs launch and public", recC.invalid)
	}
}
