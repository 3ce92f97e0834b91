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
)

// The per-visit formats: one line a visit, loaded into a link's click
// history (ImportVisits) rather than creating links.
//
//   - ShlinkVisits: the Shlink web client's visits export (its
//     ReportExporter writes the NormalizedVisit objects of
//     shlink-web-component's visits/types as CSV: date, userAgent,
//     referer, country (a name), region, city, latitude, longitude,
//     potentialBot, visitedUrl, browser, os), or the REST API's JSON (GET
//     /rest/v3/short-urls/{shortCode}/visits: {"visits":{"data":[...]}},
//     each visit with referer, date, userAgent, visitLocation.countryCode,
//     potentialBot and, since Shlink 4.1, visitedUrl). The visited URL's
//     path is the short code, its host the domain.
//   - YOURLSLog: YOURLS' yourls_log table (click_id, click_time, shorturl,
//     referrer, user_agent, ip_address, country_code; YOURLS'
//     includes/functions-install.php), with or without that header, as
//     phpMyAdmin or `mysql -B` export it. The address is never read.
//   - DubEvents: Dub's click events export (apps/web/app/api/events/export:
//     the columns chosen, titled by capitalizing their names, "Date" for
//     the timestamp; Link is domain/key, Country a name).
const (
	ShlinkVisits Format = "shlink-visits"
	YOURLSLog    Format = "yourls-log"
	DubEvents    Format = "dub-events"
)

// History reports whether f is a per-visit format (ImportVisits).
func (f Format) History() bool { return f == ShlinkVisits || f == YOURLSLog || f == DubEvents }

// Visit is one visit read from a file.
type Visit struct {
	// Line is as Record.Line.
	Line int
	// Slug and Domain name the link: its short code and the host of its
	// domain as the file writes them ("": none given).
	Slug, Domain string
	At           time.Time
	// UserAgent, when the file has one, is classified as a live click's
	// (device, browser, OS, and automated traffic); it is never stored.
	UserAgent string
	// Device, Browser and OS are the file's own classification, used
	// when it has no user agent (Dub's export).
	Device, Browser, OS string
	// Referrer is the Referer the visit came with (a URL or a host).
	Referrer string
	// Country is a code or an English name.
	Country string
	// Query is the visited URL's query, whose utm_source is counted.
	Query string
	// Bot: the file marks the visit a program's (Shlink's potentialBot).
	Bot bool
	// Err, when not nil, is why the line is not counted.
	Err error
}

// visitParser reads a per-visit file one visit at a time; Next returns
// io.EOF after the last.
type visitParser interface {
	Next() (Visit, error)
}

func newVisitParser(f Format, r io.Reader) (visitParser, error) {
	switch f {
	case ShlinkVisits:
		br := bufio.NewReader(r)
		if shlinkIsJSON(br) {
			return newShlinkVisitsJSON(br)
		}
		return newVisitCSV(visitSpecs[f], br)
	case YOURLSLog, DubEvents:
		return newVisitCSV(visitSpecs[f], r)
	}
	return nil, linkforge.InvalidField("format", fmt.Sprintf("%q is not a per-visit format", truncate(string(f), 32)))
}

// The fields of a visit a column fills.
const (
	vTime      = "time"
	vShortURL  = "short_url" // a short URL or host/path: slug and domain
	vSlug      = "slug"
	vAgent     = "user_agent"
	vReferrer  = "referrer"
	vCountry   = "country"
	vBot       = "bot"
	vDevice    = "device"
	vBrowser   = "browser"
	vOS        = "os"
	vEvent     = "event"
	vIgnored   = ""
	vRefererTo = "referer_url"
)

// visitSpec is a per-visit CSV dialect.
type visitSpec struct {
	format     Format
	columns    map[string]string // normHeader names to fields
	required   []string
	positional []string // a file without a header row (YOURLS)
	want       string   // the columns, for the header error
}

var visitSpecs = map[Format]*visitSpec{
	ShlinkVisits: {
		format: ShlinkVisits,
		columns: map[string]string{
			"date": vTime, "useragent": vAgent, "referer": vReferrer, "country": vCountry,
			"potentialbot": vBot, "visitedurl": vShortURL, "shortcode": vSlug,
			"browser": vIgnored, "os": vIgnored, "region": vIgnored, "city": vIgnored,
		},
		required: []string{vTime},
		want:     "date, userAgent, referer, country, potentialBot and visitedUrl (Shlink 4.1 or later)",
	},
	YOURLSLog: {
		format: YOURLSLog,
		columns: map[string]string{
			"clickid": vIgnored, "clicktime": vTime, "shorturl": vSlug, "referrer": vReferrer,
			"useragent": vAgent, "ipaddress": vIgnored, "countrycode": vCountry,
		},
		required:   []string{vTime, vSlug},
		positional: []string{vIgnored, vTime, vSlug, vReferrer, vAgent, vIgnored, vCountry},
		want:       "click_id,click_time,shorturl,referrer,user_agent,ip_address,country_code",
	},
	DubEvents: {
		format: DubEvents,
		columns: map[string]string{
			"date": vTime, "timestamp": vTime, "link": vShortURL, "event": vEvent, "trigger": vEvent,
			"country": vCountry, "device": vDevice, "browser": vBrowser, "os": vOS,
			"referer": vReferrer, "refererurl": vRefererTo, "ua": vAgent, "useragent": vAgent,
		},
		required: []string{vTime, vShortURL},
		want:     "Date and Link (and Country, Device, Browser, OS, Referer)",
	},
}

