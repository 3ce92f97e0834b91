package porting

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/rules"
)

// jsonParser reads LinkForge's JSON export: one array of link objects as
// the API returns them. Elements are decoded one at a time, so the array
// is never held whole.
type jsonParser struct {
	dec   *json.Decoder
	lim   *recordLimit // keeps each element within MaxRecordBytes
	index int
	done  bool
	// decode reads one element (nil: decodeLink, LinkForge's own).
	decode func(json.RawMessage) Record
	// wrapped: the array is a member of an object (Shlink's API answer),
	// whose rest after the array is not read.
	wrapped bool
	// columns are the file's names of the fields it renames.
	columns map[string]string
}

func newJSONParser(r io.Reader) (*jsonParser, error) {
	lim := newRecordLimit(bufio.NewReader(r))
	dec := json.NewDecoder(lim)
	tok, err := dec.Token()
	if errors.Is(err, io.EOF) {
		return nil, linkforge.InvalidField("body", "is empty; want a JSON array of links")
	}
	if err != nil {
		if isSyntax(err) {
			return nil, linkforge.InvalidField("body", "is not JSON: "+err.Error())
		}
		return nil, err
	}
	if d, ok := tok.(json.Delim); !ok || d != '[' {
		return nil, linkforge.InvalidField("body", "must be a JSON array of links, as the export writes")
	}
	return &jsonParser{dec: dec, lim: lim}, nil
}

func isSyntax(err error) bool {
	var se *json.SyntaxError
	return errors.As(err, &se) || errors.Is(err, io.ErrUnexpectedEOF)
}

// Column is the file's name of field: the API's own for LinkForge's JSON.
func (p *jsonParser) Column(field string) string {
	if c, ok := p.columns[field]; ok {
		return c
	}
	return field
}

func (p *jsonParser) Next() (Record, error) {
	if p.done {
		return Record{}, io.EOF
	}
	p.lim.start(p.dec.InputOffset())
	if !p.dec.More() {
		if _, err := p.dec.Token(); err != nil { // the closing bracket
			return Record{}, p.streamError(err)
		}
		if p.wrapped {
			p.done = true
			return Record{}, io.EOF
		}
		if _, err := p.dec.Token(); !errors.Is(err, io.EOF) {
			p.done = true
			return Record{}, linkforge.InvalidField("body", fmt.Sprintf("has data after the array's closing bracket (after element %d)", p.index))
		}
		p.done = true
		return Record{}, io.EOF
	}
	var raw json.RawMessage
	if err := p.dec.Decode(&raw); err != nil {
		p.done = true
		return Record{}, p.streamError(err)
	}
	p.index++
	var rec Record
	if p.decode != nil {
		rec = p.decode(raw)
	} else {
		rec.Link, rec.Domain, rec.Err = decodeLink(raw)
	}
	rec.Line = p.index
	return rec, nil
}

// streamError turns a syntax error in the middle of the array into an
// EInvalid error: the rest of the file cannot be read.
func (p *jsonParser) streamError(err error) error {
	if isSyntax(err) {
		return linkforge.InvalidField("body", fmt.Sprintf("is not valid JSON after element %d: %v", p.index, err))
	}
	return err
}

// decodeLink reads one element: a link object as the API returns it. Keys
// match exactly and at most once. Members the import cannot set (id,
// short_url, updated_at's companions) and unknown ones are ignored, so that
// the export of a later version still imports.
func decodeLink(raw json.RawMessage) (linkforge.Link, string, error) {
	e := &element{l: linkforge.Link{Tags: []string{}}}
	dec := json.NewDecoder(bytes.NewReader(raw))
	tok, err := dec.Token()
	if d, ok := tok.(json.Delim); err != nil || !ok || d != '{' {
		return e.l, "", linkforge.InvalidField("element", "must be a link object")
	}
	seen := map[string]bool{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return e.l, "", linkforge.InvalidField("element", "is not valid JSON")
		}
		name, _ := tok.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return e.l, "", linkforge.InvalidField("element", "is not valid JSON")
		}
		if seen[name] {
			field := truncate(name, 64)
			if field == "" {
				field = `""` // an error names its field, even this one
			}
			e.add(field, "appears more than once")
			continue
		}
		seen[name] = true
		if !bytes.Equal(v, []byte("null")) { // null: absent
			e.member(name, v)
		}
	}
	if _, err := dec.Token(); err != nil {
		return e.l, "", linkforge.InvalidField("element", "is not valid JSON")
	}
	l, err := e.finish()
	return l, e.domain, err
}

