package web

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"os"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/labstack/echo/v4"

	"github.com/linkforge/linkforge"
)

// The request bodies are read member by member with json.Decoder's token
// API instead of being unmarshalled into a struct: encoding/json matches
// struct fields case-insensitively and keeps the last of duplicate keys,
// and its errors do not always name the field. Here keys match exactly, a
// duplicate is an error, and every problem names its field.

// member is one name/value pair of a JSON object.
type member struct {
	name  string
	value json.RawMessage
}

// readObject reads exactly one JSON object from r: not an array, not
// several values, nothing after it.
func readObject(r io.Reader) ([]member, error) {
	dec := json.NewDecoder(r)
	tok, err := dec.Token()
	if err != nil {
		return nil, bodyError(err)
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, linkforge.InvalidField("body", "must be a JSON object, not "+jsonKind(tok))
	}
	var members []member
	seen := make(map[string]bool)
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, bodyError(err)
		}
		name, _ := tok.(string) // inside an object, Token only returns string keys
		var value json.RawMessage
		if err := dec.Decode(&value); err != nil {
			return nil, bodyError(err)
		}
		if seen[name] {
			return nil, linkforge.InvalidField(fieldName(name), "appears more than once")
		}
		seen[name] = true
		members = append(members, member{name: name, value: value})
	}
	if _, err := dec.Token(); err != nil { // the closing brace
		return nil, bodyError(err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		if err != nil && !isSyntaxError(err) {
			return nil, bodyError(err)
		}
		return nil, linkforge.InvalidField("body", "must hold exactly one JSON object; found more data after it")
	}
	return members, nil
}

func isSyntaxError(err error) bool {
	var se *json.SyntaxError
	return errors.As(err, &se)
}

// bodyError turns a read or syntax error of the body into an application
// error.
func bodyError(err error) error {
	var (
		mbe *http.MaxBytesError
		se  *json.SyntaxError
	)
	switch {
	case errors.As(err, &mbe):
		return tooLarge()
	case errors.As(err, &se):
		return linkforge.InvalidField("body", fmt.Sprintf("malformed JSON at byte %d: %s", se.Offset, strings.TrimPrefix(se.Error(), "json: ")))
	case errors.Is(err, io.EOF):
		return linkforge.InvalidField("body", "is empty; want a JSON object")
	case errors.Is(err, io.ErrUnexpectedEOF):
		return linkforge.InvalidField("body", "malformed JSON: unexpected end of input")
	case errors.Is(err, os.ErrDeadlineExceeded):
		// The server's ReadTimeout: the client sends too slowly or not at
		// all. Its fault, not an internal error to log.
		return &linkforge.Error{Code: ERequestTimeout, Message: "the request body did not arrive in time", Err: err}
	}
	return fmt.Errorf("read request body: %w", err)
}

func jsonKind(tok json.Token) string {
	switch v := tok.(type) {
	case json.Delim:
		if v == '[' {
			return "an array"
		}
		return fmt.Sprintf("%q", string(v))
	case string:
		return "a string"
	case float64, json.Number:
		return "a number"
	case bool:
		return "a boolean"
	case nil:
		return "null"
	}
	return fmt.Sprintf("%T", tok)
}

// fieldName bounds a client-chosen member name before it is echoed back in
// an error.
func fieldName(name string) string {
	if name == "" {
		// An error must name its field; this one is the empty string.
		return `""`
	}
	return truncate(name, 64)
}

var null = []byte("null")

func isNull(v json.RawMessage) bool { return bytes.Equal(v, null) }

// fieldErrors collects the problems of one body, so that the client learns
// about every bad field at once.
type fieldErrors []linkforge.FieldError

func (fe *fieldErrors) add(field, detail string) {
	*fe = append(*fe, linkforge.FieldError{Field: field, Detail: detail})
}

// addErr adds the fields of err, an EInvalid *linkforge.Error.
func (fe *fieldErrors) addErr(err error) {
	var e *linkforge.Error
	if errors.As(err, &e) {
		*fe = append(*fe, e.Fields...)
	}
}

func (fe *fieldErrors) str(m member, dst *string) bool {
	if err := json.Unmarshal(m.value, dst); err != nil {
		fe.add(m.name, "must be a string")
		return false
	}
	return true
}

func (fe *fieldErrors) time(m member) (*time.Time, bool) {
	var s string
	if err := json.Unmarshal(m.value, &s); err != nil {
		fe.add(m.name, "must be an RFC 3339 timestamp string, such as 2026-12-01T00:00:00Z")
		return nil, false
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		fe.add(m.name, fmt.Sprintf("must be an RFC 3339 timestamp, such as 2026-12-01T00:00:00Z; cannot parse %q", truncate(s, 64)))
		return nil, false
	}
	t = t.UTC()
	return &t, true
}

