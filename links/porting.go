package links

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/internal/httpproblem"
	"github.com/linkforge/linkforge/password"
	"github.com/linkforge/linkforge/porting"
)

// peerAnnounceLimit bounds the links of one import announced to the
// other nodes and to the dashboards: past it, the other nodes' negative
// cache entries (5 s) expire by themselves, rather than a flood filling
// the cluster bus's queue, and a dashboard learns of the rest when it
// reloads its list, rather than a flood overrunning its viewers' send
// queues (which would disconnect them). This node's cache hears of every
// link.
const peerAnnounceLimit = 1000

// ImportOptions are an import's settings beyond its file.
type ImportOptions struct {
	// PasswordLimit is the highest cost of a password_hash of the file
	// (porting.Options.PasswordLimit; zero: password.DefaultParams).
	PasswordLimit password.Params
	// Progress, if set, is called after each batch (porting.Options).
	Progress func()
	// Tenant, with a tenantID of 0, makes the tenant at the first link
	// written (porting.Options.Tenant): `linkforge import` into a new
	// tenant creates none for a refused file.
	Tenant func(context.Context) (int64, error)
	// DomainMap maps the file's hosts (porting.ParseDomainMap). Each
	// TO is resolved before the file is read: a host the tenant lacks
	// refuses the import whole, with nothing read.
	DomainMap map[string]string
	// Slug is the link of a per-visit file's lines that name none
	// (porting.HistoryOptions.Slug).
	Slug string
	// Now is the clock of a per-visit import's retention window; nil:
	// time.Now.
	Now func() time.Time
}

// Import imports the file r, in format f, into the tenant (porting.Import:
// the same rules and validation whether through the API or the CLI), and
// runs the effects of each batch written: every new slug dropped from this
// node's cache, the first peerAnnounceLimit of them from the other nodes'
// and shown on the dashboards, and the scheduler told of the batch's
// earliest expiry.
func (s *Service) Import(ctx context.Context, tenantID int64, f porting.Format, r io.Reader, o ImportOptions) (porting.Result, error) {
	created := 0
	var resolve func(string) (int64, error)
	if s.domain != nil {
		// A tenant still to be made (tenantID 0) has no domains: the
		// resolver finds none of its hosts, as it should.
		resolve = func(host string) (int64, error) { return s.domain(ctx, tenantID, host) }
	}
	if resolve != nil {
		for _, to := range o.DomainMap {
			if to == "" {
				continue
			}
			if _, err := resolve(to); err != nil {
				if linkforge.ErrorCode(err) == linkforge.EInvalid {
					return porting.Result{Errors: []porting.LineError{}}, linkforge.InvalidField("domain_map", fmt.Sprintf(
						"maps to %s, which is not a verified domain of this tenant (an empty TO is the public host)", to))
				}
				return porting.Result{Errors: []porting.LineError{}}, fmt.Errorf("import: domain map: %w", err)
			}
		}
	}
	if f.History() {
		return s.importHistory(ctx, tenantID, f, r, o, resolve)
	}
	var tenant func() (int64, error)
	if o.Tenant != nil {
		tenant = func() (int64, error) { return o.Tenant(ctx) }
	}
	return porting.Import(ctx, s.store, f, r, porting.Options{
		Domain:        resolve,
		TenantID:      tenantID,
		Tenant:        tenant,
		DomainMap:     o.DomainMap,
		SelfHosts:     s.self(ctx),
		Targets:       s.targets,
		PasswordLimit: o.PasswordLimit,
		Progress:      o.Progress,
		Created: func(links []linkforge.Link) {
			for i := range links {
				if s.cache != nil {
					s.cache.Invalidate(links[i].DomainID, links[i].Slug)
				}
				if created < peerAnnounceLimit {
					if s.peers != nil {
						s.peers.Invalidate(links[i].DomainID, links[i].Slug)
						s.peers.PublishImported(ctx, links[i])
					}
					if s.publisher != nil {
						s.publisher.PublishImported(ctx, links[i])
					}
				}
				created++
			}
			s.reschedule(porting.EarliestExpiry(links))
		},
	})
}

// importHistory loads a per-visit file into the click history of the
// tenant's links (porting.ImportVisits). Nothing of a link changes but
// its counts, so no cache or feed hears of it.
func (s *Service) importHistory(ctx context.Context, tenantID int64, f porting.Format, r io.Reader, o ImportOptions,
	resolve func(string) (int64, error)) (porting.Result, error) {
	none := porting.Result{Errors: []porting.LineError{}, Notes: []porting.LineError{}}
	hs, ok := s.store.(porting.HistoryStore)
	if !ok {
		return none, fmt.Errorf("import: %T keeps no click history", s.store)
	}
	if tenantID == 0 {
		// `linkforge import` into a tenant it would make: there are no
		// links for the visits.
		return none, linkforge.InvalidField("tenant", "does not exist yet: import its links first, then their visits")
	}
	return porting.ImportVisits(ctx, hs, f, r, porting.HistoryOptions{
		TenantID: tenantID, Domain: resolve, DomainMap: o.DomainMap, Slug: o.Slug,
		Minutes: s.retention.Minutes, Hours: s.retention.Hours, Progress: o.Progress, Now: o.Now,
	})
}

