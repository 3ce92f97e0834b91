package web_test

import (
	"bytes"
	"encoding/xml"
	"image"
	"image/png"
	"net/http"
	"strconv"
	"testing"

	"github.com/makiuchi-d/gozxing"
	"github.com/makiuchi-d/gozxing/qrcode"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/internal/testdb"
)

// decodeQR reads the text of the QR code in a PNG with gozxing, a decoder
// independent of the encoder the server uses.
func decodeQR(t *testing.T, body []byte) (string, image.Image) {
	t.Helper()
	img, err := png.Decode(bytes.NewReader(body))
	if err != nil {
		t.Fatalf("decode PNG: %v", err)
	}
	bmp, err := gozxing.NewBinaryBitmapFromImage(img)
	if err != nil {
		t.Fatalf("binarize: %v", err)
	}
	res, err := qrcode.NewQRCodeReader().Decode(bmp, map[gozxing.DecodeHintType]any{gozxing.DecodeHintType_PURE_BARCODE: true})
	if err != nil {
		t.Fatalf("decode QR code: %v", err)
	}
	return res.GetText(), img
}

// TestLinkQR: the PNG decodes back to short_url?qr=1 at every size, is exactly
// size×size, the SVG is well-formed with that size, the ETag revalidates
// with 304, and bad parameters are problems naming the parameter.
func TestLinkQR(t *testing.T) {
	testdb.Each(t, func(t *testing.T, s linkforge.Store) {
		t.Parallel()
		e := newEnv(t, s)
		_, tok := mustTenantToken(t, s, "acme")
		_, otherTok := mustTenantToken(t, s, "other")
		link := e.mustCreate(tok, `{"slug":"qr-me","url":"https://example.com/q","password":"pw"}`)

		for _, size := range []int{64, 256, 1000, 2048} {
			r := e.do(http.MethodGet, "/api/v1/links/qr-me/qr?format=png&size="+strconv.Itoa(size), tok, "")
			mustStatus(t, r, http.StatusOK)
			if ct := r.header.Get("Content-Type"); ct != "image/png" {
				t.Errorf("size %d: Content-Type = %q", size, ct)
			}
			text, img := decodeQR(t, r.body)
			if text != link.ShortURL+"?qr=1" {
				t.Errorf("size %d: the code says %q, want short_url?qr=1 %q", size, text, link.ShortURL)
			}
			if b := img.Bounds(); b.Dx() != size || b.Dy() != size {
				t.Errorf("size %d: image is %dx%d", size, b.Dx(), b.Dy())
			}
		}
		// The default is a 256 px PNG.
		def := e.do(http.MethodGet, "/api/v1/links/qr-me/qr", tok, "")
		mustStatus(t, def, http.StatusOK)
		if text, img := decodeQR(t, def.body); text != link.ShortURL+"?qr=1" || img.Bounds().Dx() != 256 {
			t.Errorf("default: %q, %v", text, img.Bounds())
		}

		svg := e.do(http.MethodGet, "/api/v1/links/qr-me/qr?format=svg&size=300", tok, "")
		mustStatus(t, svg, http.StatusOK)
		if ct := svg.header.Get("Content-Type"); ct != "image/svg+xml" {
			t.Errorf("svg Content-Type = %q", ct)
		}
		var root struct {
			XMLName xml.Name
			Width   string `xml:"width,attr"`
			Height  string `xml:"height,attr"`
			ViewBox string `xml:"viewBox,attr"`
			Paths   []struct {
				D string `xml:"d,attr"`
			} `xml:"path"`
		}
		if err := xml.Unmarshal(svg.body, &root); err != nil {
			t.Fatalf("svg is not XML: %v\n%s", err, svg.body)
		}
		if root.XMLName.Local != "svg" || root.Width != "300" || root.Height != "300" || root.ViewBox == "" ||
			len(root.Paths) == 0 || root.Paths[0].D == "" {
			t.Errorf("svg root = %+v", root)
		}

		// Revalidation: the same inputs are the same ETag, answered 304;
		// another size or format is another ETag.
		etag := def.header.Get("ETag")
		if etag == "" || def.header.Get("Cache-Control") == "" {
			t.Fatalf("no ETag or Cache-Control: %v", def.header)
		}
		req, _ := http.NewRequest(http.MethodGet, e.url+"/api/v1/links/qr-me/qr", nil)
		req.Header.Set("Authorization", "Bearer "+tok)
		req.Header.Set("If-None-Match", `"other", `+etag)
		r := e.send(req)
		mustStatus(t, r, http.StatusNotModified)
		if len(r.body) != 0 || r.header.Get("ETag") != etag {
			t.Errorf("304: body %d bytes, ETag %q", len(r.body), r.header.Get("ETag"))
		}
		if again := e.do(http.MethodGet, "/api/v1/links/qr-me/qr?size=256&format=png", tok, ""); again.header.Get("ETag") != etag || !bytes.Equal(again.body, def.body) {
			t.Error("the same image has another ETag or other bytes")
		}
		seen := map[string]bool{etag: true}
		for _, q := range []string{"?size=257", "?format=svg"} {
			tag := e.do(http.MethodGet, "/api/v1/links/qr-me/qr"+q, tok, "").header.Get("ETag")
			if seen[tag] {
				t.Errorf("%s: ETag %q repeats", q, tag)
			}
			seen[tag] = true
		}

		bad := []struct{ query, field string }{
			{"?size=63", "size"},
			{"?size=2049", "size"},
			{"?size=abc", "size"},
			{"?format=gif", "format"},
			{"?format=SVG", "format"},
			{"?colour=red", "colour"},
		}
		for _, b := range bad {
			mustProblem(t, e.do(http.MethodGet, "/api/v1/links/qr-me/qr"+b.query, tok, ""), http.StatusBadRequest, b.field)
		}
		mustProblem(t, e.do(http.MethodGet, "/api/v1/links/qr-me/qr", otherTok, ""), http.StatusNotFound, "")
		mustProblem(t, e.do(http.MethodGet, "/api/v1/links/nope/qr", tok, ""), http.StatusNotFound, "")
		mustProblem(t, e.do(http.MethodGet, "/api/v1/links/qr-me/qr", "", ""), http.StatusUnauthorized, "")
	})
}