func (fe *fieldErrors) count(m member) (*int64, bool) {
	var n int64
	if err := json.Unmarshal(m.value, &n); err != nil {
		fe.add(m.name, "must be a non-negative integer")
		return nil, false
	}
	if n < 0 {
		fe.add(m.name, "must not be negative")
		return nil, false
	}
	return &n, true
}

func (fe *fieldErrors) tags(m member) ([]string, bool) {
	var tags []string
	if err := json.Unmarshal(m.value, &tags); err != nil {
		fe.add(m.name, "must be an array of strings")
		return nil, false
	}
	// Stored as matched: trimmed and lower-cased, duplicates merged
	// (linkforge.NormalizeTag), so that "Launch" and "launch " are one tag.
	tags = linkforge.NormalizeTags(tags)
	if err := linkforge.ValidateTags(tags); err != nil {
		fe.addErr(err)
		return nil, false
	}
	return tags, true
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

// title reads a title: a string (empty: none), validated.
func (fe *fieldErrors) title(m member) (string, bool) {
	var s string
	if !fe.str(m, &s) {
		return "", false
	}
	if err := linkforge.ValidateTitle(s); err != nil {
		fe.addErr(err)
		return "", false
	}
	return s, true
}

// password reads a plain password, validated; the caller hashes it.
func (fe *fieldErrors) password(m member) (string, bool) {
	var s string
	if !fe.str(m, &s) {
		return "", false
	}
	if err := linkforge.ValidatePassword(s); err != nil {
		fe.addErr(err)
		return "", false
	}
	return s, true
}

// deviceURLs reads the device_urls object: keys ios, android and desktop,
// each a string or null (null or "": not set). With selfHosts the URLs are
// validated here; a PATCH validates them with the merged link instead.
func (fe *fieldErrors) deviceURLs(m member, selfHosts []string, validate bool) (linkforge.DeviceURLs, bool) {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(m.value, &raw); err != nil || raw == nil {
		fe.add(m.name, `must be an object with the keys "ios", "android" and "desktop"`)
		return linkforge.DeviceURLs{}, false
	}
	var (
		d  linkforge.DeviceURLs
		ok = true
	)
	// Sorted keys: the errors come in a stable order.
	keys := make([]string, 0, len(raw))
	for k := range raw {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		v := raw[k]
		var dst *string
		switch k {
		case "ios":
			dst = &d.IOS
		case "android":
			dst = &d.Android
		case "desktop":
			dst = &d.Desktop
		default:
			fe.add(m.name+"."+fieldName(k), `unknown key; device_urls takes "ios", "android" and "desktop"`)
			ok = false
			continue
		}
		if isNull(v) {
			continue
		}
		if !fe.str(member{name: m.name + "." + k, value: v}, dst) {
			ok = false
		}
	}
	if ok && validate {
		if err := linkforge.ValidateDeviceURLs(d, selfHosts); err != nil {
			fe.addErr(err)
			ok = false
		}
	}
	return d, ok
}

const createFields = "slug, url, title, password, device_urls, expires_at, max_clicks, fallback_url, tags"

// newLink is a decoded POST /api/v1/links body: the link, and the plain
// password (empty: none) that the handler hashes into it.
type newLink struct {
	link     linkforge.Link
	password string
}

// decodeCreateLink reads and validates the body of POST /api/v1/links. The
// returned link has no tenant, and no slug when the client did not choose
// one (the handler generates it). Every error is an *linkforge.Error: EInvalid
// naming the fields, or ETooLarge when r is an exhausted
// http.MaxBytesReader; or a wrapped read error.
func decodeCreateLink(r io.Reader, selfHosts []string) (newLink, error) {
	members, err := readObject(r)
	if err != nil {
		return newLink{}, err
	}
	var pw string
	l := linkforge.Link{Tags: []string{}}
	var (
		fe     fieldErrors
		hasURL bool
	)
	for _, m := range members {
		if isNull(m.value) && m.name != "url" {
			// null is absence for the optional fields (and an error for
			// unknown ones, below).
			if !isCreateField(m.name) {
				fe.add(fieldName(m.name), "unknown field; accepted fields are "+createFields)
			}
			continue
		}
		switch m.name {
		case "slug":
			if fe.str(m, &l.Slug) {
				if err := linkforge.ValidateSlug(l.Slug); err != nil {
					fe.addErr(err)
				}
			}
		case "url":
			hasURL = true
			if isNull(m.value) {
				fe.add("url", "is required")
			} else if fe.str(m, &l.URL) {
				if err := linkforge.ValidateTargetURL("url", l.URL, selfHosts); err != nil {
					fe.addErr(err)
				}
			}
		case "expires_at":
			l.ExpiresAt, _ = fe.time(m)
		case "max_clicks":
			l.MaxClicks, _ = fe.count(m)
		case "fallback_url":
			if fe.str(m, &l.FallbackURL) && l.FallbackURL != "" {
				if err := linkforge.ValidateTargetURL("fallback_url", l.FallbackURL, selfHosts); err != nil {
					fe.addErr(err)
				}
			}
		case "tags":
			if tags, ok := fe.tags(m); ok {
				l.Tags = tags
			}
		case "title":
			l.Title, _ = fe.title(m)
		case "password":
			pw, _ = fe.password(m)
		case "device_urls":
			l.DeviceURLs, _ = fe.deviceURLs(m, selfHosts, true)
		default:
			fe.add(fieldName(m.name), "unknown field; accepted fields are "+createFields)
		}
	}
	if !hasURL {
		fe.add("url", "is required")
	}
	if err := linkforge.InvalidFields(fe); err != nil {
		return newLink{}, err
	}
	return newLink{link: l, password: pw}, nil
}

func isCreateField(name string) bool {
	switch name {
	case "slug", "url", "expires_at", "max_clicks", "fallback_url", "tags", "title", "password", "device_urls":
		return true
	}
	return false
}

const patchFields = "url, title, password, device_urls, expires_at, max_clicks, fallback_url, tags"

// linkPatch is a decoded PATCH body: only the fields that were present
// change; null clears expires_at, max_clicks, fallback_url, tags, title,
// password and device_urls. device_urls replaces the whole set: a key left
// out is cleared.
type linkPatch struct {
	setTitle    bool
	title       string
	setPassword bool
	password    string // plain; empty with setPassword: remove the password
	// passwordHash is password hashed, by the handler before the update
	// transaction (a slow hash must not hold the write lock).
	passwordHash string
	setDevices   bool
	devices      linkforge.DeviceURLs

	setURL       bool
	url          string
	setExpiresAt bool
	expiresAt    *time.Time
	setMaxClicks bool
	maxClicks    *int64
	setFallback  bool
	fallback     string
	setTags      bool
	tags         []string
}

// decodePatchLink reads the body of PATCH /api/v1/links/{slug}. It checks
// types only: the merged link is validated as a whole inside the update
// transaction.
func decodePatchLink(r io.Reader) (linkPatch, error) {
	members, err := readObject(r)
	if err != nil {
		return linkPatch{}, err
	}
	var (
		p  linkPatch
		fe fieldErrors
	)
	for _, m := range members {
		null := isNull(m.value)
		switch m.name {
		case "url":
			if null {
				fe.add("url", "cannot be removed; it may only be replaced")
			} else {
				p.setURL = fe.str(m, &p.url)
			}
		case "expires_at":
			p.setExpiresAt = true
			if !null {
				p.expiresAt, p.setExpiresAt = fe.time(m)
			}
		case "max_clicks":
			p.setMaxClicks = true
			if !null {
				p.maxClicks, p.setMaxClicks = fe.count(m)
			}
		case "fallback_url":
			p.setFallback = true
			if !null {
				p.setFallback = fe.str(m, &p.fallback)
			}
		case "tags":
			p.setTags, p.tags = true, []string{}
			if !null {
				p.tags, p.setTags = fe.tags(m)
			}
		case "title":
			p.setTitle = true
			if !null {
				p.title, p.setTitle = fe.title(m)
			}
		case "password":
			p.setPassword = true
			if !null {
				p.password, p.setPassword = fe.password(m)
			}
		case "device_urls":
			p.setDevices = true
			if !null {
				// Checked with the merged link, like url.
				p.devices, p.setDevices = fe.deviceURLs(m, nil, false)
			}
		case "slug", "id", "short_url", "created_at", "updated_at", "expired_at", "clicks",
			"password_protected", "imported_clicks":
			fe.add(m.name, "cannot be changed; fields that can are "+patchFields)
		default:
			fe.add(fieldName(m.name), "unknown field; fields that can be changed are "+patchFields)
		}
	}
	if err := linkforge.InvalidFields(fe); err != nil {
		return linkPatch{}, err
	}
	return p, nil
}

// apply changes l's present fields.
func (p *linkPatch) apply(l *linkforge.Link) {
	if p.setURL {
		l.URL = p.url
	}
	if p.setExpiresAt {
		l.ExpiresAt = p.expiresAt
	}
	if p.setMaxClicks {
		l.MaxClicks = p.maxClicks
	}
	if p.setFallback {
		l.FallbackURL = p.fallback
	}
	if p.setTags {
		l.Tags = p.tags
	}
	if p.setTitle {
		l.Title = p.title
	}
	if p.setPassword {
		l.PasswordHash = p.passwordHash
	}
	if p.setDevices {
		l.DeviceURLs = p.devices
	}
}

// Request bodies and queries the routes do not take.
//
// net/http reads what is left of a request body (up to 256 KiB) before it
// sends the answer, so that the connection can carry the next request. A
// client that announces a body and never sends it would then get no answer
// and hold its connection until the server's ReadTimeout; one that sends a
// byte every few seconds, as long as it likes. So an answer that does not
// need the rest of the body closes the connection instead of reading it.

// ignoreBody wraps the routes that take no body: a request that announces
// one is answered at once, on a connection closed afterwards.
func ignoreBody(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if c.Request().ContentLength != 0 {
			dropUnreadBody(c)
		}
		return next(c)
	}
}

