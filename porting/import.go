package porting

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/password"
	"github.com/linkforge/linkforge/rules"
)

// Store is what Import needs of a store. Both store/sqlite and
// store/postgres implement it.
type Store interface {
	// ImportLinks inserts links in one transaction, keeping their
	// CreatedAt, UpdatedAt and ImportedClicks, with the alarms of those
	// with an ExpiresAt; a slug in use answers EConflict and nothing is
	// inserted.
	ImportLinks(ctx context.Context, links []linkforge.Link) error
	// SlugTenants returns the tenant of each of slugs that is in use;
	// unused slugs are absent.
	SlugTenants(ctx context.Context, slugs []string) (map[string]int64, error)
	// DomainSlugs returns which of slugs are in use on the domain (a
	// tenant's own, so always that tenant's).
	DomainSlugs(ctx context.Context, domainID int64, slugs []string) (map[string]bool, error)
}

// Defaults of Options.
const (
	// DefaultBatchSize is the links written per transaction: large enough
	// that a transaction's cost is spread, small enough that one bad race
	// (a slug taken meanwhile) replays few links one by one.
	DefaultBatchSize = 500
	// DefaultMaxErrors bounds the error lines a Result lists: a file of a
	// million bad lines must not get an answer of hundreds of megabytes.
	// Result.Failed counts them all.
	DefaultMaxErrors = 1000
)

// slugAttempts bounds the retries of a generated slug that collides.
const slugAttempts = 5

// Options configure one Import.
type Options struct {
	TenantID int64
	// Tenant, when TenantID is 0, makes the tenant the links go to (the
	// CLI's import into a tenant it names for the first time). It is
	// called once, just before the first link is written, so that a file
	// refused whole, or whose every line fails, creates no tenant.
	Tenant func() (int64, error)
	// SelfHosts are the server's own hosts, for the redirect-loop check of
	// linkforge.ValidateTargetURL.
	SelfHosts []string
	// Targets is the operator's target blocklist: a line with a blocked
	// target is an error line (EBlockedTarget). nil: none.
	Targets linkforge.TargetPolicy
	// PasswordLimit is the highest argon2id cost a password_hash of the
	// file may have (zero: password.DefaultParams): a hash costlier than
	// the server's own would make each unlock attempt of the link costly.
	PasswordLimit password.Params
	BatchSize     int // 0: DefaultBatchSize
	MaxErrors     int // 0: DefaultMaxErrors
	// Created, if set, is called after each batch commits, with its links:
	// the web server drops their slugs from its cache and tells the expiry
	// scheduler about their alarms.
	Created func([]linkforge.Link)
	// Progress, if set, is called after each batch: the web server pushes
	// its write deadline on, so that a long import is not cut while it
	// makes progress.
	Progress func()
	// Domain resolves the host of a line's domain column or member (""
	// when it has none) to the tenant's domain id, as a create does; its
	// error fails the line. nil: every link goes on the public host.
	Domain func(host string) (int64, error)
	// DomainMap replaces the hosts of the file's domains before Domain
	// resolves them (ParseDomainMap): the file of another deployment or
	// shortener names hosts this tenant does not have (Shlink's own host,
	// an older export's public host). A host mapped to "" goes on the
	// public host.
	DomainMap map[string]string
}

// MaxDomainMap bounds the pairs of a domain map: a file names a few hosts.
const MaxDomainMap = 100

// ParseDomainMap reads the FROM=TO pairs of a domain map (the API's
// domain_map parameters, the CLI's --domain-map flags): FROM is a host of
// the file ("" for its lines that name none), TO a domain of the tenant,
// or "" for the public host. Hosts compare case-insensitively. The error
// is EInvalid naming the field "domain_map".
func ParseDomainMap(pairs []string) (map[string]string, error) {
	if len(pairs) > MaxDomainMap {
		return nil, linkforge.InvalidField("domain_map", fmt.Sprintf("has %d pairs; at most %d", len(pairs), MaxDomainMap))
	}
	m := make(map[string]string, len(pairs))
	for _, p := range pairs {
		from, to, ok := strings.Cut(p, "=")
		if !ok {
			return nil, linkforge.InvalidField("domain_map", fmt.Sprintf("%q is not FROM=TO (a host of the file, then a domain of the tenant or nothing for the public host)", truncate(p, 80)))
		}
		from, to = normHost(from), normHost(to)
		if _, dup := m[from]; dup {
			return nil, linkforge.InvalidField("domain_map", fmt.Sprintf("maps %q twice", truncate(from, 80)))
		}
		m[from] = to
	}
	return m, nil
}

