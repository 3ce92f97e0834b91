// Package links is the one place link writes and their after-effects live.
//
// A link write is more than its row: the redirect caches (this node's and
// the other nodes') may hold the slug, as a link or as unknown; the open
// dashboards show the tenant's links; the scheduler's timer may
// need to move earlier for the write's alarm. Every way links are written
// (the admin API's create, update, delete, bulk create and import, and the
// CLI's import) goes through a Service, so that each write has its
// after-effects exactly once and no caller can forget one. The effects are
// small interfaces given to New; web and cmd provide them and keep the
// transport (HTTP bodies, problems, status codes, flags) to themselves.
package links

import (
	"context"
	"fmt"
	"time"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/rules"
)

// Store is what the Service writes to: the link writes of linkforge.Store,
// and the import and export (porting.Store and porting.ExportStore).
// Both stores implement it.
type Store interface {
	CreateLink(ctx context.Context, l linkforge.Link) (linkforge.Link, error)
	UpdateLink(ctx context.Context, tenantID, domainID int64, slug string, fn func(*linkforge.Link) error) (linkforge.Link, error)
	DeleteLink(ctx context.Context, tenantID, domainID int64, slug string) (linkforge.Link, error)
	CreateLinks(ctx context.Context, links []linkforge.Link) ([]linkforge.BulkResult, error)
	linkforge.PortingStore
	// The operator's writes (linkforge.OperatorStore).
	BlockLink(ctx context.Context, id int64, reason string) (linkforge.Link, error)
	SetLinkUnsafe(ctx context.Context, id int64, reason string) (linkforge.Link, error)
	SetTenantSuspended(ctx context.Context, name string, suspended bool) (linkforge.Tenant, []linkforge.Link, error)
}

// Hasher hashes a new link password. web's implementation takes a
// password.Slots slot for it, shared with the unlocks' verifications, so
// that hashes cannot grow the heap without bound.
type Hasher interface {
	HashPassword(ctx context.Context, pw string) (string, error)
}

// Invalidator drops a link from a redirect cache at once: a redirect may
// have cached it a moment ago, as a link or as unknown. This node's
// *linkcache.Cache implements it; so does the cluster's side that tells
// the other nodes (Peers).
type Invalidator interface {
	Invalidate(domainID int64, slug string)
}

// Peers tells the other nodes of a cluster of link writes
// (clusterfeed.Local): their caches drop the link, their dashboards show
// the write. Its methods must not block.
type Peers interface {
	Invalidator
	Publisher
}

// Publisher shows link writes on dashboards: this node's (Feed), or the
// other nodes' (Peers). It must not block and never fails a write.
type Publisher interface {
	// PublishLink tells of a link created, updated or deleted, as stored.
	PublishLink(op linkforge.LinkOp, l linkforge.Link)
	// PublishImported tells of a link an import created: the importer
	// does not learn the ids, nor what the store filled in, so the
	// publisher reads the link back if it needs it. ctx is the import's.
	PublishImported(ctx context.Context, l linkforge.Link)
}

// Rescheduler is the expiry alarms' scheduler (*schedule.Scheduler): told
// that a write stored an alarm due at due, so that its timer moves
// earlier if needed. Writes it is not told of are found by its periodic
// re-read of the store.
type Rescheduler interface {
	Reschedule(due time.Time)
}