// dropUnreadBody makes the answer close the connection without reading the
// rest of the request body: "Connection: close" stops net/http from
// draining the body before the answer, and a read deadline in the past
// stops the read it would still do after the handler.
func dropUnreadBody(c echo.Context) {
	c.Response().Header().Set("Connection", "close")
	// An error means the writer cannot set deadlines (a test recorder):
	// there is no connection to hold.
	_ = http.NewResponseController(c.Response()).SetReadDeadline(time.Now())
}

// trackedBody records that a request body was read to its end, so that an
// error answer knows whether the connection can be kept.
type trackedBody struct {
	io.ReadCloser
	eof bool
}

func (b *trackedBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if errors.Is(err, io.EOF) {
		b.eof = true
	}
	return n, err
}

// bodyPending reports whether r announced a body that was not read to its
// end.
func bodyPending(r *http.Request) bool {
	if r.ContentLength == 0 {
		return false
	}
	b, ok := r.Body.(*trackedBody)
	return !ok || !b.eof
}

// requireJSON refuses a body whose Content-Type is not JSON with 415: a
// form or text body that happens to parse as JSON is a client's mistake
// (or a cross-site form post), not a request. A missing Content-Type is
// taken as JSON, for hand-written clients. It runs after limitBody and
// tracks the body for dropUnreadBody.
func requireJSON(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		req := c.Request()
		if ct := req.Header.Get(echo.HeaderContentType); ct != "" && !isJSONMediaType(ct) {
			return &linkforge.Error{Code: EUnsupportedMediaType,
				Message: fmt.Sprintf("Content-Type %q is not supported; send the body as application/json", truncate(ct, 64))}
		}
		req.Body = &trackedBody{ReadCloser: req.Body}
		return next(c)
	}
}

