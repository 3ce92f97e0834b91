package linkforge_test

import (
	"bytes"
	"errors"
	"image"
	"image/png"
	"math"
	"testing"

	"github.com/linkforge/linkforge"
)

// TestParseQRColor: #rgb and #rrggbb in either case, canonical lowercase
// #rrggbb; anything else is a field error naming the field.
func TestParseQRColor(t *testing.T) {
	for in, want := range map[string]string{"#000": "#000000", "#FfF": "#ffffff", "#1A237e": "#1a237e", "#abc": "#aabbcc"} {
		if _, got, err := linkforge.ParseQRColor("fg", in); err != nil || got != want {
			t.Errorf("ParseQRColor(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, in := range []string{"", "#", "000", "#00", "#0000", "#00000g", "#1234567", "red", " #000", "#ＡＢＣ"} {
		if _, _, err := linkforge.ParseQRColor("bg", in); linkforge.ErrorCode(err) != linkforge.EInvalid || fieldOf(err) != "bg" {
			t.Errorf("ParseQRColor(%q) = %v; want an invalid bg", in, err)
		}
	}
}

func fieldOf(err error) string {
	var e *linkforge.Error
	if errors.As(err, &e) && len(e.Fields) > 0 {
		return e.Fields[0].Field
	}
	return ""
}

// TestCheckQRColors: the WCAG ratio of black on white is 21, of a colour
// on itself 1; dark on light at 3:1 or more passes, light on dark and low
// contrast are refused naming fg.
func TestCheckQRColors(t *testing.T) {
	black, _, _ := linkforge.ParseQRColor("fg", "#000")
	white, _, _ := linkforge.ParseQRColor("bg", "#fff")
	if r := linkforge.QRContrast(black, white); math.Abs(r-21) > 1e-9 {
		t.Errorf("black on white: %v, want 21", r)
	}
	if r := linkforge.QRContrast(white, white); r != 1 {
		t.Errorf("white on white: %v, want 1", r)
	}
	for _, tc := range []struct {
		fg, bg string
		ok     bool
	}{
		{"#000000", "#ffffff", true},
		{"#1a237e", "#fff8e1", true},
		{"#949494", "#ffffff", true},  // 3.03:1
		{"#999999", "#ffffff", false}, // 2.85:1
		{"#ffffff", "#000000", false}, // inverted
		{"#777777", "#777777", false},
	} {
		fg, _, _ := linkforge.ParseQRColor("fg", tc.fg)
		bg, _, _ := linkforge.ParseQRColor("bg", tc.bg)
		err := linkforge.CheckQRColors(fg, bg)
		if (err == nil) != tc.ok || err != nil && fieldOf(err) != "fg" {
			t.Errorf("CheckQRColors(%s on %s) = %v; want ok %v (ratio %.2f)", tc.fg, tc.bg, err, tc.ok, linkforge.QRContrast(fg, bg))
		}
	}
}

// TestValidateQRLogo: PNGs that decode within the size bound, SVGs that
// neither run nor fetch anything; the rest refused naming logo (413 over
// 256 KiB, 415 for another type).
func TestValidateQRLogo(t *testing.T) {
	pngOf := func(w, h int) []byte {
		var b bytes.Buffer
		if err := png.Encode(&b, image.NewGray(image.Rect(0, 0, w, h))); err != nil {
			t.Fatal(err)
		}
		return b.Bytes()
	}
	ok := []struct{ ctype, body string }{
		{linkforge.QRLogoPNG, string(pngOf(1, 1))},
		{linkforge.QRLogoPNG, string(pngOf(4096, 2))},
		{linkforge.QRLogoSVG, `<svg xmlns="http://www.w3.org/2000/svg"><defs><linearGradient id="g"/></defs><rect fill="url(#g)" style="fill: url('#g')"/><use href="#g"/></svg>`},
		{linkforge.QRLogoSVG, `<?xml version="1.0"?><!-- a comment --><svg><image href="data:image/png;base64,AAAA"/></svg>`},
	}
	for _, c := range ok {
		if err := linkforge.ValidateQRLogo(c.ctype, []byte(c.body)); err != nil {
			t.Errorf("ValidateQRLogo(%s %.60q) = %v; want nil", c.ctype, c.body, err)
		}
	}
	bad := []struct{ ctype, body, code string }{
		{linkforge.QRLogoPNG, "", linkforge.EInvalid},
		{linkforge.QRLogoPNG, "GIF89a", linkforge.EInvalid},
		{linkforge.QRLogoPNG, string(pngOf(4097, 1)), linkforge.EInvalid},
		{linkforge.QRLogoPNG, string(pngOf(2, 2)[:40]), linkforge.EInvalid}, // truncated
		{linkforge.QRLogoPNG, string(make([]byte, linkforge.QRMaxLogoBytes+1)), linkforge.ETooLarge},
		{linkforge.QRLogoSVG, `<svg><script>alert(1)</script></svg>`, linkforge.EInvalid},
		{linkforge.QRLogoSVG, `<svg><SCRIPT/></svg>`, linkforge.EInvalid},
		{linkforge.QRLogoSVG, `<svg><g onclick="x()"/></svg>`, linkforge.EInvalid},
		{linkforge.QRLogoSVG, `<svg><foreignObject><p/></foreignObject></svg>`, linkforge.EInvalid},
		{linkforge.QRLogoSVG, `<svg><a href="javascript:alert(1)"/></svg>`, linkforge.EInvalid},
		{linkforge.QRLogoSVG, `<svg><use href="other.svg#x"/></svg>`, linkforge.EInvalid},
		{linkforge.QRLogoSVG, `<svg><image href="data:text/html,x"/></svg>`, linkforge.EInvalid},
		{linkforge.QRLogoSVG, `<svg><style>rect { fill: url( "https://e.example/x" ) }</style></svg>`, linkforge.EInvalid},
		{linkforge.QRLogoSVG, `<svg><style>@IMPORT "x.css";</style></svg>`, linkforge.EInvalid},
		{linkforge.QRLogoSVG, `<!DOCTYPE svg SYSTEM "http://e.example/x.dtd"><svg/>`, linkforge.EInvalid},
		{linkforge.QRLogoSVG, `<html/>`, linkforge.EInvalid},
		{linkforge.QRLogoSVG, `just text`, linkforge.EInvalid},
		{linkforge.QRLogoSVG, `<svg>`, linkforge.EInvalid},
		{"image/gif", "GIF89a", linkforge.EUnsupportedMediaType},
	}
	for _, c := range bad {
		err := linkforge.ValidateQRLogo(c.ctype, []byte(c.body))
		if linkforge.ErrorCode(err) != c.code || c.code != linkforge.EUnsupportedMediaType && fieldOf(err) != "logo" {
			t.Errorf("ValidateQRLogo(%s %.60q) = %v; want %s naming logo", c.ctype, c.body, err, c.code)
		}
	}
}
