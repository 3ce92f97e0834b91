package porting

import (
	"bufio"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"strings"
	"time"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/rules"
)

// The link fields a CSV column can fill, by the names of LinkForge's own
// CSV header. A column of no interest maps to "".
const (
	fSlug      = "slug"
	fURL       = "url"
	fTitle     = "title"
	fTags      = "tags"
	fCreatedAt = "created_at"
	fExpiresAt = "expires_at"
	fMaxClicks = "max_clicks"
	fClicks    = "clicks"
	fFallback  = "fallback_url"
	fIOS       = "device_ios"
	fAndroid   = "device_android"
	fDesktop   = "device_desktop"
	// fHash is the stored argon2id hash of the link's password, which the
	// export writes so that a round trip keeps the link protected.
	fHash = "password_hash"
	// fPassword is a plaintext password: never taken, since an export
	// never holds one and a file of them is a leak waiting to happen.
	fPassword = "password"
	// fDomain is the host of the link's domain (Shlink's domain column).
	fDomain = "domain"
	// fLinkHost is a short link whose host is the link's domain when the
	// file has no domain column (Kutt's link, Rebrandly's shortUrl).
	fLinkHost = "short_link"
	// fSlugAlt is a second column naming the slug (Bitly's id beside its
	// link): read only when the file's slug column is absent or empty.
	fSlugAlt = "slug_alt"
	// The JSON export's other members, columns of the CSV too: the times
	// an import keeps when they are consistent, and the routing fields,
	// read by rules.DecodeField from their JSON (a number, a boolean, the
	// rules, variants and og as the API writes them).
	fUpdatedAt      = "updated_at"
	fExpiredAt      = "expired_at"
	fRedirectStatus = "redirect_status"
	fForwardQuery   = "forward_query"
	fRules          = "rules"
	fVariants       = "variants"
	fOG             = "og"
	fUTM            = "utm"
	fIgnored        = ""
)

// linkFields maps the names the link's validation gives fields to the CSV
// fields, where they differ, so that an error names the file's column.
var linkFields = map[string]string{
	"device_urls.ios": fIOS, "device_urls.android": fAndroid, "device_urls.desktop": fDesktop,
	"imported_clicks": fClicks,
}

// csvSpec describes one CSV dialect: which header names fill which field,
// and the dialect's habits.
type csvSpec struct {
	format Format
	// columns maps normalized header names (normHeader) to fields.
	// Columns not listed are ignored: spreadsheets grow notes columns.
	columns map[string]string
	// required are the fields the header must have a column for.
	required []string
	// positional, when not nil, are the fields of a file without a header
	// row, by position: YOURLS exports come both ways.
	positional []string
	// tagSep separates the tags in the tags cell.
	tagSep string
	// foreign dialects come from other shorteners: titles are cleaned
	// (cleanTitle) rather than refused.
	foreign bool
	// slug derives the slug from the slug column's cell; nil: the cell is
	// the slug. It returns a detail when the cell holds none.
	slug func(cell string) (string, string)
	// linkDomain: the slug column is a short link whose host is the
	// link's domain (Dub's "Short link").
	linkDomain bool
	// boolPassword: the password column says whether the link has one
	// (Kutt's password: false), never what it is.
	boolPassword bool
	// forwardQuery is the forward_query of every link of the format:
	// Shlink forwards the query unless told not to.
	forwardQuery bool
	// jsonNames are the file's names of the fields, for the errors of a
	// JSON file (whose members have no header to read them from).
	jsonNames map[string]string
}

