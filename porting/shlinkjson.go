package porting

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/linkforge/linkforge"
)

// Shlink's JSON: the short URLs of its REST API (GET /rest/v3/short-urls:
// {"shortUrls":{"data":[...]}}, or the data array alone), each with its
// redirect rules under "redirectRules", as GET
// /rest/v3/short-urls/{shortCode}/redirect-rules answers them (the array,
// or that answer whole). Shlink has no single export holding both, so a
// migration script joins the two; the import then keeps what LinkForge can
// express and reports, per line, what it left out (Record.Notes).

// shlinkIsJSON peeks at br: a Shlink file whose first byte after blanks
// (and a byte order mark) is '{' or '[' is the API's JSON, else its CSV.
func shlinkIsJSON(br *bufio.Reader) bool {
	for n := 1; n <= 4096; n++ {
		b, _ := br.Peek(n)
		if len(b) < n {
			return false
		}
		switch b[n-1] {
		case '{', '[':
			return true
		case ' ', '\t', '\r', '\n', 0xEF, 0xBB, 0xBF:
			continue
		}
		return false
	}
	return false
}

// newShlinkJSONParser reads to the short URLs' array: the top level, or
// shortUrls.data of the list answer, skipping the members around it.
func newShlinkJSONParser(br *bufio.Reader) (*jsonParser, error) {
	// A byte order mark is not JSON; the peek above let it through.
	if b, _ := br.Peek(3); string(b) == "\xEF\xBB\xBF" {
		_, _ = br.Discard(3)
	}
	lim := newRecordLimit(br)
	dec := json.NewDecoder(lim)
	p := &jsonParser{dec: dec, lim: lim, decode: decodeShlink, columns: shlinkColumns}
	tok, err := dec.Token()
	if err != nil {
		return nil, linkforge.InvalidField("body", "is not Shlink's JSON: "+err.Error())
	}
	if d, ok := tok.(json.Delim); ok && d == '[' {
		return p, nil
	}
	for _, member := range []string{"shortUrls", "data"} {
		if err := enterMember(dec, member); err != nil {
			return nil, err
		}
	}
	p.wrapped = true
	return p, nil
}

// enterMember reads the members of the object dec is in until member,
// and that member's opening delimiter: '{' for shortUrls, '[' for data.
func enterMember(dec *json.Decoder, member string) error {
	want := "a JSON array of Shlink's short URLs, or its API's {\"shortUrls\":{\"data\":[...]}}"
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return linkforge.InvalidField("body", "must be "+want)
		}
		if name, _ := tok.(string); name != member {
			var skip json.RawMessage
			if err := dec.Decode(&skip); err != nil {
				return linkforge.InvalidField("body", "must be "+want)
			}
			continue
		}
		tok, err = dec.Token()
		d, ok := tok.(json.Delim)
		if err != nil || !ok || (member == "data") != (d == '[') || (member != "data") != (d == '{') {
			return linkforge.InvalidField("body", fmt.Sprintf("%s must be %s", member, map[bool]string{true: "an array", false: "an object"}[member == "data"]))
		}
		return nil
	}
	return linkforge.InvalidField("body", "has no "+member+"; must be "+want)
}

// shlinkColumns are Shlink's names of the fields a line's errors name.
var shlinkColumns = map[string]string{
	fSlug: "shortCode", fURL: "longUrl", fCreatedAt: "dateCreated", fExpiresAt: "meta.validUntil",
	fMaxClicks: "meta.maxVisits", "device_urls.ios": "deviceLongUrls.ios", "device_urls.android": "deviceLongUrls.android",
	"device_urls.desktop": "deviceLongUrls.desktop",
}