// normHost is the form a domain map compares hosts in: a file's domain
// cell and a map's FROM match whatever their case or a trailing dot.
func normHost(h string) string {
	return strings.TrimSuffix(strings.ToLower(strings.TrimSpace(h)), ".")
}

// Result sums up an import. Every line of the file is in exactly one of
// Created, Skipped and Failed (rows of empty cells are not lines of links).
type Result struct {
	Created int
	Skipped int // the tenant had the slug already: left as it was
	Failed  int
	// Errors are the first MaxErrors failed lines, in file order.
	Errors []LineError
	// Notes are the first MaxErrors created lines of which something was
	// left out (Record.Notes), in the order their batches were written;
	// Err is an EInvalid *linkforge.Error naming what.
	Notes []LineError
}

// LineError is one line that was not imported. Err is a *linkforge.Error:
// EInvalid naming the file's column, or EConflict for a slug of another
// tenant.
type LineError struct {
	Line int
	Err  error
}

// pending is a valid record waiting for its batch.
type pending struct {
	line      int
	link      linkforge.Link
	notes     []linkforge.FieldError // Record.Notes
	generated bool                   // the slug was generated, not the file's
	dup       bool                   // an earlier record of the batch has the same slug
}

type importer struct {
	ctx   context.Context
	st    Store
	opt   Options
	res   Result
	batch []pending
	slugs map[linkKey]bool // the links of batch
	// column is the file's name for a link field.
	column func(string) string
	// domains caches Options.Domain's answers by host.
	domains map[string]domainAnswer
	// own: the file is LinkForge's own export, whose empty domain is the
	// public host (not the tenant's default domain, as for a file of
	// another shortener that names none).
	own bool
	// hosts are the file's host and line of each link, once a line
	// names a host: a short code on two hosts of the file that land on
	// one domain here is an error line, not a silent skip.
	hosts map[linkKey]hostLine
}

type hostLine struct {
	host string
	line int
}

// sameSlugElsewhere reports the error of rec, whose link an earlier line
// of the file gave on another host, and remembers rec's host.
func (im *importer) sameSlugElsewhere(rec Record) error {
	if rec.Domain == "" && im.hosts == nil {
		return nil
	}
	if im.hosts == nil {
		im.hosts = map[linkKey]hostLine{}
	}
	k := keyOf(rec.Link)
	if rec.Link.Slug == "" {
		return nil
	}
	prev, seen := im.hosts[k]
	if !seen {
		im.hosts[k] = hostLine{rec.Domain, rec.Line}
		return nil
	}
	if normHost(prev.host) == normHost(rec.Domain) {
		return nil
	}
	where := "no host"
	if prev.host != "" {
		where = truncate(prev.host, 80)
	}
	return linkforge.InvalidField(im.column(fDomain), fmt.Sprintf(
		"the short code %q is also on %s at line %d of this file, and both land on the same domain here; "+
			"map one of the hosts elsewhere with domain_map (linkforge import: --domain-map)", truncate(rec.Link.Slug, 80), where, prev.line))
}

// linkKey is a link's identity: a slug is unique per domain.
type linkKey struct {
	domain int64
	slug   string
}

func keyOf(l linkforge.Link) linkKey { return linkKey{l.DomainID, l.Slug} }

type domainAnswer struct {
	id  int64
	err error
}

// domainOf resolves a line's domain host, once per host of the file.
func (im *importer) domainOf(host string) (int64, error) {
	if im.opt.Domain == nil {
		return linkforge.PublicDomainID, nil
	}
	a, ok := im.domains[host]
	if !ok {
		a.id, a.err = im.resolve(host)
		im.domains[host] = a
	}
	return a.id, a.err
}

// resolve maps host (Options.DomainMap) and resolves it.
func (im *importer) resolve(host string) (int64, error) {
	to, mapped := im.opt.DomainMap[normHost(host)]
	switch {
	case mapped && to == "":
		return linkforge.PublicDomainID, nil
	case mapped:
		return im.opt.Domain(to)
	case host == "" && im.own:
		return linkforge.PublicDomainID, nil
	}
	id, err := im.opt.Domain(host)
	if linkforge.ErrorCode(err) == linkforge.EInvalid && host != "" {
		// The file comes from elsewhere: say how to bring its host here.
		return 0, linkforge.InvalidField(fDomain, detailOf(err)+
			fmt.Sprintf("; map it with domain_map %s=TO (linkforge import: --domain-map), TO a domain of the tenant or empty for the public host", truncate(host, 80)))
	}
	return id, err
}