// element is a link object being decoded.
type element struct {
	l                    linkforge.Link
	fe                   []linkforge.FieldError
	updatedAt, expiredAt *time.Time
	protected            bool
	domain               string // the host of the domain member
}

func (e *element) add(field, detail string) {
	e.fe = append(e.fe, linkforge.FieldError{Field: field, Detail: detail})
}

// member reads the member name of value v (not null) into the link.
func (e *element) member(name string, v json.RawMessage) {
	l := &e.l
	str := func(dst *string) bool {
		if json.Unmarshal(v, dst) != nil {
			e.add(name, "must be a string")
			return false
		}
		return true
	}
	tm := func() *time.Time {
		var s string
		if !str(&s) {
			return nil
		}
		t, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			e.add(name, fmt.Sprintf("must be an RFC 3339 timestamp; cannot read %q", truncate(s, 40)))
			return nil
		}
		t = t.UTC()
		return &t
	}
	count := func() (int64, bool) {
		var n int64
		if json.Unmarshal(v, &n) != nil || n < 0 {
			e.add(name, "must be a non-negative integer")
			return 0, false
		}
		return n, true
	}
	switch name {
	case "slug":
		if str(&l.Slug) {
			if err := linkforge.ValidateSlug(l.Slug); err != nil {
				e.add("slug", fmt.Sprintf("%q is not a valid LinkForge slug: %s", truncate(l.Slug, 80), detailOf(err)))
			}
		}
	case "url":
		str(&l.URL)
	case "title":
		str(&l.Title)
	case "fallback_url":
		str(&l.FallbackURL)
	case "tags":
		if json.Unmarshal(v, &l.Tags) != nil {
			e.add("tags", "must be an array of strings")
		}
		if l.Tags == nil {
			l.Tags = []string{}
		}
	case "created_at":
		if t := tm(); t != nil {
			l.CreatedAt = *t
		}
	case "updated_at":
		e.updatedAt = tm()
	case "expires_at":
		l.ExpiresAt = tm()
	case "expired_at":
		e.expiredAt = tm()
	case "max_clicks":
		if n, ok := count(); ok {
			l.MaxClicks = &n
		}
	case "clicks":
		if n, ok := count(); ok {
			if linkforge.ValidateImportedClicks(n) != nil {
				e.add(name, errClicksTooLarge.Error())
			} else {
				l.ImportedClicks = n
			}
		}
	case "device_urls":
		if json.Unmarshal(v, &l.DeviceURLs) != nil {
			l.DeviceURLs = linkforge.DeviceURLs{}
			e.add("device_urls", "must be an object of ios, android and desktop URLs")
		}
	case "password_protected":
		if json.Unmarshal(v, &e.protected) != nil {
			e.add(name, "must be a boolean")
		}
	case "password_hash":
		// Checked by Import, against the server's cost limit.
		str(&l.PasswordHash)
	case "notes":
		if str(&l.Notes) {
			if err := linkforge.ValidateNotes(l.Notes); err != nil {
				e.add("notes", detailOf(err))
			}
		}
	case "archived":
		if json.Unmarshal(v, &l.Archived) != nil {
			e.add(name, "must be a boolean")
		}
	case "valid_since":
		l.ValidSince = tm()
	case "domain":
		str(&e.domain)
	case "password":
		e.add(name, plaintextRefused)
	default:
		if rules.IsField(name) {
			e.fe = append(e.fe, rules.DecodeField(name, v, l)...)
		}
	}
}

// finish checks what needs the whole element and returns the link.
func (e *element) finish() (linkforge.Link, error) {
	l := e.l
	if e.protected && l.PasswordHash == "" {
		// Importing the link without its hash would open it to anyone.
		e.add("password_protected", "the link has a password but the element no password_hash: "+
			"export it again with this version, or create it with its password through the API")
	}
	if err := linkforge.InvalidFields(e.fe); err != nil {
		return l, err
	}
	// The export's updated_at is kept when it is consistent; expired_at
	// only when it records the expiry the link has, so that the alarm of
	// an expired link is stored as done rather than run again.
	if e.updatedAt != nil && !l.CreatedAt.IsZero() && !e.updatedAt.Before(l.CreatedAt) {
		l.UpdatedAt = *e.updatedAt
	}
	if e.expiredAt != nil && l.ExpiresAt != nil && !e.expiredAt.Before(*l.ExpiresAt) {
		l.ExpiredAt = e.expiredAt
	}
	return l, nil
}
