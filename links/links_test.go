package links_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/internal/testdb"
	"github.com/linkforge/linkforge/links"
)

// effects records every after-effect the service runs. It is the
// service's own seam (the web server and the bus sit behind it in
// production), so recording it is observing the service, not mocking a
// part.
type effects struct {
	mu          sync.Mutex
	local, peer []string
	published   []string // "op slug"
	imported    []string
	due         []time.Time
}

func (e *effects) Invalidate(_ int64, slug string) {
	e.mu.Lock()
	e.local = append(e.local, slug)
	e.mu.Unlock()
}

// peerEffects is the other nodes' side of effects: their invalidations
// are recorded apart; what they are told to show is not (the dashboards'
// side is recorded once, by effects).
type peerEffects struct{ e *effects }

func (p peerEffects) Invalidate(_ int64, slug string) {
	p.e.mu.Lock()
	p.e.peer = append(p.e.peer, slug)
	p.e.mu.Unlock()
}
func (peerEffects) PublishLink(linkforge.LinkOp, linkforge.Link)    {}
func (peerEffects) PublishImported(context.Context, linkforge.Link) {}

func (e *effects) PublishLink(op linkforge.LinkOp, l linkforge.Link) {
	e.mu.Lock()
	e.published = append(e.published, string(op)+" "+l.Slug)
	e.mu.Unlock()
}

func (e *effects) PublishImported(_ context.Context, l linkforge.Link) {
	e.mu.Lock()
	e.imported = append(e.imported, l.Slug)
	e.mu.Unlock()
}
func (e *effects) Reschedule(due time.Time) { e.mu.Lock(); e.due = append(e.due, due); e.mu.Unlock() }

// hasher stands in for argon2id, which is slow on purpose: the hash is
// the password reversed behind a prefix, enough to see it was hashed.
type hasher struct{ calls int }

func (h *hasher) HashPassword(_ context.Context, pw string) (string, error) {
	h.calls++
	r := []rune(pw)
	for i, j := 0, len(r)-1; i < j; i, j = i+1, j-1 {
		r[i], r[j] = r[j], r[i]
	}
	return "hashed:" + string(r), nil
}

type fixture struct {
	svc    *links.Service
	st     linkforge.Store
	fx     *effects
	h      *hasher
	tenant int64
}

func newFixture(t *testing.T) fixture {
	t.Helper()
	st := testdb.SQLite(t)
	tn, err := st.EnsureTenant(context.Background(), "acme")
	if err != nil {
		t.Fatal(err)
	}
	fx, h := &effects{}, &hasher{}
	svc, err := links.New(links.Config{Store: st, Hasher: h, Cache: fx, Peers: peerEffects{fx}, Publisher: fx, Alarms: fx,
		SelfHosts: []string{"sho.rt"}})
	if err != nil {
		t.Fatal(err)
	}
	return fixture{svc: svc, st: st, fx: fx, h: h, tenant: tn.ID}
}

func eq(t *testing.T, what string, got, want []string) {
	t.Helper()
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("%s = %q, want %q", what, got, want)
	}
}