// Import reads a file of format f from r and writes its links to the
// tenant of opt. Lines are applied as if one after the other: a slug the
// tenant has (or an earlier line created) is skipped, a slug of another
// tenant is an EConflict line, a bad line an EInvalid line; none of them
// writes anything. The good lines are written in batches, one transaction
// each.
//
// The error is about the file as a whole (its header, or it is not a JSON
// array), with nothing written; or the store failed, and the Result says
// what was written before. A file that breaks off in the middle (malformed
// JSON, a body over the server's limit) ends the import with an error line
// at the place it broke; what came before is imported.
func Import(ctx context.Context, st Store, f Format, r io.Reader, opt Options) (Result, error) {
	p, err := NewParser(f, r)
	if err != nil {
		return Result{Errors: []LineError{}}, err
	}
	if opt.BatchSize <= 0 {
		opt.BatchSize = DefaultBatchSize
	}
	if opt.MaxErrors <= 0 {
		opt.MaxErrors = DefaultMaxErrors
	}
	if opt.PasswordLimit == (password.Params{}) {
		opt.PasswordLimit = password.DefaultParams
	}
	im := &importer{ctx: ctx, st: st, opt: opt, slugs: map[linkKey]bool{}, column: p.Column,
		domains: map[string]domainAnswer{}, own: f == CSV || f == JSON}
	im.res.Errors, im.res.Notes = []LineError{}, []LineError{}
	last := 0
	for {
		rec, err := p.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			var ae *linkforge.Error
			if !errors.As(err, &ae) {
				// The body failed (a network error): nothing to tell the
				// client, who is gone. What was read is written.
				if ferr := im.flush(); ferr != nil {
					return im.res, ferr
				}
				return im.res, fmt.Errorf("import: read: %w", err)
			}
			// The rest of the file cannot be read: the lines so far are
			// written, and the break is an error line.
			if ferr := im.flush(); ferr != nil {
				return im.res, ferr
			}
			im.fail(last+1, &linkforge.Error{Code: ae.Code, Message: ae.Message + "; the rest of the file was not read", Fields: ae.Fields, Err: ae.Err})
			return im.res, nil
		}
		last = rec.Line
		if rec.Err == nil {
			rec.Err = renameFields(validate(&rec.Link, opt), p.Column)
		}
		if rec.Err != nil {
			im.fail(rec.Line, rec.Err)
			continue
		}
		if rec.Link.DomainID, err = im.domainOf(rec.Domain); err != nil {
			if linkforge.ErrorCode(err) != linkforge.EInvalid {
				return im.res, fmt.Errorf("import: domain %q: %w", rec.Domain, err)
			}
			im.fail(rec.Line, linkforge.InvalidField(p.Column(fDomain), detailOf(err)))
			continue
		}
		if err := im.sameSlugElsewhere(rec); err != nil {
			im.fail(rec.Line, err)
			continue
		}
		if err := im.add(rec); err != nil {
			return im.res, err
		}
	}
	if err := im.flush(); err != nil {
		return im.res, err
	}
	return im.res, nil
}

// tenant returns the tenant the links go to, making it (Options.Tenant) at
// the first write.
func (im *importer) tenant() (int64, error) {
	if im.opt.TenantID != 0 || im.opt.Tenant == nil {
		return im.opt.TenantID, nil
	}
	id, err := im.opt.Tenant()
	if err != nil {
		return 0, fmt.Errorf("import: make the tenant: %w", err)
	}
	im.opt.TenantID = id
	return id, nil
}

// write inserts links, each set on the tenant (made now if it is the
// first write of an import into a new tenant).
func (im *importer) write(links []linkforge.Link) error {
	if len(links) == 0 {
		return nil
	}
	id, err := im.tenant()
	if err != nil {
		return err
	}
	for i := range links {
		links[i].TenantID = id
	}
	return im.st.ImportLinks(im.ctx, links)
}