// Config is a Service's dependencies. Store is required; a nil effect is
// one with nobody to tell (the CLI's import: no running server hears of
// it, and a server that looked a slug up a moment before answers 404 for
// it until its negative cache entry expires, 5 s).
type Config struct {
	Store Store
	// Hasher hashes passwords; nil: a create or update with a password
	// fails.
	Hasher Hasher
	// Cache is this node's link cache, Publisher its dashboards (a
	// Feed); Peers the other nodes, nil on one node.
	Cache     Invalidator
	Publisher Publisher
	Peers     Peers
	Alarms    Rescheduler
	// SelfHosts are the server's own hosts, for the redirect-loop check
	// of linkforge.ValidateTargetURL on an update's merged link and an
	// import's lines.
	SelfHosts []string
	// SelfHostsOf, when set, returns the own hosts at each write instead
	// of SelfHosts: the public host and every verified domain, which
	// change while the server runs.
	SelfHostsOf func(ctx context.Context) []string
	// SchemesOf returns a tenant's allowlist of extra target schemes
	// (linkforge.ValidateTargetURLFor) at each create and update; nil:
	// http and https only.
	SchemesOf func(ctx context.Context, tenantID int64) ([]string, error)
	// Targets is the operator's target blocklist: a create, update, bulk
	// item or import line with a blocked target is refused
	// (EBlockedTarget). nil: none.
	Targets linkforge.TargetPolicy
	// Threats is the operator's threat filter (--threat-dns, package
	// safety): a create or bulk item whose target it flags is refused
	// (EUnsafeTarget); an update's new target it flags makes the link
	// unsafe at once. nil: none.
	Threats Threats
	// ShortBase is the server's public URL without a trailing slash, the
	// base of the JSON export's short_url (ShortBase).
	ShortBase string
	// Domain resolves the host of an import line's domain ("" when it
	// has none) to the tenant's domain id, as a create does; nil: every
	// imported link goes on the public host.
	Domain func(ctx context.Context, tenantID int64, host string) (int64, error)
	// BaseOf is where the short URL of a link on a domain starts (the
	// JSON export's short_url and domain); nil: every link on ShortBase.
	BaseOf func(l linkforge.Link) Base
	// Retention is the server's retention of minute buckets and hourly
	// dimension rows, which a per-visit import's history follows (zero:
	// the defaults).
	Retention Retention
}

// Retention is how long minute buckets and hourly dimension rows are kept
// (--retention-minutes, --retention-hours).
type Retention struct {
	Minutes, Hours time.Duration
}

// Threats checks new targets against the threat filter (*safety.Checker).
type Threats interface {
	CheckNew(ctx context.Context, l *linkforge.Link) error
	NewTargetReason(ctx context.Context, kept map[string]bool, l *linkforge.Link) string
}

// Service writes links and runs the after-effects of each write.
type Service struct {
	store     Store
	hasher    Hasher
	cache     Invalidator
	peers     Peers
	publisher Publisher
	alarms    Rescheduler
	selfHosts []string
	selfOf    func(ctx context.Context) []string
	schemesOf func(ctx context.Context, tenantID int64) ([]string, error)
	shortBase string
	targets   linkforge.TargetPolicy
	threats   Threats
	baseOf    func(l linkforge.Link) Base
	domain    func(ctx context.Context, tenantID int64, host string) (int64, error)
	retention Retention
}

// self returns the server's own hosts for the redirect-loop check.
func (s *Service) self(ctx context.Context) []string {
	if s.selfOf != nil {
		return s.selfOf(ctx)
	}
	return s.selfHosts
}

// schemes returns the tenant's extra target schemes.
func (s *Service) schemes(ctx context.Context, tenantID int64) ([]string, error) {
	if s.schemesOf == nil {
		return nil, nil
	}
	return s.schemesOf(ctx, tenantID)
}

// New returns a Service on cfg.
func New(cfg Config) (*Service, error) {
	if cfg.Store == nil {
		return nil, fmt.Errorf("links: Config.Store is required")
	}
	return &Service{store: cfg.Store, hasher: cfg.Hasher, cache: cfg.Cache, peers: cfg.Peers,
		publisher: cfg.Publisher, alarms: cfg.Alarms, selfHosts: cfg.SelfHosts, selfOf: cfg.SelfHostsOf, schemesOf: cfg.SchemesOf, shortBase: cfg.ShortBase,
		baseOf: cfg.BaseOf, domain: cfg.Domain, targets: cfg.Targets, retention: cfg.Retention, threats: cfg.Threats}, nil
}

// NewLink is a link to create: validated already, with its tenant, and
// its plain password, if any (never stored, never logged). An empty Slug
// is generated.
type NewLink struct {
	Link     linkforge.Link
	Password string
}

// slugAttempts bounds the retries of a generated slug that collides: with
// 62^7 slugs, even one retry is rare.
const slugAttempts = 5