// exportLinkJSON is an element of the JSON export: the link as the API
// returns it, plus the stored hash of its password, so that an import of
// the file keeps the link protected. The API's own answers never carry it.
type exportLinkJSON struct {
	JSON
	PasswordHash string `json:"password_hash,omitempty"`
}

// Export writes every link of the tenant to w in format f (csv or json),
// oldest first; the JSON's short_url is on Config.ShortBase. flush is
// called after each page (nil: never); the HTTP export flushes the
// connection there, `linkforge export` nothing. Nothing is written before
// the first page is read, so an error of that first read leaves w
// untouched.
func (s *Service) Export(ctx context.Context, w io.Writer, tenantID int64, f porting.Format, flush func() error) error {
	var (
		write func(*linkforge.Link) error
		end   func() error
		out   func() error // flushes the format's buffer
	)
	switch f {
	case porting.CSV:
		cw := porting.NewCSVWriterWithDomains(w, s.domainHost)
		write, end, out = cw.Write, cw.Close, cw.Flush
	case porting.JSON:
		jw := porting.NewJSONWriter(w, func(l *linkforge.Link) any {
			if s.baseOf != nil && l.DomainID != linkforge.PublicDomainID {
				return exportLinkJSON{RenderAt(*l, s.baseOf(*l)), l.PasswordHash}
			}
			j := Render(*l, s.shortBase)
			j.Domain = "" // the public host, whichever deployment imports it (domainHost)
			return exportLinkJSON{j, l.PasswordHash}
		})
		write, end, out = jw.Write, jw.Close, func() error { return nil }
	default:
		return linkforge.InvalidField("format", "must be csv or json")
	}
	n := 0
	for l, err := range porting.Links(ctx, s.store, tenantID, porting.ExportPageSize) {
		if err != nil {
			return err
		}
		if err := write(&l); err != nil {
			return fmt.Errorf("export: write: %w", err)
		}
		if n++; n%porting.ExportPageSize == 0 {
			if err := out(); err != nil {
				return fmt.Errorf("export: write: %w", err)
			}
			if flush != nil {
				if err := flush(); err != nil {
					return fmt.Errorf("export: flush: %w", err)
				}
			}
		}
	}
	if err := end(); err != nil {
		return fmt.Errorf("export: write: %w", err)
	}
	if flush != nil {
		return flush()
	}
	return nil
}

// domainHost is the host of l's domain as the export writes it, and ""
// for the public host: the import of LinkForge's own files puts an empty
// domain on the public host of the deployment that reads it (not on the
// tenant's default domain), where the source's public host name was
// refused by every other deployment. An older export's public host is
// mapped with domain_map.
func (s *Service) domainHost(l *linkforge.Link) string {
	if s.baseOf != nil && l.DomainID != linkforge.PublicDomainID {
		return s.baseOf(*l).Host
	}
	return ""
}

// importJSON is the summary of an import.
type importJSON struct {
	Created int `json:"created"`
	Skipped int `json:"skipped"`
	// Failed counts every error line; Errors lists the first
	// porting.DefaultMaxErrors of them.
	Failed int             `json:"failed"`
	Errors []lineErrorJSON `json:"errors"`
	// Notes name, per created line, what the import left out of it (a
	// Shlink redirect rule LinkForge cannot express).
	Notes []lineNoteJSON `json:"notes"`
}

type lineNoteJSON struct {
	Line   int    `json:"line"`
	Field  string `json:"field"`
	Detail string `json:"detail"`
}

type lineErrorJSON struct {
	Line    int                 `json:"line"`
	Problem httpproblem.Problem `json:"problem"`
}

// Report is the JSON summary of an import: the same whether it ran
// through the API or `linkforge import`. Each failed line has the problem
// a single create would answer.
func Report(res porting.Result) any {
	out := importJSON{Created: res.Created, Skipped: res.Skipped, Failed: res.Failed, Errors: make([]lineErrorJSON, len(res.Errors))}
	for i, e := range res.Errors {
		out.Errors[i] = lineErrorJSON{Line: e.Line, Problem: httpproblem.Of(e.Err)}
	}
	out.Notes = []lineNoteJSON{}
	for _, n := range res.Notes {
		var ae *linkforge.Error
		if errors.As(n.Err, &ae) {
			for _, f := range ae.Fields {
				out.Notes = append(out.Notes, lineNoteJSON{Line: n.Line, Field: f.Field, Detail: f.Detail})
			}
		}
	}
	return out
}