// ERequestTimeout is the problem code of a 408: the body did not arrive
// within the server's read timeout.
const ERequestTimeout = "request_timeout"

// EUnsupportedMediaType is the problem code of a 415: the request body's
// Content-Type is not one the route reads.
const EUnsupportedMediaType = "unsupported_media_type"

// isJSONMediaType accepts application/json and application/*+json, with
// any parameters (charset=utf-8).
func isJSONMediaType(ct string) bool {
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil {
		return false
	}
	return mt == "application/json" || (strings.HasPrefix(mt, "application/") && strings.HasSuffix(mt, "+json"))
}

// allowQuery refuses a malformed query string (parseRawQuery) and query
// parameters not in allowed with 400 naming the first unknown one (in byte
// order, so the answer is stable).
func allowQuery(allowed []string) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			q, err := parseRawQuery(c.Request().URL.RawQuery)
			if err != nil {
				return err
			}
			if len(q) == 0 {
				return next(c)
			}
			var unknown []string
			for name := range q {
				if !slices.Contains(allowed, name) {
					unknown = append(unknown, name)
				}
			}
			if len(unknown) == 0 {
				return next(c)
			}
			slices.Sort(unknown)
			accepted := "this route takes none"
			if len(allowed) > 0 {
				accepted = "accepted: " + strings.Join(allowed, ", ")
			}
			var fe fieldErrors
			for _, name := range unknown {
				fe.add(fieldName(name), "unknown query parameter; "+accepted)
			}
			return linkforge.InvalidFields(fe)
		}
	}
}
