package rules

import (
	"bytes"
	"encoding/json"

	"github.com/linkforge/linkforge"
)

// Fields are the routing members of a link body, as the API names them.
var Fields = []string{"redirect_status", "forward_query", "rules", "variants", "og", "utm"}

// IsField reports whether name is one of Fields.
func IsField(name string) bool {
	for _, f := range Fields {
		if f == name {
			return true
		}
	}
	return false
}

// DecodeField reads the routing member name (one of Fields) from its JSON
// value v into l; null clears the field (302, false, none). It checks
// shapes and types only; Validate checks the values. The API's create and
// update bodies and the JSON import read the fields through it, so they
// accept the same documents.
func DecodeField(name string, v json.RawMessage, l *linkforge.Link) []linkforge.FieldError {
	null := bytes.Equal(bytes.TrimSpace(v), []byte("null"))
	r := l.EditRouting()
	bad := func(detail string) []linkforge.FieldError {
		return []linkforge.FieldError{{Field: name, Detail: detail}}
	}
	switch name {
	case "redirect_status":
		r.RedirectStatus = 0
		if !null && json.Unmarshal(v, &r.RedirectStatus) != nil {
			return bad("must be one of the integers 301, 302, 307 and 308")
		}
	case "forward_query":
		r.ForwardQuery = false
		if !null && json.Unmarshal(v, &r.ForwardQuery) != nil {
			return bad("must be true or false")
		}
	case "rules":
		r.Rules = nil
		if !null && strict(v, &r.Rules) != nil {
			return bad(`must be an array of {"conditions": [{"type": ..., "value": ...}], "url": ...}`)
		}
	case "variants":
		r.Variants = nil
		if !null && strict(v, &r.Variants) != nil {
			return bad(`must be an array of {"url": ..., "weight": 1..100}`)
		}
	case "og":
		r.OG = nil
		if !null {
			var og linkforge.OG
			if strict(v, &og) != nil {
				return bad(`must be an object with the keys "title", "description" and "image_url"`)
			}
			if !og.IsZero() {
				r.OG = &og
			}
		}
	case "utm":
		// null and {} clear it.
		r.UTM = linkforge.UTM{}
		if !null && strict(v, &r.UTM) != nil {
			r.UTM = linkforge.UTM{}
			return bad(`must be an object of strings with the keys "source", "medium", "campaign", "term" and "content"`)
		}
	default:
		return bad("is not a routing field")
	}
	return nil
}

// strict decodes v into dst refusing unknown keys and trailing data.
func strict(v json.RawMessage, dst any) error {
	dec := json.NewDecoder(bytes.NewReader(v))
	dec.DisallowUnknownFields()
	if err := dec.Decode(dst); err != nil {
		return err
	}
	if dec.More() {
		return &json.SyntaxError{}
	}
	return nil
}