// Create stores nl. A slug of the caller's that is in use answers
// EConflict naming the field; a generated one that collides is replaced,
// up to slugAttempts times.
func (s *Service) Create(ctx context.Context, nl NewLink) (linkforge.Link, error) {
	l := nl.Link
	// The entry points check the other fields as they read them; the
	// routing fields are checked here, for every one of them.
	schemes, err := s.schemes(ctx, l.TenantID)
	if err != nil {
		return linkforge.Link{}, fmt.Errorf("create link: %w", err)
	}
	if err := linkforge.InvalidFields(rules.ValidateRoutingFor(&l, s.self(ctx), schemes)); err != nil {
		return linkforge.Link{}, fmt.Errorf("create link: %w", err)
	}
	if err := linkforge.CheckTargets(&l, s.targets); err != nil {
		return linkforge.Link{}, fmt.Errorf("create link: %w", err)
	}
	if s.threats != nil {
		if err := s.threats.CheckNew(ctx, &l); err != nil {
			return linkforge.Link{}, fmt.Errorf("create link: %w", err)
		}
	}
	if nl.Password != "" {
		h, err := s.hash(ctx, nl.Password)
		if err != nil {
			return linkforge.Link{}, fmt.Errorf("create link: %w", err)
		}
		l.PasswordHash = h
	}
	var created linkforge.Link
	if l.Slug != "" {
		created, err = s.store.CreateLink(ctx, l)
		if linkforge.ErrorCode(err) == linkforge.EConflict {
			return linkforge.Link{}, slugTaken(l.Slug, err)
		}
	} else {
		for range slugAttempts {
			l.Slug = linkforge.NewSlug()
			created, err = s.store.CreateLink(ctx, l)
			if linkforge.ErrorCode(err) != linkforge.EConflict {
				break
			}
		}
	}
	if err != nil {
		return linkforge.Link{}, fmt.Errorf("create link: %w", err)
	}
	s.written(linkforge.LinkCreated, created)
	s.reschedule(created.ExpiresAt)
	return created, nil
}

// Patch is an update of a link: Apply makes the body's changes; with
// SetPassword, the password becomes Password's hash (empty: none).
type Patch struct {
	Apply       func(*linkforge.Link)
	SetPassword bool
	Password    string
}

// Update applies p to the tenant's link slug on the domain
// (linkforge.PublicDomainID: the public host). The merged link is validated
// inside the store's transaction: a partial update can never leave an
// invalid combination behind.
func (s *Service) Update(ctx context.Context, tenantID, domainID int64, slug string, p Patch) (linkforge.Link, error) {
	var hash string
	if p.SetPassword && p.Password != "" {
		var err error
		if hash, err = s.hash(ctx, p.Password); err != nil {
			return linkforge.Link{}, fmt.Errorf("update link: %w", err)
		}
	}
	self := s.self(ctx) // read before the transaction: it may load the host table
	schemes, err := s.schemes(ctx, tenantID)
	if err != nil {
		return linkforge.Link{}, fmt.Errorf("update link: %w", err)
	}
	var kept map[string]bool
	l, err := s.store.UpdateLink(ctx, tenantID, domainID, slug, func(l *linkforge.Link) error {
		kept = linkforge.TargetURLSet(l) // before Apply, which may edit the shared routing
		if p.Apply != nil {
			p.Apply(l)
		}
		if p.SetPassword {
			l.PasswordHash = hash
		}
		if err := rules.ValidateFor(l, self, schemes); err != nil {
			return err
		}
		return linkforge.CheckNewTargets(kept, l, s.targets)
	})
	if err != nil {
		return linkforge.Link{}, fmt.Errorf("update link: %w", err)
	}
	s.written(linkforge.LinkUpdated, l)
	// Whether or not the expiry moved: a later due time never moves the
	// timer later.
	s.reschedule(l.ExpiresAt)
	if s.threats != nil && l.UnsafeReason == "" && l.BlockedReason == "" {
		// After the write: the lookups must not hold the transaction.
		if why := s.threats.NewTargetReason(ctx, kept, &l); why != "" {
			flagged, err := s.SetUnsafe(linkforge.WithActor(ctx, safetyActor), l.ID, why)
			if err != nil {
				return linkforge.Link{}, fmt.Errorf("update link: flag its new target: %w", err)
			}
			return flagged, nil
		}
	}
	return l, nil
}