// specs are the CSV dialects.
var specs = map[Format]*csvSpec{
	// LinkForge's export: the header of operation exportLinks (CSVHeader).
	CSV: {
		format: CSV,
		columns: map[string]string{
			"slug": fSlug, "url": fURL, "title": fTitle, "tags": fTags, "createdat": fCreatedAt,
			"expiresat": fExpiresAt, "maxclicks": fMaxClicks, "clicks": fClicks,
			"fallbackurl": fFallback, "deviceios": fIOS, "deviceandroid": fAndroid, "devicedesktop": fDesktop,
			"passwordhash": fHash, "password": fPassword, "domain": fDomain,
			"updatedat": fUpdatedAt, "expiredat": fExpiredAt, "redirectstatus": fRedirectStatus,
			"forwardquery": fForwardQuery, "rules": fRules, "variants": fVariants, "og": fOG,
			"utm": fUTM,
		},
		required: []string{fURL},
		tagSep:   "|",
	},
	// YOURLS' yourls_url table as the export plugins write it:
	// keyword,url,title,timestamp,ip,clicks, with or without that header.
	// The ip (of whoever created the link) is not kept.
	YOURLS: {
		format: YOURLS,
		columns: map[string]string{
			"keyword": fSlug, "url": fURL, "title": fTitle, "timestamp": fCreatedAt, "ip": fIgnored, "clicks": fClicks,
		},
		required:   []string{fSlug, fURL},
		positional: []string{fSlug, fURL, fTitle, fCreatedAt, fIgnored, fClicks},
		foreign:    true,
	},
	// The Shlink web client's "Export" CSV (createdAt, domain, shortCode,
	// shortUrl, longUrl, title, tags joined by "|", visits); the names of
	// Shlink's REST API and of `shlink short-url:list`'s table (shortCode,
	// longUrl, dateCreated, visitsCount; "Short code", "Date created", ...)
	// are read as the same columns.
	Shlink: {
		format: Shlink,
		columns: map[string]string{
			"shortcode": fSlug, "longurl": fURL, "title": fTitle, "tags": fTags,
			"createdat": fCreatedAt, "datecreated": fCreatedAt,
			"visits": fClicks, "visitscount": fClicks,
			"validuntil": fExpiresAt, "maxvisits": fMaxClicks,
			"domain": fDomain, "shorturl": fIgnored,
		},
		required:     []string{fSlug, fURL},
		tagSep:       "|",
		foreign:      true,
		forwardQuery: true,
	},
	// Bitly's CSV export: link (the short link, bit.ly/abc or
	// https://bit.ly/abc, whose path is the slug), long_url, title,
	// created, tags (comma-separated), and clicks when present. Files
	// made from its API's link objects (dev.bitly.com's BitlinkBody: link,
	// id "bit.ly/abc", long_url, title, created_at, tags) have both link
	// and id: link wins, id is read when link is empty.
	Bitly: {
		format: Bitly,
		columns: map[string]string{
			"link": fSlug, "bitlink": fSlug, "shortlink": fSlug, "id": fSlugAlt,
			"longurl": fURL, "title": fTitle, "created": fCreatedAt, "createdat": fCreatedAt,
			"tags": fTags, "clicks": fClicks, "totalclicks": fClicks, "engagements": fClicks,
		},
		required:  []string{fSlug, fURL},
		tagSep:    ",",
		foreign:   true,
		slug:      bitlySlug,
		jsonNames: map[string]string{fSlug: "link", fURL: "long_url", fCreatedAt: "created_at"},
	},
	// Dub's links export (apps/web/app/api/links/export: the columns
	// chosen, under their labels "Short link", "Destination URL", "Title",
	// "Clicks", "Created at", "Tags", or their ids link, url, title,
	// clicks, createdAt, tags). The short link's host is the domain.
	Dub: {
		format: Dub,
		columns: map[string]string{
			"shortlink": fSlug, "link": fSlug, "destinationurl": fURL, "url": fURL, "title": fTitle,
			"clicks": fClicks, "createdat": fCreatedAt, "tags": fTags, "linkid": fIgnored, "id": fIgnored,
			"updatedat": fUpdatedAt, "archived": fIgnored,
		},
		required:   []string{fSlug, fURL},
		tagSep:     ",",
		foreign:    true,
		slug:       bitlySlug,
		linkDomain: true,
	},
	// Kutt's links as its API lists them (GET /api/v2/links: {"data":
	// [...]}, each with id, address, target, description, link, password
	// (a boolean), banned, visit_count, created_at, updated_at,
	// expire_in; Kutt's server/utils sanitize.link), as JSON or the same
	// names as CSV columns. The short link's host is the domain.
	Kutt: {
		format: Kutt,
		columns: map[string]string{
			"address": fSlug, "target": fURL, "description": fTitle, "visitcount": fClicks,
			"createdat": fCreatedAt, "updatedat": fUpdatedAt, "expirein": fExpiresAt,
			"password": fPassword, "link": fLinkHost, "domain": fDomain, "id": fIgnored, "banned": fIgnored,
		},
		required:     []string{fSlug, fURL},
		foreign:      true,
		boolPassword: true,
		jsonNames: map[string]string{fSlug: "address", fURL: "target", fTitle: "description", fClicks: "visit_count",
			fCreatedAt: "created_at", fExpiresAt: "expire_in", fPassword: "password", fDomain: "link"},
	},
	// Rebrandly's links as its API lists them (GET /v1/links: an array of
	// objects with id, title, slashtag, destination, shortUrl, domainName
	// or domain.fullName, clicks, createdAt, updatedAt, tags), as JSON or
	// the same names as CSV columns.
	Rebrandly: {
		format: Rebrandly,
		columns: map[string]string{
			"slashtag": fSlug, "destination": fURL, "title": fTitle, "clicks": fClicks,
			"createdat": fCreatedAt, "updatedat": fUpdatedAt, "shorturl": fLinkHost,
			"domainname": fDomain, "domain.fullname": fDomain, "tags": fTags, "id": fIgnored,
		},
		required: []string{fSlug, fURL},
		tagSep:   ",",
		foreign:  true,
		jsonNames: map[string]string{fSlug: "slashtag", fURL: "destination", fClicks: "clicks",
			fCreatedAt: "createdAt", fDomain: "domainName"},
	},
}