// validate normalizes and checks a parsed link as a create would (the slug
// was checked by the parser), and checks its password hash.
func validate(l *linkforge.Link, opt Options) error {
	l.Tags = linkforge.NormalizeTags(l.Tags)
	err := rules.Validate(l, opt.SelfHosts)
	if err == nil {
		err = linkforge.CheckTargets(l, opt.Targets)
	}
	if l.PasswordHash == "" {
		return err
	}
	herr := password.Check(l.PasswordHash, opt.PasswordLimit)
	if herr == nil {
		return err
	}
	detail := "is not an argon2id hash this server can verify (" + herr.Error() + "); the import takes the password_hash of a LinkForge export"
	if errors.Is(herr, password.ErrTooCostly) {
		detail = "costs more to verify than this server's own hashes (" + herr.Error() + "); set the password through the API instead"
	}
	var fields []linkforge.FieldError
	var ae *linkforge.Error
	if errors.As(err, &ae) {
		fields = ae.Fields
	}
	return linkforge.InvalidFields(append(fields, linkforge.FieldError{Field: "password_hash", Detail: detail}))
}

func (im *importer) fail(line int, err error) {
	im.res.Failed++
	if len(im.res.Errors) < im.opt.MaxErrors {
		im.res.Errors = append(im.res.Errors, LineError{Line: line, Err: err})
	}
}

// note reports what was left out of p, a line just created.
func (im *importer) note(p pending) {
	if len(p.notes) > 0 && len(im.res.Notes) < im.opt.MaxErrors {
		im.res.Notes = append(im.res.Notes, LineError{Line: p.line, Err: &linkforge.Error{Code: linkforge.EInvalid,
			Message: "imported without what LinkForge cannot express", Fields: p.notes}})
	}
}

func (im *importer) add(rec Record) error {
	p := pending{line: rec.Line, link: rec.Link, notes: rec.Notes}
	p.link.TenantID = im.opt.TenantID
	if p.link.Slug == "" {
		p.generated = true
		p.link.Slug = linkforge.NewSlug()
	}
	p.dup = im.slugs[keyOf(p.link)]
	im.slugs[keyOf(p.link)] = true
	im.batch = append(im.batch, p)
	if len(im.batch) >= im.opt.BatchSize {
		return im.flush()
	}
	return nil
}

// flush writes the batch: the slugs in use are looked up in one query,
// the rest inserted in one transaction. If a slug was taken between the
// two (a concurrent create), the batch is replayed one link at a time.
func (im *importer) flush() error {
	batch := im.batch
	im.batch = im.batch[:0:0]
	clear(im.slugs)
	if len(batch) == 0 {
		return nil
	}
	defer func() {
		if im.opt.Progress != nil {
			im.opt.Progress()
		}
	}()
	owners, err := im.takenSlugs(batch)
	if err != nil {
		return err
	}
	// outcome per record: 0 to insert, else skipped or failed already.
	insert := make([]linkforge.Link, 0, len(batch))
	type verdict int
	const (
		toInsert verdict = iota
		skip
		conflict
	)
	verdicts := make([]verdict, len(batch))
	for i, p := range batch {
		switch owner, taken := owners[keyOf(p.link)]; {
		case p.dup:
			// An earlier line of the batch creates it (or found it the
			// tenant's, or another tenant's: the same verdict).
			verdicts[i] = verdicts[firstWith(batch[:i], keyOf(p.link))]
			if verdicts[i] == toInsert {
				verdicts[i] = skip
			}
		case taken && owner == im.opt.TenantID && !p.generated:
			verdicts[i] = skip
		case taken && !p.generated:
			verdicts[i] = conflict
		case taken:
			// A generated slug collided: rare; the one-by-one path
			// retries it with another.
			return im.oneByOne(batch)
		default:
			insert = append(insert, p.link)
		}
	}
	err = im.write(insert)
	if code := linkforge.ErrorCode(err); code == linkforge.EConflict || code == linkforge.EQuotaExceeded || code == linkforge.ENotFound {
		// One by one, the links within the tenant's max_links are
		// created and the others are error lines; so are the lines of
		// a domain deleted since it was resolved (ENotFound).
		return im.oneByOne(batch)
	}
	if err != nil {
		return fmt.Errorf("import: write links: %w", err)
	}
	for i, p := range batch {
		switch verdicts[i] {
		case toInsert:
			im.note(p)
		case skip:
			im.res.Skipped++
		case conflict:
			im.fail(p.line, slugTaken(p.link.Slug, im.column(fSlug)))
		}
	}
	im.res.Created += len(insert)
	if len(insert) > 0 && im.opt.Created != nil {
		im.opt.Created(insert)
	}
	return nil
}