type visitCSV struct {
	spec      *visitSpec
	r         *csv.Reader
	lim       *recordLimit
	cols      []string
	names     map[string]string
	size      int
	first     []string
	firstLine int
}

func newVisitCSV(spec *visitSpec, r io.Reader) (*visitCSV, error) {
	br := bufio.NewReader(r)
	if b, err := br.Peek(3); err == nil && string(b) == "\uFEFF" {
		_, _ = br.Discard(3)
	}
	lim := newRecordLimit(br)
	cr := csv.NewReader(lim)
	cr.FieldsPerRecord = -1
	p := &visitCSV{spec: spec, r: cr, lim: lim, names: map[string]string{}}
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
	if spec.positional != nil && len(header) > 0 {
		if _, known := spec.columns[normHeader(header[0])]; !known {
			p.first, p.firstLine = append([]string(nil), header...), 1
			p.cols, p.size = spec.positional, len(spec.positional)
			return p, nil
		}
	}
	p.cols = make([]string, len(header))
	for i, h := range header {
		f := spec.columns[normHeader(h)]
		if f == vIgnored {
			continue
		}
		if prev, dup := p.names[f]; dup {
			return nil, linkforge.InvalidField("header", fmt.Sprintf("columns %q and %q both give the %s", truncate(prev, 40), truncate(h, 40), f))
		}
		p.cols[i], p.names[f] = f, strings.TrimSpace(strings.TrimPrefix(h, "\uFEFF"))
	}
	for _, f := range spec.required {
		if _, ok := p.names[f]; !ok {
			return nil, linkforge.InvalidField("header", fmt.Sprintf("has no %s column; the %s format needs %s", f, spec.format, spec.want))
		}
	}
	p.size = len(header)
	return p, nil
}

// column is the file's name of a field, for errors.
func (p *visitCSV) column(f string) string {
	if n := p.names[f]; n != "" {
		return n
	}
	return f
}

func (p *visitCSV) Next() (Visit, error) {
	for {
		var (
			row  []string
			line int
		)
		if p.first != nil {
			row, line, p.first = p.first, p.firstLine, nil
		} else {
			var err error
			row, err = p.r.Read()
			p.lim.start(p.r.InputOffset())
			if err != nil {
				var pe *csv.ParseError
				if errors.As(err, &pe) {
					return Visit{Line: pe.StartLine, Err: linkforge.InvalidField("line",
						fmt.Sprintf("is not valid CSV (line %d, column %d): %v", pe.Line, pe.Column, pe.Err))}, nil
				}
				return Visit{}, err
			}
			line, _ = p.r.FieldPos(0)
		}
		if blank(row) {
			continue
		}
		return p.visit(row, line), nil
	}
}

func (p *visitCSV) visit(row []string, line int) Visit {
	v := Visit{Line: line}
	if len(row) != p.size {
		v.Err = linkforge.InvalidField("line", fmt.Sprintf("has %d fields; the header has %d", len(row), p.size))
		return v
	}
	var fe []linkforge.FieldError
	for i, cell := range row {
		if detail := v.set(p.cols[i], cell); detail != "" {
			fe = append(fe, linkforge.FieldError{Field: p.column(p.cols[i]), Detail: detail})
		}
	}
	v.Err = linkforge.InvalidFields(fe)
	return v
}

// set reads one cell into v, or says why it cannot.
func (v *Visit) set(field, cell string) string {
	cell = strings.TrimSpace(cell)
	switch field {
	case vTime:
		t, err := parseTime(cell)
		if err != nil {
			return err.Error()
		}
		v.At = t
	case vShortURL:
		if cell == "" {
			return ""
		}
		return v.setShortURL(cell)
	case vSlug:
		v.Slug = cell
	case vAgent:
		v.UserAgent = cell
	case vReferrer, vRefererTo:
		// YOURLS writes "direct", Dub "(direct)" for none; a
		// referer_url, when present, is the more precise one.
		if cell != "" && cell != "direct" && cell != "(direct)" && (field == vRefererTo || v.Referrer == "") {
			v.Referrer = cell
		}
	case vCountry:
		v.Country = cell
	case vBot:
		v.Bot = strings.EqualFold(cell, "true") || cell == "1"
	case vDevice:
		v.Device = cell
	case vBrowser:
		v.Browser = cell
	case vOS:
		v.OS = cell
	case vEvent:
		// Dub's export of clicks says "Link click" or "QR scan"; a
		// lead or sale export is not a click history.
		if cell != "" && !strings.EqualFold(cell, "link click") && !strings.EqualFold(cell, "qr scan") {
			return fmt.Sprintf("is %q; only clicks (Link click, QR scan) are a click history", truncate(cell, 40))
		}
	}
	return ""
}

