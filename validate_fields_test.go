package linkforge_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/linkforge/linkforge"
)

func TestValidateTitle(t *testing.T) {
	good := []string{"", "Spring sale", "Frühling ✿ 春 🎉", "👩‍💻 team", strings.Repeat("é", 200), `<b>"quoted" & tagged</b>`}
	for _, s := range good {
		if err := linkforge.ValidateTitle(s); err != nil {
			t.Errorf("ValidateTitle(%q) = %v", s, err)
		}
	}
	bad := map[string]string{
		"201 characters": strings.Repeat("é", 201),
		"newline":        "a\nb",
		"tab":            "a\tb",
		"NUL":            "a\x00",
		"DEL":            "a\x7f",
		"C1 control":     "a\u0085",
		"RLO":            "abc\u202egnp.exe",
		"isolate":        "a\u2066b",
		"invalid UTF-8":  "a\xffb",
	}
	for name, s := range bad {
		t.Run(name, func(t *testing.T) { mustFieldError(t, linkforge.ValidateTitle(s), "title", "") })
	}
}

func TestValidatePassword(t *testing.T) {
	for _, s := range []string{"x", "correct horse battery staple", "pässwörd ✓", strings.Repeat("p", 200)} {
		if err := linkforge.ValidatePassword(s); err != nil {
			t.Errorf("ValidatePassword(%q) = %v", s, err)
		}
	}
	bad := map[string]string{
		"empty":         "",
		"201 bytes":     strings.Repeat("p", 201),
		"101 × 2 bytes": strings.Repeat("é", 101),
		"newline":       "a\nb",
		"CR":            "a\rb",
		"invalid UTF-8": "\xff",
	}
	for name, s := range bad {
		t.Run(name, func(t *testing.T) { mustFieldError(t, linkforge.ValidatePassword(s), "password", "") })
	}
}

func TestValidateDeviceURLs(t *testing.T) {
	if err := linkforge.ValidateDeviceURLs(linkforge.DeviceURLs{}, selfHosts); err != nil {
		t.Errorf("no device URLs: %v", err)
	}
	ok := linkforge.DeviceURLs{IOS: "https://apps.apple.com/app/id1", Android: "https://play.google.com/x", Desktop: "http://example.com/"}
	if err := linkforge.ValidateDeviceURLs(ok, selfHosts); err != nil {
		t.Errorf("valid device URLs: %v", err)
	}
	tests := []struct {
		name  string
		d     linkforge.DeviceURLs
		field string
	}{
		{"ios javascript", linkforge.DeviceURLs{IOS: "javascript:alert(1)"}, "device_urls.ios"},
		{"android relative", linkforge.DeviceURLs{Android: "/x"}, "device_urls.android"},
		{"desktop self host", linkforge.DeviceURLs{Desktop: "http://localhost:8080/abc"}, "device_urls.desktop"},
		{"desktop self host via 127.1", linkforge.DeviceURLs{Desktop: "http://127.1:8080/abc"}, "device_urls.desktop"},
		{"ios userinfo", linkforge.DeviceURLs{IOS: "https://apple.com@evil.example/"}, "device_urls.ios"},
		{"android app scheme", linkforge.DeviceURLs{Android: "intent://x#Intent;end"}, "device_urls.android"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mustFieldError(t, linkforge.ValidateDeviceURLs(tt.d, selfHosts), tt.field, "")
		})
	}
	// Every bad one is named.
	err := linkforge.ValidateDeviceURLs(linkforge.DeviceURLs{IOS: "x", Android: "y", Desktop: "z"}, selfHosts)
	var e *linkforge.Error
	if !errors.As(err, &e) || len(e.Fields) != 3 {
		t.Errorf("three bad device URLs: %v", err)
	}
}

func TestValidateLinkNewFields(t *testing.T) {
	l := &linkforge.Link{URL: "https://example.com/", Tags: []string{}, Title: "a\nb",
		DeviceURLs: linkforge.DeviceURLs{IOS: "ftp://x"}, ImportedClicks: -1}
	err := linkforge.ValidateLink(l, selfHosts)
	var e *linkforge.Error
	if !errors.As(err, &e) {
		t.Fatalf("ValidateLink = %v", err)
	}
	var got []string
	for _, f := range e.Fields {
		got = append(got, f.Field)
	}
	if want := "title device_urls.ios imported_clicks"; strings.Join(got, " ") != want {
		t.Errorf("fields = %q, want %q", got, want)
	}
}