// normHeader makes header names of different spellings compare equal:
// "Long URL", "long_url" and "longUrl" are all "longurl".
func normHeader(s string) string {
	s = strings.TrimSpace(strings.TrimPrefix(s, "\uFEFF"))
	var b strings.Builder
	for _, r := range strings.ToLower(s) {
		if r == ' ' || r == '_' || r == '-' {
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// bitlySlug takes the slug out of a Bitly link: the path of
// "https://bit.ly/3AbCdEf", "bit.ly/3AbCdEf" or a custom domain's link.
func bitlySlug(cell string) (string, string) {
	s := strings.TrimSpace(cell)
	if !strings.Contains(s, "://") {
		s = "https://" + s
	}
	u, err := url.Parse(s)
	if err != nil || u.Host == "" {
		return "", "is not a short link such as https://bit.ly/3AbCdEf"
	}
	p := strings.Trim(u.Path, "/")
	if p == "" {
		return "", "has no back-half after the domain, so it names no slug"
	}
	return p, ""
}

type csvParser struct {
	spec *csvSpec
	r    *csv.Reader
	// cols[i] is the field of column i; names[field] the header's own
	// name for it, which errors name.
	cols  []string
	names map[string]string
	// lim keeps each row within MaxRecordBytes.
	lim *recordLimit
	// first is the first row when the file has no header: it is a link.
	first      []string
	firstLine  int
	headerSize int
}

func newCSVParser(spec *csvSpec, r io.Reader) (*csvParser, error) {
	br := bufio.NewReader(r)
	// Spreadsheet programs start UTF-8 files with a byte order mark.
	if b, err := br.Peek(3); err == nil && string(b) == "\uFEFF" {
		br.Discard(3) //nolint:errcheck // the 3 bytes were just peeked, so discarding them cannot fail
	}
	lim := newRecordLimit(br)
	cr := csv.NewReader(lim)
	cr.FieldsPerRecord = -1
	p := &csvParser{spec: spec, r: cr, names: map[string]string{}, lim: lim}

	header, err := cr.Read()
	lim.start(cr.InputOffset())
	if errors.Is(err, io.EOF) {
		return nil, linkforge.InvalidField("body", "is empty; want a CSV file with a header row")
	}
	if err != nil {
		var pe *csv.ParseError
		if errors.As(err, &pe) {
			return nil, linkforge.InvalidField("header", "line 1 is not valid CSV: "+pe.Err.Error())
		}
		return nil, err
	}
	if spec.positional != nil && !p.isHeader(header) {
		p.first = append([]string(nil), header...)
		p.firstLine, _ = cr.FieldPos(0)
		p.cols = spec.positional
		for _, f := range spec.positional {
			if f != fIgnored {
				p.names[f] = f
			}
		}
		if spec.format == YOURLS {
			p.names[fSlug], p.names[fCreatedAt] = "keyword", "timestamp"
		}
		p.headerSize = len(spec.positional)
		return p, nil
	}

	p.cols = make([]string, len(header))
	for i, h := range header {
		f, ok := spec.columns[normHeader(h)]
		if !ok || f == fIgnored {
			continue
		}
		if prev, dup := p.names[f]; dup {
			return nil, linkforge.InvalidField("header", fmt.Sprintf("columns %q and %q both give the %s", truncate(prev, 40), truncate(h, 40), f))
		}
		p.cols[i] = f
		p.names[f] = strings.TrimSpace(strings.TrimPrefix(h, "\uFEFF"))
	}
	for _, f := range spec.required {
		if _, alt := p.names[fSlugAlt]; f == fSlug && alt {
			continue
		}
		if _, ok := p.names[f]; !ok {
			return nil, linkforge.InvalidField("header", fmt.Sprintf("has no %s column; the %s format needs %s", f, spec.format, wantColumns(spec)))
		}
	}
	p.headerSize = len(header)
	return p, nil
}

// isHeader reports whether row looks like the header of spec's format.
func (p *csvParser) isHeader(row []string) bool {
	return len(row) > 0 && p.spec.columns[normHeader(row[0])] != "" || (len(row) > 0 && normHeader(row[0]) == "keyword")
}

func wantColumns(spec *csvSpec) string {
	switch spec.format {
	case YOURLS:
		return "keyword,url,title,timestamp,ip,clicks"
	case Shlink:
		return "shortCode and longUrl (and title, tags, createdAt, visits)"
	case Bitly:
		return "link and long_url (and title, created, tags)"
	case Dub:
		return "Short link and Destination URL (and Title, Clicks, Created at, Tags)"
	case Kutt:
		return "address and target (and description, visit_count, created_at, link)"
	case Rebrandly:
		return "slashtag and destination (and title, clicks, createdAt, domainName)"
	}
	return strings.Join(CSVHeader, ",")
}

func (p *csvParser) Next() (Record, error) {
	for {
		var (
			row  []string
			line int
			err  error
		)
		if p.first != nil {
			row, line, p.first = p.first, p.firstLine, nil
		} else {
			row, err = p.r.Read()
			p.lim.start(p.r.InputOffset())
			if err != nil {
				var pe *csv.ParseError
				if errors.As(err, &pe) {
					return Record{Line: pe.StartLine, Err: linkforge.InvalidField("line",
						fmt.Sprintf("is not valid CSV (line %d, column %d): %v", pe.Line, pe.Column, pe.Err))}, nil
				}
				return Record{}, err // io.EOF, or the body failed
			}
			line, _ = p.r.FieldPos(0)
		}
		if blank(row) {
			// Spreadsheets end files with rows of empty cells.
			continue
		}
		return p.record(row, line), nil
	}
}

func blank(row []string) bool {
	for _, c := range row {
		if strings.TrimSpace(c) != "" {
			return false
		}
	}
	return true
}

// record turns one row into a link, or into the errors of its cells.
func (p *csvParser) record(row []string, line int) Record {
	rec := Record{Line: line, Link: linkforge.Link{Tags: []string{}}}
	if len(row) != p.headerSize {
		rec.Err = linkforge.InvalidField("line", fmt.Sprintf("has %d fields; the header has %d", len(row), p.headerSize))
		return rec
	}
	var fe []linkforge.FieldError
	var alt, linkHost, slugCell string
	slugSeen := false
	for i, cell := range row {
		if i >= len(p.cols) {
			break
		}
		if p.spec.format == CSV {
			cell = unquoteFormula(cell)
		}
		switch p.cols[i] {
		case fDomain:
			rec.Domain = strings.TrimSpace(cell)
			continue
		case fSlugAlt:
			alt = strings.TrimSpace(cell)
			continue
		case fLinkHost:
			linkHost = shortLinkHost(cell)
			continue
		case fSlug:
			slugCell, slugSeen = cell, true
			if p.spec.linkDomain {
				linkHost = shortLinkHost(cell)
			}
			continue
		}
		if detail := p.cell(&rec.Link, p.cols[i], cell); detail != "" {
			fe = append(fe, linkforge.FieldError{Field: p.Column(p.cols[i]), Detail: detail})
		}
	}
	// The slug last, once an alternative column (Bitly's id) is known.
	if slugSeen || alt != "" {
		field := fSlug
		if strings.TrimSpace(slugCell) == "" && alt != "" {
			slugCell, field = alt, fSlugAlt
		}
		if detail := p.cell(&rec.Link, fSlug, slugCell); detail != "" {
			fe = append(fe, linkforge.FieldError{Field: p.Column(field), Detail: detail})
		}
	}
	if rec.Domain == "" {
		rec.Domain = linkHost
	}
	if p.spec.forwardQuery {
		rec.Link.EditRouting().ForwardQuery = true
	}
	// As the JSON import does: updated_at is kept when it is not before
	// created_at, expired_at when it records the expiry the link has (its
	// alarm is then stored as done, not run again).
	l := &rec.Link
	if l.CreatedAt.IsZero() || l.UpdatedAt.Before(l.CreatedAt) {
		l.UpdatedAt = time.Time{}
	}
	if l.ExpiredAt != nil && (l.ExpiresAt == nil || l.ExpiredAt.Before(*l.ExpiresAt)) {
		l.ExpiredAt = nil
	}
	rec.Err = linkforge.InvalidFields(fe)
	return rec
}

// cell reads the cell of field into l, or returns why it cannot.
func (p *csvParser) cell(l *linkforge.Link, field, cell string) (detail string) {
	switch field {
	case fSlug:
		s := strings.TrimSpace(cell)
		if p.spec.slug != nil {
			if s, detail = p.spec.slug(s); detail != "" {
				return detail
			}
		}
		if s == "" && p.spec.format != CSV {
			return "is empty; every link of this format has one"
		}
		if s != "" {
			if err := linkforge.ValidateSlug(s); err != nil {
				return fmt.Sprintf("%q is not a valid LinkForge slug: %s", truncate(s, 80), detailOf(err))
			}
		}
		l.Slug = s
	case fURL:
		l.URL = strings.TrimSpace(cell)
	case fTitle:
		// LinkForge's own titles are checked as they are, with the
		// link (linkforge.ValidateTitle).
		l.Title = cell
		if p.spec.foreign {
			l.Title = cleanTitle(cell)
		}
	case fTags:
		l.Tags = splitTags(cell, p.spec.tagSep)
	case fCreatedAt, fExpiresAt, fUpdatedAt, fExpiredAt:
		if strings.TrimSpace(cell) == "" {
			return ""
		}
		t, err := parseTime(cell)
		if err != nil {
			return err.Error()
		}
		switch field {
		case fCreatedAt:
			l.CreatedAt = t
		case fExpiresAt:
			l.ExpiresAt = &t
		case fUpdatedAt:
			l.UpdatedAt = t
		default:
			l.ExpiredAt = &t
		}
	case fRedirectStatus, fForwardQuery, fRules, fVariants, fOG, fUTM:
		if strings.TrimSpace(cell) == "" {
			return "" // none: 302, false, no rules, variants or card
		}
		if fe := rules.DecodeField(field, json.RawMessage(cell), l); len(fe) > 0 {
			return fe[0].Detail
		}
	case fMaxClicks:
		if strings.TrimSpace(cell) == "" {
			return ""
		}
		n, err := parseCount(cell)
		if err != nil {
			return err.Error()
		}
		l.MaxClicks = &n
	case fClicks:
		n, err := parseClicks(cell)
		if err != nil {
			return err.Error()
		}
		l.ImportedClicks = n
	case fFallback:
		l.FallbackURL = strings.TrimSpace(cell)
	case fIOS:
		l.DeviceURLs.IOS = strings.TrimSpace(cell)
	case fAndroid:
		l.DeviceURLs.Android = strings.TrimSpace(cell)
	case fDesktop:
		l.DeviceURLs.Desktop = strings.TrimSpace(cell)
	case fHash:
		// Checked by Import, against the server's cost limit.
		l.PasswordHash = strings.TrimSpace(cell)
	case fPassword:
		if p.spec.boolPassword {
			switch strings.ToLower(strings.TrimSpace(cell)) {
			case "", "false", "0":
				return ""
			case "true", "1":
				return passwordUnknown
			}
		}
		if cell != "" {
			return plaintextRefused
		}
	}
	return ""
}

// passwordUnknown is the detail of a link another shortener protects with
// a password its files never carry.
const passwordUnknown = "the link has a password, which the file does not carry: " +
	"create it with its password through the API, or import it and set one"

// shortLinkHost returns the host of a short link cell ("https://kutt.it/abc",
// "rebrand.ly/abc"), "" when it has none.
func shortLinkHost(cell string) string {
	s := strings.TrimSpace(cell)
	if s == "" {
		return ""
	}
	if !strings.Contains(s, "://") {
		s = "https://" + s
	}
	u, err := url.Parse(s)
	if err != nil {
		return ""
	}
	return u.Hostname()
}

// Column returns the file's name for a link field, for error messages.
func (p *csvParser) Column(field string) string {
	if f, ok := linkFields[field]; ok {
		field = f
	}
	if n, ok := p.names[field]; ok && n != "" {
		return n
	}
	return field
}

// detailOf returns the detail of an EInvalid error's first field.
func detailOf(err error) string {
	var e *linkforge.Error
	if errors.As(err, &e) && len(e.Fields) > 0 {
		return e.Fields[0].Detail
	}
	return linkforge.ErrorMessage(err)
}

// renameFields rewrites the fields of an EInvalid error from LinkForge's
// names to the file's own column names, which the user can find.
func renameFields(err error, column func(string) string) error {
	var e *linkforge.Error
	if err == nil || !errors.As(err, &e) || e.Code != linkforge.EInvalid {
		return err
	}
	fields := make([]linkforge.FieldError, len(e.Fields))
	for i, f := range e.Fields {
		f.Field = column(f.Field)
		fields[i] = f
	}
	return linkforge.InvalidFields(fields)
}