// setShortURL takes the short code and host out of a visited short URL
// ("https://s.test/abc?x=1", or Dub's "dub.sh/abc"), and its query.
func (v *Visit) setShortURL(cell string) string {
	s := cell
	if !strings.Contains(s, "://") {
		s = "https://" + s
	}
	u, err := url.Parse(s)
	if err != nil || u.Host == "" {
		return "is not a short URL such as https://s.test/abc123"
	}
	slug := strings.Trim(u.Path, "/")
	if slug == "" {
		return "has no short code after the domain"
	}
	v.Slug, v.Domain, v.Query = slug, u.Hostname(), u.RawQuery
	return ""
}

// newShlinkVisitsJSON reads to the visits' array: the top level, or
// visits.data of the API's answer.
func newShlinkVisitsJSON(br *bufio.Reader) (*shlinkVisitsJSON, error) {
	if b, _ := br.Peek(3); string(b) == "\xEF\xBB\xBF" {
		_, _ = br.Discard(3)
	}
	lim := newRecordLimit(br)
	dec := json.NewDecoder(lim)
	p := &shlinkVisitsJSON{dec: dec, lim: lim}
	tok, err := dec.Token()
	if err != nil {
		return nil, linkforge.InvalidField("body", "is not Shlink's JSON: "+err.Error())
	}
	if d, ok := tok.(json.Delim); ok && d == '[' {
		return p, nil
	}
	want := "a JSON array of Shlink's visits, or its API's {\"visits\":{\"data\":[...]}}"
	for _, member := range []string{"visits", "data"} {
		if err := enterMember(dec, member); err != nil {
			return nil, linkforge.InvalidField("body", "must be "+want)
		}
	}
	return p, nil
}

type shlinkVisitsJSON struct {
	dec   *json.Decoder
	lim   *recordLimit
	index int
	done  bool
}

// shlinkVisit is one visit of Shlink's API (ShlinkVisit of its OpenAPI
// document: referer, date, userAgent, visitLocation, potentialBot,
// visitedUrl).
type shlinkVisit struct {
	Referer       string `json:"referer"`
	Date          string `json:"date"`
	UserAgent     string `json:"userAgent"`
	PotentialBot  bool   `json:"potentialBot"`
	VisitedURL    string `json:"visitedUrl"`
	ShortCode     string `json:"shortCode"`
	VisitLocation *struct {
		CountryCode string `json:"countryCode"`
	} `json:"visitLocation"`
}

func (p *shlinkVisitsJSON) Next() (Visit, error) {
	if p.done {
		return Visit{}, io.EOF
	}
	p.lim.start(p.dec.InputOffset())
	if !p.dec.More() {
		// The rest (pagination, the closing brackets) is not read: the
		// visits are all there is to take.
		p.done = true
		return Visit{}, io.EOF
	}
	var raw json.RawMessage
	if err := p.dec.Decode(&raw); err != nil {
		p.done = true
		if isSyntax(err) {
			return Visit{}, linkforge.InvalidField("body", fmt.Sprintf("is not valid JSON after visit %d: %v", p.index, err))
		}
		return Visit{}, err
	}
	p.index++
	v := Visit{Line: p.index}
	var s shlinkVisit
	if json.Unmarshal(raw, &s) != nil {
		v.Err = linkforge.InvalidField("visit", "must be a Shlink visit object")
		return v, nil //nolint:nilerr // a bad element is an error line, and the next one is read
	}
	var fe []linkforge.FieldError
	if d := v.set(vTime, s.Date); d != "" {
		fe = append(fe, linkforge.FieldError{Field: "date", Detail: d})
	}
	if s.VisitedURL != "" {
		if d := v.setShortURL(s.VisitedURL); d != "" {
			fe = append(fe, linkforge.FieldError{Field: "visitedUrl", Detail: d})
		}
	}
	if s.ShortCode != "" {
		v.Slug = s.ShortCode
	}
	v.UserAgent, v.Bot = s.UserAgent, s.PotentialBot
	v.set(vReferrer, s.Referer)
	if s.VisitLocation != nil {
		v.Country = s.VisitLocation.CountryCode
	}
	v.Err = linkforge.InvalidFields(fe)
	return v, nil
}
