package linkforge_test

import (
	"testing"

	"github.com/linkforge/linkforge"
)

// TestValidateTargetURLFor: a listed scheme passes with the generic
// checks; http(s) keep every rule; a scheme not listed, or one that runs
// code even if listed, gets ValidateTargetURL's error.
func TestValidateTargetURLFor(t *testing.T) {
	schemes := []string{"mailto", "tel", "myapp", "javascript"}
	for raw, ok := range map[string]bool{
		"mailto:sales@example.com?subject=Hi": true,
		"MAILTO:sales@example.com":            true,
		"tel:+15551234":                       true,
		"myapp://open/item?id=7":              true,
		"https://example.com/":                true,
		"mailto:":                             false,
		"mailto:a b@example.com":              false,
		"sms:+15551234":                       false,
		"javascript:alert(1)":                 false,
		"JavaScript:alert(1)":                 false,
		"data:text/html,hi":                   false,
		"https://user@example.com/":           false,
		"example.com":                         false,
	} {
		if err := linkforge.ValidateTargetURLFor("url", raw, nil, schemes); (err == nil) != ok {
			t.Errorf("%q: %v, want ok=%v", raw, err, ok)
		}
	}
	if err := linkforge.ValidateTargetURL("url", "mailto:a@example.com", nil); err == nil {
		t.Error("ValidateTargetURL accepted mailto: without an allowlist")
	}
}

// TestTargetURLHostOfMailto: the blocklist's host of a mailto: target is
// its address's domain; tel: has none.
func TestTargetURLHostOfMailto(t *testing.T) {
	if h, err := linkforge.TargetURLHost("mailto:x@Evil.Example?subject=hi"); err != nil || h != "evil.example" {
		t.Errorf("mailto: host %q, %v; want evil.example", h, err)
	}
	if h, err := linkforge.TargetURLHost("myapp://Open.Example/x"); err != nil || h != "open.example" {
		t.Errorf("app URL host %q, %v", h, err)
	}
	if h, err := linkforge.TargetURLHost("tel:+15551234"); err == nil {
		t.Errorf("tel: host %q, want an error (none)", h)
	}
	if !linkforge.IsWebURL("HTTPS://example.com") || linkforge.IsWebURL("mailto:x@example.com") || linkforge.IsWebURL("example.com") {
		t.Error("IsWebURL")
	}
}

// TestValidateTargetSchemes: the list's bounds and forbidden schemes.
func TestValidateTargetSchemes(t *testing.T) {
	if err := linkforge.ValidateTargetSchemes([]string{"mailto", "tel", "my-app+v2.x"}); err != nil {
		t.Errorf("valid list: %v", err)
	}
	many := make([]string, linkforge.MaxTargetSchemes+1)
	for i := range many {
		many[i] = "s" + string(rune('a'+i))
	}
	for _, bad := range [][]string{{"javascript"}, {"vbscript"}, {"blob"}, {"file"}, {"Mailto"}, {"1app"}, {""}, {"http"}, {"a", "a"}, many} {
		if linkforge.ErrorCode(linkforge.ValidateTargetSchemes(bad)) != linkforge.EInvalid {
			t.Errorf("%q accepted", bad)
		}
	}
}