// takenSlugs returns the owner of each link of batch whose slug is in use
// on its domain: one query for the public host, one per other domain.
func (im *importer) takenSlugs(batch []pending) (map[linkKey]int64, error) {
	byDomain := map[int64][]string{}
	for _, p := range batch {
		if !p.dup {
			byDomain[p.link.DomainID] = append(byDomain[p.link.DomainID], p.link.Slug)
		}
	}
	owners := map[linkKey]int64{}
	for domain, slugs := range byDomain {
		if domain == linkforge.PublicDomainID {
			taken, err := im.st.SlugTenants(im.ctx, slugs)
			if err != nil {
				return nil, fmt.Errorf("import: look up slugs: %w", err)
			}
			for s, t := range taken {
				owners[linkKey{domain, s}] = t
			}
			continue
		}
		taken, err := im.st.DomainSlugs(im.ctx, domain, slugs)
		if err != nil {
			return nil, fmt.Errorf("import: look up slugs: %w", err)
		}
		for s := range taken {
			owners[linkKey{domain, s}] = im.opt.TenantID // the tenant's own domain
		}
	}
	return owners, nil
}

// domainGone is the error of a line whose domain was deleted after the
// import resolved it (the store found no such domain at the write); the
// later lines of that domain get it without a write.
func (im *importer) domainGone(id int64) error {
	err := linkforge.InvalidField(im.column(fDomain), "names a domain that was deleted while the import ran")
	for host, a := range im.domains {
		if a.err == nil && a.id == id {
			im.domains[host] = domainAnswer{err: err}
		}
	}
	return err
}

func firstWith(batch []pending, k linkKey) int {
	for i, p := range batch {
		if keyOf(p.link) == k {
			return i
		}
	}
	return 0
}

// oneByOne writes a batch a link at a time, each in its own transaction,
// deciding each conflict as it comes: the slow path of a race.
func (im *importer) oneByOne(batch []pending) error {
	var created []linkforge.Link
	for _, p := range batch {
		l := p.link
		var err error
		for attempt := 0; ; attempt++ {
			err = im.write([]linkforge.Link{l})
			if !p.generated || linkforge.ErrorCode(err) != linkforge.EConflict || attempt == slugAttempts {
				break
			}
			l.Slug = linkforge.NewSlug()
		}
		l.TenantID = im.opt.TenantID
		switch linkforge.ErrorCode(err) {
		case "":
			im.res.Created++
			created = append(created, l)
			im.note(p)
		case linkforge.EConflict:
			owners, lerr := im.takenSlugs([]pending{{link: l}})
			if lerr != nil {
				return lerr
			}
			if owner, ok := owners[keyOf(l)]; ok && owner == im.opt.TenantID && !p.generated {
				im.res.Skipped++
			} else {
				im.fail(p.line, slugTaken(l.Slug, im.column(fSlug)))
			}
		case linkforge.EQuotaExceeded:
			im.fail(p.line, err)
		case linkforge.ENotFound:
			if l.DomainID == linkforge.PublicDomainID {
				return fmt.Errorf("import: write link: %w", err)
			}
			im.fail(p.line, im.domainGone(l.DomainID))
		default:
			return fmt.Errorf("import: write link: %w", err)
		}
	}
	if len(created) > 0 && im.opt.Created != nil {
		im.opt.Created(created)
	}
	return nil
}

// slugTaken is the error of a slug another tenant has: the 409 a create
// answers.
func slugTaken(slug, column string) error {
	return &linkforge.Error{
		Code:    linkforge.EConflict,
		Message: fmt.Sprintf("slug %q is already taken", slug),
		Fields:  []linkforge.FieldError{{Field: column, Detail: "is already taken"}},
	}
}

// EarliestExpiry returns the earliest ExpiresAt of links, or nil: the
// scheduler needs to hear only of the first alarm of a batch.
func EarliestExpiry(links []linkforge.Link) *time.Time {
	var first *time.Time
	for i := range links {
		if e := links[i].ExpiresAt; e != nil && (first == nil || e.Before(*first)) {
			first = e
		}
	}
	return first
}
