package main

import (
	"bytes"
	"image"
	"image/color"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/makiuchi-d/gozxing"
	"github.com/makiuchi-d/gozxing/qrcode"

	"github.com/linkforge/linkforge/client"
)

// TestQRCommands: qr defaults sets and unsets, qr logo set and delete,
// link qr writes a code with the tenant's logo and the flags' colours that
// decodes to the short URL with ?qr=1; bad values are refused.
func TestQRCommands(t *testing.T) {
	srv := startAPIServer(t)
	env := map[string]string{"LINKFORGE_SERVER": srv.url, "LINKFORGE_TOKEN": srv.token}
	out, _ := runLink(t, env, exitOK, "link", "create", "--url", "https://example.com/q", "--slug", "q", "--json")
	l := mustJSONOut[client.Link](t, out)

	out, _ = runLink(t, env, exitOK, "qr", "defaults", "--fg", "#1A237E", "--margin", "2")
	if out != "fg #1a237e\nbg -\nec -\nmargin 2\nlogo -\n" {
		t.Errorf("qr defaults: %q", out)
	}
	out, _ = runLink(t, env, exitOK, "qr", "defaults", "--margin", "none", "--json")
	if d := mustJSONOut[client.QRDefaults](t, out); d.FG == nil || *d.FG != "#1a237e" || d.Margin != nil {
		t.Errorf("qr defaults --margin none: %+v", d)
	}

	dir := t.TempDir()
	logo := image.NewRGBA(image.Rect(0, 0, 16, 16))
	grey := color.RGBA{0x80, 0x80, 0x80, 0xff}
	for i := 0; i < len(logo.Pix); i += 4 {
		copy(logo.Pix[i:], []byte{grey.R, grey.G, grey.B, grey.A})
	}
	var lb bytes.Buffer
	if err := png.Encode(&lb, logo); err != nil {
		t.Fatal(err)
	}
	logoFile := filepath.Join(dir, "logo.png")
	if err := os.WriteFile(logoFile, lb.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	runLink(t, env, exitOK, "qr", "logo", "set", logoFile)

	file := filepath.Join(dir, "q.png")
	runLink(t, env, exitOK, "link", "qr", "q", "--out", file, "--bg", "#fff8e1", "--ec", "L", "--size", "400")
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	bmp, _ := gozxing.NewBinaryBitmapFromImage(img)
	res, err := qrcode.NewQRCodeReader().Decode(bmp, map[gozxing.DecodeHintType]any{gozxing.DecodeHintType_PURE_BARCODE: true})
	if err != nil || res.GetText() != l.ShortURL+"?qr=1" {
		t.Fatalf("link qr's code: %v, %v; want %s?qr=1", res, err, l.ShortURL)
	}
	if c := color.RGBAModel.Convert(img.At(200, 200)).(color.RGBA); c != grey {
		t.Errorf("the centre is %v, want the logo", c)
	}
	out, _ = runLink(t, env, exitOK, "link", "qr", "q", "--out", "-", "--format", "svg")
	if !strings.HasPrefix(out, "<svg") || !strings.Contains(out, `fill="#1a237e"`) || !strings.Contains(out, "data:image/png;base64,") {
		t.Errorf("link qr --format svg: %.200s", out)
	}
	runLink(t, env, exitOK, "qr", "logo", "delete")
	out, _ = runLink(t, env, exitOK, "qr", "defaults", "--fg", "none")
	if out != "fg -\nbg -\nec -\nmargin -\nlogo -\n" {
		t.Errorf("after unsetting: %q", out)
	}

	_, errOut := runLink(t, env, exitFailure, "link", "qr", "q", "--out", file, "--fg", "#eeeeee")
	if !strings.Contains(errOut, "HTTP 400") || !strings.Contains(errOut, "fg") {
		t.Errorf("low contrast: %q", errOut)
	}
	runLink(t, env, exitUsage, "link", "qr", "q")
	runLink(t, env, exitUsage, "qr", "defaults", "--margin", "-1")
}
