package web

import (
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/linkforge/linkforge"
)

// maxSearchLength bounds q, in characters: longer than any slug and most
// titles, short enough that a search term cannot be a payload.
const maxSearchLength = 200

// parseListQuery reads the query of GET /api/v1/links (operation listLinks).
// Unknown parameters were refused before (apiQuery); here each known one is
// checked, and a bad value is EInvalid naming its parameter. Every parameter
// but tag may appear once.
func parseListQuery(v url.Values) (linkforge.ListQuery, error) {
	var (
		q  linkforge.ListQuery
		fe fieldErrors
	)
	one := func(name string) (string, bool) {
		vals := v[name]
		switch len(vals) {
		case 0:
			return "", false
		case 1:
			return vals[0], true
		}
		fe.add(name, "appears more than once")
		return "", false
	}
	if s, ok := one("q"); ok {
		switch {
		case !utf8.ValidString(s):
			fe.add("q", "must be valid UTF-8")
		case utf8.RuneCountInString(s) > maxSearchLength:
			fe.add("q", fmt.Sprintf("must be at most %d characters long", maxSearchLength))
		case strings.IndexFunc(s, unicode.IsControl) >= 0:
			fe.add("q", "must not contain control characters")
		default:
			q.Q = s
		}
	}
	if tags, ok := v["tag"]; ok {
		q.Tags = linkforge.NormalizeTags(tags)
		if err := linkforge.ValidateTags(q.Tags); err != nil {
			// The rules are those of a link's tags; the parameter is
			// named as the client sent it.
			var e *linkforge.Error
			if errors.As(err, &e) {
				for _, f := range e.Fields {
					fe.add("tag", f.Detail)
				}
			}
		}
	}
	if s, ok := one("state"); ok {
		q.State = linkforge.LinkState(s)
		if !q.State.Valid() {
			fe.add("state", "must be one of active, expired, all")
		}
	}
	if s, ok := one("archived"); ok {
		q.Archived = linkforge.ArchivedFilter(s)
		if !q.Archived.Valid() {
			fe.add("archived", "must be one of false, true, all")
		}
	}
	if s, ok := one("health"); ok {
		q.Health = s
		if s != linkforge.HealthOK && s != linkforge.HealthBroken && s != linkforge.HealthUnchecked {
			fe.add("health", "must be one of ok, broken, unchecked")
		}
	}
	if s, ok := one("sort"); ok {
		q.Sort = linkforge.ListSort(s)
		if !q.Sort.Valid() {
			fe.add("sort", "must be one of -created, created, -clicks, clicks, slug")
		}
	}
	if s, ok := one("limit"); ok {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > linkforge.MaxListLimit {
			fe.add("limit", fmt.Sprintf("must be an integer from 1 to %d", linkforge.MaxListLimit))
		}
		q.Limit = n
	}
	if s, ok := one("cursor"); ok {
		q.Cursor = s
	}
	if err := linkforge.InvalidFields(fe); err != nil {
		return linkforge.ListQuery{}, err
	}
	if q.Cursor != "" {
		// Checked here too, so that a bad cursor is refused with the
		// other parameters' errors' shape before any query runs.
		if _, err := linkforge.DecodeListCursor(cmpSort(q.Sort), q.Cursor); err != nil {
			return linkforge.ListQuery{}, err
		}
	}
	return q, nil
}

// cmpSort is s, or the default sort when s is empty.
func cmpSort(s linkforge.ListSort) linkforge.ListSort {
	if s == "" {
		return linkforge.SortCreatedDesc
	}
	return s
}

// parseRawQuery splits a request's raw query string as url.ParseQuery does,
// but refuses what url.Values would silently drop: a pair holding a ';'
// (Go no longer takes it for a separator, so "limit=5000;x" would lose
// its limit and be served with the default) and a bad percent escape.
// Each bad pair is a field error named by its key, so that the client
// learns which parameter to fix.
func parseRawQuery(raw string) (url.Values, error) {
	v, err := url.ParseQuery(raw)
	if err == nil {
		return v, nil
	}
	var fe fieldErrors
	for pair := range strings.SplitSeq(raw, "&") {
		key, value, _ := strings.Cut(pair, "=")
		name, kerr := url.QueryUnescape(key)
		if kerr != nil {
			name = key
		}
		switch _, verr := url.QueryUnescape(value); {
		case strings.Contains(pair, ";"):
			fe.add(fieldName(name), "contains ';', which does not separate query parameters; separate them with '&' or encode ';' as %3B")
		case kerr != nil || verr != nil:
			fe.add(fieldName(name), "has a malformed percent escape; encode '%' as %25")
		}
	}
	if len(fe) == 0 {
		// ParseQuery refused something no pair shows; say what it said.
		fe.add("query", err.Error())
	}
	return nil, linkforge.InvalidFields(fe)
}