// safetyActor is who an update's threat flag is audited as: the
// operator's check (safety.Actor), not the tenant whose update it was.
var safetyActor = linkforge.Actor{Type: linkforge.ActorOperator, Name: "target check"}

// Delete deletes the tenant's link slug on the domain and returns it. The
// link's alarm went with it, in the same transaction: nothing to tell the
// scheduler, whose timer, if armed for it, finds nothing due.
func (s *Service) Delete(ctx context.Context, tenantID, domainID int64, slug string) (linkforge.Link, error) {
	deleted, err := s.store.DeleteLink(ctx, tenantID, domainID, slug)
	if err != nil {
		return linkforge.Link{}, fmt.Errorf("delete link: %w", err)
	}
	s.written(linkforge.LinkDeleted, deleted)
	return deleted, nil
}

// Block blocks the link id with reason, or lifts its block (reason ""),
// as the operator: the link answers 451 everywhere from the moment the
// call returns, as any update (the caches drop it).
func (s *Service) Block(ctx context.Context, id int64, reason string) (linkforge.Link, error) {
	l, err := s.store.BlockLink(ctx, id, reason)
	if err != nil {
		return linkforge.Link{}, fmt.Errorf("block link: %w", err)
	}
	s.written(linkforge.LinkUpdated, l)
	return l, nil
}

// SetUnsafe flags the link id as unsafe with reason, or clears the flag
// (reason ""): the link's visitors get the warning interstitial, or no
// longer, everywhere from the moment the call returns (the caches drop
// it). A flag that does not change writes nothing and drops nothing.
func (s *Service) SetUnsafe(ctx context.Context, id int64, reason string) (linkforge.Link, error) {
	l, err := s.store.SetLinkUnsafe(ctx, id, reason)
	if err != nil {
		return linkforge.Link{}, fmt.Errorf("flag link: %w", err)
	}
	s.written(linkforge.LinkUpdated, l)
	return l, nil
}

// Suspend suspends (true) or resumes the tenant called name, as the
// operator: every link of the tenant is dropped from the caches, here and
// on the other nodes, so that the redirects read the tenant's state anew.
func (s *Service) Suspend(ctx context.Context, name string, suspended bool) (linkforge.Tenant, error) {
	t, keys, err := s.store.SetTenantSuspended(ctx, name, suspended)
	if err != nil {
		return linkforge.Tenant{}, fmt.Errorf("suspend tenant: %w", err)
	}
	for _, k := range keys {
		if s.cache != nil {
			s.cache.Invalidate(k.DomainID, k.Slug)
		}
		if s.peers != nil {
			s.peers.Invalidate(k.DomainID, k.Slug)
		}
	}
	return t, nil
}

func (s *Service) hash(ctx context.Context, pw string) (string, error) {
	if s.hasher == nil {
		return "", fmt.Errorf("links: no password hasher")
	}
	return s.hasher.HashPassword(ctx, pw)
}

// written runs the effects of one stored write of l, but the alarm's: the
// caches everywhere, and the dashboards.
func (s *Service) written(op linkforge.LinkOp, l linkforge.Link) {
	if s.cache != nil {
		s.cache.Invalidate(l.DomainID, l.Slug)
	}
	if s.peers != nil {
		s.peers.Invalidate(l.DomainID, l.Slug)
		s.peers.PublishLink(op, l)
	}
	if s.publisher != nil {
		s.publisher.PublishLink(op, l)
	}
}

// reschedule nudges the scheduler after a write that stored an alarm due
// at due; nil: none stored.
func (s *Service) reschedule(due *time.Time) {
	if s.alarms != nil && due != nil {
		s.alarms.Reschedule(*due)
	}
}

// slugTaken is the error of a create whose slug is in use, as
// POST /api/v1/links answers it.
func slugTaken(slug string, cause error) error {
	return &linkforge.Error{
		Code:    linkforge.EConflict,
		Message: fmt.Sprintf("slug %q is already taken", slug),
		Fields:  []linkforge.FieldError{{Field: "slug", Detail: "is already taken"}},
		Err:     cause,
	}
}
