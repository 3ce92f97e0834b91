package porting

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/linkforge/linkforge"
)

// The JSON of other shorteners' APIs (Bitly, Kutt, Rebrandly) is read
// through the CSV dialect of the same format: each element's members are
// flattened into the cells of a row whose header is their names, so that
// one table of names says what the CSV columns and the JSON members mean.

// newForeignJSONParser reads to the array of links: the top level, or the
// first member of the top object that is an array (Kutt's and Dub's
// "data", Bitly's "links").
func newForeignJSONParser(spec *csvSpec, br *bufio.Reader) (*jsonParser, error) {
	if b, _ := br.Peek(3); string(b) == "\xEF\xBB\xBF" {
		_, _ = br.Discard(3)
	}
	lim := newRecordLimit(br)
	dec := json.NewDecoder(lim)
	p := &jsonParser{dec: dec, lim: lim, columns: spec.jsonNames,
		decode: func(raw json.RawMessage) Record { return foreignRecord(spec, raw) }}
	want := fmt.Sprintf("a JSON array of %s's links, or an object holding one", spec.format)
	tok, err := dec.Token()
	if err != nil {
		return nil, linkforge.InvalidField("body", "must be "+want)
	}
	if d, ok := tok.(json.Delim); ok && d == '[' {
		return p, nil
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, linkforge.InvalidField("body", "must be "+want)
	}
	for dec.More() {
		if _, err := dec.Token(); err != nil {
			return nil, linkforge.InvalidField("body", "must be "+want)
		}
		// Peek at the member: an array starts the links; anything else
		// is skipped.
		tok, err := dec.Token()
		if err != nil {
			return nil, linkforge.InvalidField("body", "must be "+want)
		}
		if d, ok := tok.(json.Delim); ok && d == '[' {
			p.wrapped = true
			return p, nil
		}
		if d, ok := tok.(json.Delim); ok && d == '{' {
			// An object member: skip it whole.
			depth := 1
			for depth > 0 {
				t, err := dec.Token()
				if err != nil {
					return nil, linkforge.InvalidField("body", "must be "+want)
				}
				if d, ok := t.(json.Delim); ok {
					if d == '{' || d == '[' {
						depth++
					} else {
						depth--
					}
				}
			}
		}
	}
	return nil, linkforge.InvalidField("body", "has no array of links; must be "+want)
}

// foreignRecord flattens one element into a row of spec's CSV dialect.
func foreignRecord(spec *csvSpec, raw json.RawMessage) Record {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil {
		return Record{Err: linkforge.InvalidField("element", fmt.Sprintf("must be a %s link object", spec.format))}
	}
	var header, row []string
	add := func(name, cell string) { header, row = append(header, name), append(row, cell) }
	// In name order, so that a line's errors come in one order.
	for _, name := range slices.Sorted(maps.Keys(obj)) {
		v := bytes.TrimSpace(obj[name])
		switch {
		case len(v) == 0 || string(v) == "null":
			continue
		case v[0] == '{':
			// Rebrandly's domain {"fullName": ...}: its members, prefixed.
			var inner map[string]json.RawMessage
			if json.Unmarshal(v, &inner) == nil {
				for _, k := range slices.Sorted(maps.Keys(inner)) {
					if s, ok := scalar(inner[k]); ok {
						add(name+"."+k, s)
					}
				}
			}
		case v[0] == '[':
			add(name, joinList(v, spec.tagSep))
		default:
			if s, ok := scalar(v); ok {
				add(name, s)
			}
		}
	}
	cp := &csvParser{spec: spec, names: map[string]string{}, headerSize: len(header)}
	cp.cols = make([]string, len(header))
	for i, h := range header {
		f := spec.columns[normHeader(h)]
		if _, dup := cp.names[f]; dup || f == fIgnored {
			continue // a second member of the same field: the first stands
		}
		cp.cols[i], cp.names[f] = f, h
	}
	rec := cp.record(row, 0)
	for _, f := range spec.required {
		if _, alt := cp.names[fSlugAlt]; f == fSlug && alt {
			continue
		}
		if _, ok := cp.names[f]; !ok && rec.Err == nil {
			rec.Err = linkforge.InvalidField(cmpName(spec, f), "is missing")
		}
	}
	return rec
}

func cmpName(spec *csvSpec, f string) string {
	if n := spec.jsonNames[f]; n != "" {
		return n
	}
	return f
}

// scalar renders a JSON string, number or boolean as a cell.
func scalar(v json.RawMessage) (string, bool) {
	var s string
	if json.Unmarshal(v, &s) == nil {
		return s, true
	}
	var n json.Number
	dec := json.NewDecoder(bytes.NewReader(v))
	dec.UseNumber()
	if dec.Decode(&n) == nil {
		return n.String(), true
	}
	var b bool
	if json.Unmarshal(v, &b) == nil {
		return strconv.FormatBool(b), true
	}
	return "", false
}

// joinList renders an array of tags: strings, or objects with a name
// (Rebrandly's and Dub's tags), joined by sep.
func joinList(v json.RawMessage, sep string) string {
	var items []json.RawMessage
	if json.Unmarshal(v, &items) != nil {
		return ""
	}
	if sep == "" {
		sep = ","
	}
	var out []string
	for _, it := range items {
		if s, ok := scalar(it); ok {
			out = append(out, s)
			continue
		}
		var named struct {
			Name string `json:"name"`
		}
		if json.Unmarshal(it, &named) == nil && named.Name != "" {
			out = append(out, named.Name)
		}
	}
	return strings.Join(out, sep)
}