// shlinkShortURL is one short URL of Shlink's API. Pointers tell absent
// or null from a zero value.
type shlinkShortURL struct {
	ShortCode      string  `json:"shortCode"`
	LongURL        string  `json:"longUrl"`
	Title          *string `json:"title"`
	Tags           []string
	DateCreated    *string `json:"dateCreated"`
	Domain         *string `json:"domain"`
	ForwardQuery   *bool   `json:"forwardQuery"`
	DeviceLongURLs *struct {
		Android *string `json:"android"`
		IOS     *string `json:"ios"`
		Desktop *string `json:"desktop"`
	} `json:"deviceLongUrls"`
	Meta *struct {
		ValidSince *string `json:"validSince"`
		ValidUntil *string `json:"validUntil"`
		MaxVisits  *int64  `json:"maxVisits"`
	} `json:"meta"`
	VisitsSummary *struct {
		Total int64 `json:"total"`
	} `json:"visitsSummary"`
	VisitsCount   *int64          `json:"visitsCount"` // Shlink before 3.4
	RedirectRules json.RawMessage `json:"redirectRules"`
}

// decodeShlink reads one short URL into a record.
func decodeShlink(raw json.RawMessage) (rec Record) {
	var s shlinkShortURL
	if err := json.Unmarshal(raw, &s); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) && te.Field != "" {
			rec.Err = linkforge.InvalidField(te.Field, "must be a JSON "+te.Type.Kind().String())
		} else {
			rec.Err = linkforge.InvalidField("element", "must be a Shlink short URL object")
		}
		return rec
	}
	var fe []linkforge.FieldError
	add := func(field, detail string) { fe = append(fe, linkforge.FieldError{Field: field, Detail: detail}) }
	l := &rec.Link
	l.Slug, l.URL, l.Tags = s.ShortCode, s.LongURL, s.Tags
	if err := linkforge.ValidateSlug(l.Slug); err != nil {
		add("shortCode", fmt.Sprintf("%q is not a valid LinkForge slug: %s", truncate(l.Slug, 80), detailOf(err)))
	}
	if l.Tags == nil {
		l.Tags = []string{}
	}
	if s.Title != nil {
		l.Title = *s.Title
	}
	if s.Domain != nil {
		rec.Domain = *s.Domain
	}
	if s.DateCreated != nil {
		if t, err := parseTime(*s.DateCreated); err != nil {
			add("dateCreated", err.Error())
		} else {
			l.CreatedAt = t
		}
	}
	if d := s.DeviceLongURLs; d != nil {
		for _, u := range []struct {
			src *string
			dst *string
		}{{d.Android, &l.DeviceURLs.Android}, {d.IOS, &l.DeviceURLs.IOS}, {d.Desktop, &l.DeviceURLs.Desktop}} {
			if u.src != nil {
				*u.dst = *u.src
			}
		}
	}
	if m := s.Meta; m != nil {
		if m.ValidUntil != nil {
			if t, err := parseTime(*m.ValidUntil); err != nil {
				add("meta.validUntil", err.Error())
			} else {
				l.ExpiresAt = &t
			}
		}
		if m.MaxVisits != nil {
			l.MaxClicks = m.MaxVisits
		}
		if m.ValidSince != nil {
			if t, err := parseTime(*m.ValidSince); err != nil {
				add("meta.validSince", err.Error())
			} else {
				l.ValidSince = &t
			}
		}
	}
	switch {
	case s.VisitsSummary != nil:
		l.ImportedClicks = s.VisitsSummary.Total
	case s.VisitsCount != nil:
		l.ImportedClicks = *s.VisitsCount
	}
	if l.ImportedClicks < 0 || linkforge.ValidateImportedClicks(l.ImportedClicks) != nil {
		add("visitsSummary.total", errClicksTooLarge.Error())
	}
	// Shlink forwards the query unless told not to; LinkForge's default
	// is the opposite, so the link keeps Shlink's behaviour explicitly.
	if s.ForwardQuery == nil || *s.ForwardQuery {
		l.EditRouting().ForwardQuery = true
	}
	rules, rfe, notes := shlinkRules(s.RedirectRules)
	fe, rec.Notes = append(fe, rfe...), append(rec.Notes, notes...)
	if len(rules) > 0 {
		l.EditRouting().Rules = rules
	}
	rec.Err = linkforge.InvalidFields(fe)
	return rec
}
