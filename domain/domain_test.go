package domain_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/domain"
)

func TestNormalizeHost(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"go.acme.com", "go.acme.com"},
		{"GO.Acme.COM", "go.acme.com"},
		{"go.acme.com.", "go.acme.com"},
		{" go.acme.com ", "go.acme.com"},
		{"bücher.example", "xn--bcher-kva.example"},
		{"ＧＯ.example", "go.example"}, // full-width letters map
		{"a-b.example", "a-b.example"},
	} {
		got, err := domain.NormalizeHost("host", c.in, "links.example.com")
		if err != nil || got != c.want {
			t.Errorf("NormalizeHost(%q) = %q, %v; want %q", c.in, got, err, c.want)
		}
	}
	for _, in := range []string{
		"", "go.acme.com:8080", "go.acme.com:443", "127.0.0.1", "[::1]", "::1", "10.1.2.3",
		"1.2.3", "host.0x1f", "localhost", "under_score.example", "-lead.example", "trail-.example",
		"a..example", "https://go.acme.com", "go.acme.com/path", "user@go.acme.com",
		"links.example.com", "LINKS.example.com.", "sp ace.example",
		strings.Repeat("a", 64) + ".example",
	} {
		got, err := domain.NormalizeHost("host", in, "links.example.com")
		if linkforge.ErrorCode(err) != linkforge.EInvalid {
			t.Errorf("NormalizeHost(%q) = %q, %v; want EInvalid", in, got, err)
			continue
		}
		var e *linkforge.Error
		if !errors.As(err, &e) || len(e.Fields) != 1 || e.Fields[0].Field != "host" {
			t.Errorf("NormalizeHost(%q) error %v does not name the field host", in, err)
		}
	}
}

func TestValidateURLs(t *testing.T) {
	d := linkforge.Domain{Host: "go.acme.com", RootURL: "https://acme.com/", NotFoundURL: "https://acme.com/404"}
	if err := domain.ValidateURLs(d, []string{"links.example.com"}); err != nil {
		t.Errorf("ValidateURLs of valid URLs: %v", err)
	}
	for _, bad := range []linkforge.Domain{
		{Host: "go.acme.com", RootURL: "ftp://acme.com/"},
		{Host: "go.acme.com", NotFoundURL: "https://go.acme.com/x"},      // the domain itself: a loop
		{Host: "go.acme.com", NotFoundURL: "https://links.example.com/"}, // the server
		{Host: "go.acme.com", RootURL: "/relative"},
	} {
		if err := domain.ValidateURLs(bad, []string{"links.example.com"}); linkforge.ErrorCode(err) != linkforge.EInvalid {
			t.Errorf("ValidateURLs(%+v) = %v, want EInvalid", bad, err)
		}
	}
}
