package web

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"
	"unicode/utf8"

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
		return &linkforge.Error{Code: linkforge.ERequestTimeout, Message: "the request body did not arrive in time", Err: err}
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
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}