// TestLinkWriteEffects: each of create, update and delete stores the
// write and runs its after-effects exactly once: this node's cache, the
// peers', the dashboards, and the scheduler for a write with an expiry.
func TestLinkWriteEffects(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	exp := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)

	l, err := f.svc.Create(ctx, links.NewLink{Link: linkforge.Link{TenantID: f.tenant, Slug: "docs",
		URL: "https://example.com/", ExpiresAt: &exp}, Password: "s3cret"})
	if err != nil {
		t.Fatal(err)
	}
	if l.PasswordHash != "hashed:terc3s" || f.h.calls != 1 {
		t.Errorf("hash = %q after %d calls, want the hasher's, once", l.PasswordHash, f.h.calls)
	}
	stored, err := f.st.TenantLink(ctx, f.tenant, linkforge.PublicDomainID, "docs")
	if err != nil || stored.PasswordHash != "hashed:terc3s" {
		t.Fatalf("stored = %+v, %v", stored, err)
	}
	eq(t, "local", f.fx.local, []string{"docs"})
	eq(t, "peer", f.fx.peer, []string{"docs"})
	eq(t, "published", f.fx.published, []string{"created docs"})
	if len(f.fx.due) != 1 || !f.fx.due[0].Equal(exp) {
		t.Errorf("rescheduled %v, want once at %v", f.fx.due, exp)
	}

	u, err := f.svc.Update(ctx, f.tenant, linkforge.PublicDomainID, "docs", links.Patch{
		Apply:       func(l *linkforge.Link) { l.URL = "https://example.org/" },
		SetPassword: true, // removed
	})
	if err != nil {
		t.Fatal(err)
	}
	if u.URL != "https://example.org/" || u.PasswordHash != "" || f.h.calls != 1 {
		t.Errorf("updated = %q, hash %q, %d hashes; want the new URL, no password, no new hash", u.URL, u.PasswordHash, f.h.calls)
	}
	eq(t, "local", f.fx.local, []string{"docs", "docs"})
	eq(t, "peer", f.fx.peer, []string{"docs", "docs"})
	eq(t, "published", f.fx.published, []string{"created docs", "updated docs"})
	if len(f.fx.due) != 2 {
		t.Errorf("rescheduled %d times, want 2 (an update keeps the expiry)", len(f.fx.due))
	}

	if _, err := f.svc.Delete(ctx, f.tenant, linkforge.PublicDomainID, "docs"); err != nil {
		t.Fatal(err)
	}
	if _, err := f.st.TenantLink(ctx, f.tenant, linkforge.PublicDomainID, "docs"); linkforge.ErrorCode(err) != linkforge.ENotFound {
		t.Errorf("after delete: %v, want ENotFound", err)
	}
	eq(t, "local", f.fx.local, []string{"docs", "docs", "docs"})
	eq(t, "peer", f.fx.peer, []string{"docs", "docs", "docs"})
	eq(t, "published", f.fx.published, []string{"created docs", "updated docs", "deleted docs"})
	if len(f.fx.due) != 2 {
		t.Errorf("rescheduled %d times, want 2 (a delete's alarm went with the link)", len(f.fx.due))
	}
}

// TestLinkWriteFailureHasNoEffects: a write the store refuses (a taken
// slug, an invalid merged link, an unknown slug) tells nobody.
func TestLinkWriteFailureHasNoEffects(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	if _, err := f.svc.Create(ctx, links.NewLink{Link: linkforge.Link{TenantID: f.tenant, Slug: "a", URL: "https://example.com/"}}); err != nil {
		t.Fatal(err)
	}
	_, err := f.svc.Create(ctx, links.NewLink{Link: linkforge.Link{TenantID: f.tenant, Slug: "a", URL: "https://example.com/"}})
	if linkforge.ErrorCode(err) != linkforge.EConflict || !strings.Contains(linkforge.ErrorMessage(err), `slug "a" is already taken`) {
		t.Errorf("taken slug: %v, want EConflict naming it", err)
	}
	_, err = f.svc.Update(ctx, f.tenant, linkforge.PublicDomainID, "a", links.Patch{Apply: func(l *linkforge.Link) { l.URL = "https://sho.rt/loop" }})
	if linkforge.ErrorCode(err) != linkforge.EInvalid {
		t.Errorf("redirect loop: %v, want EInvalid", err)
	}
	if _, err := f.svc.Delete(ctx, f.tenant, linkforge.PublicDomainID, "nope"); linkforge.ErrorCode(err) != linkforge.ENotFound {
		t.Errorf("unknown slug: %v, want ENotFound", err)
	}
	eq(t, "local", f.fx.local, []string{"a"})
	eq(t, "published", f.fx.published, []string{"created a"})
}

// TestCreateGeneratesSlug: an empty slug is the service's to choose.
func TestCreateGeneratesSlug(t *testing.T) {
	f := newFixture(t)
	l, err := f.svc.Create(context.Background(), links.NewLink{Link: linkforge.Link{TenantID: f.tenant, URL: "https://example.com/"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(l.Slug) != 7 {
		t.Errorf("slug = %q, want a generated one", l.Slug)
	}
	eq(t, "published", f.fx.published, []string{"created " + l.Slug})
}
