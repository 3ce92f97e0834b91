package web_test

import (
	"bytes"
	"image"
	"image/color"
	"image/png"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/internal/testdb"
	"github.com/linkforge/linkforge/web"
)

// putLogo sends a logo of the given Content-Type to path.
func (e *env) putLogo(path, token, contentType string, body []byte) response {
	e.t.Helper()
	req, err := http.NewRequest(http.MethodPut, e.url+path, bytes.NewReader(body))
	if err != nil {
		e.t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", contentType)
	return e.send(req)
}

// testLogoPNG is a w×h PNG of one colour.
func testLogoPNG(t *testing.T, w, h int, c color.Color) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for y := range h {
		for x := range w {
			img.Set(x, y, c)
		}
	}
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// rgb is an image's pixel as an opaque RGBA.
func rgb(img image.Image, x, y int) color.RGBA {
	r, g, b, _ := img.At(x, y).RGBA()
	return color.RGBA{uint8(r >> 8), uint8(g >> 8), uint8(b >> 8), 0xff} //nolint:gosec // G115: 16-bit values shifted to 8
}

// firstDark is the first pixel along the image's diagonal that differs
// from its corner: the top-left finder pattern's corner, whose position
// tells the margin and whose colour is fg.
func firstDark(img image.Image) (int, color.RGBA) {
	bg := rgb(img, 0, 0)
	for i := range img.Bounds().Dx() {
		if c := rgb(img, i, i); c != bg {
			return i, c
		}
	}
	return -1, bg
}

var (
	navy  = color.RGBA{0x1a, 0x23, 0x7e, 0xff}
	cream = color.RGBA{0xff, 0xf8, 0xe1, 0xff}
	red   = color.RGBA{0xe5, 0x39, 0x35, 0xff}
)

// TestBrandedQR: colours, error correction and margin from the query; a
// PNG code with a logo and custom colours still decodes to short_url?qr=1
// and shows the logo in its centre; the SVG embeds it as a data: URI; bad
// colours, low contrast, inverted colours, an oversize logo and SVG logos
// that could run or fetch something are refused naming the field.
func TestBrandedQR(t *testing.T) {
	testdb.Each(t, func(t *testing.T, s linkforge.Store) {
		t.Parallel()
		e := newEnv(t, s)
		_, tok := mustTenantToken(t, s, "acme")
		_, otherTok := mustTenantToken(t, s, "other")
		link := e.mustCreate(tok, `{"slug":"brand","url":"https://example.com/b"}`)
		want := link.ShortURL + "?qr=1"
		const qr = "/api/v1/links/brand/qr"

		r := e.do(http.MethodGet, qr+"?fg=%231a237e&bg=%23FFF8E1&ec=Q&margin=2&size=300", tok, "")
		mustStatus(t, r, http.StatusOK)
		text, img := decodeQR(t, r.body)
		if text != want {
			t.Errorf("coloured code says %q, want %q", text, want)
		}
		pos, fg := firstDark(img)
		if bg := rgb(img, 0, 0); bg != cream || fg != navy {
			t.Errorf("colours: bg %v fg %v, want %v and %v", bg, fg, cream, navy)
		}
		wide, _ := firstDark(mustImage(t, e.do(http.MethodGet, qr+"?margin=8&size=300", tok, "")))
		if wide <= pos {
			t.Errorf("the finder starts at %d px with margin 8, at %d with 2", wide, pos)
		}
		plain := e.do(http.MethodGet, qr+"?size=300", tok, "").header.Get("ETag")

		bad := []struct{ query, field string }{
			{"?fg=red", "fg"}, {"?fg=%2312", "fg"}, {"?bg=%23ggg", "bg"}, {"?fg=1a237e", "fg"},
			{"?ec=X", "ec"}, {"?ec=h", "ec"}, {"?margin=17", "margin"}, {"?margin=-1", "margin"}, {"?margin=x", "margin"},
			{"?fg=%23777777&bg=%23888888", "fg"}, // contrast 1.2:1
			{"?fg=%23ffffff&bg=%23000000", "fg"}, // inverted
			{"?fg=%23999999", "fg"},              // 2.8:1 on the default white
		}
		for _, b := range bad {
			mustProblem(t, e.do(http.MethodGet, qr+b.query, tok, ""), http.StatusBadRequest, b.field)
		}

		// A PNG logo: H, drawn in the middle, the code still reads.
		logo := testLogoPNG(t, 80, 40, red)
		mustStatus(t, e.putLogo("/api/v1/qr/logo", tok, "image/png", logo), http.StatusNoContent)
		got := e.do(http.MethodGet, "/api/v1/qr/logo", tok, "")
		mustStatus(t, got, http.StatusOK)
		if !bytes.Equal(got.body, logo) || got.header.Get("Content-Type") != "image/png" {
			t.Errorf("GET logo: %s, %d bytes", got.header.Get("Content-Type"), len(got.body))
		}
		mustProblem(t, e.do(http.MethodGet, "/api/v1/qr/logo", otherTok, ""), http.StatusNotFound, "")
		for _, size := range []int{256, 600} {
			r := e.do(http.MethodGet, qr+"?fg=%231a237e&bg=%23fff8e1&ec=L&size="+strconv.Itoa(size), tok, "")
			mustStatus(t, r, http.StatusOK)
			text, img := decodeQR(t, r.body)
			if text != want {
				t.Errorf("size %d with a logo: the code says %q, want %q", size, text, want)
			}
			if c := rgb(img, size/2, size/2); c != red {
				t.Errorf("size %d: the centre is %v, want the logo's %v", size, c, red)
			}
			if r.header.Get("ETag") == plain {
				t.Error("the logo did not change the ETag")
			}
		}
		svg := e.do(http.MethodGet, qr+"?format=svg", tok, "")
		mustStatus(t, svg, http.StatusOK)
		if !strings.Contains(string(svg.body), `<image `) || !strings.Contains(string(svg.body), "data:image/png;base64,") {
			t.Errorf("svg with a logo has no data: image: %.300s", svg.body)
		}

		// Logos refused.
		big := append(testLogoPNG(t, 8, 8, red), make([]byte, 256<<10)...)
		req, _ := http.NewRequest(http.MethodPut, e.url+"/api/v1/qr/logo", bytes.NewReader(big))
		req.Header.Set("Authorization", "Bearer "+tok)
		req.Header.Set("Content-Type", "image/png")
		mustProblem(t, e.sendOversize(req, true), http.StatusRequestEntityTooLarge, "logo")
		refused := []struct{ ctype, body string }{
			{"image/png", "not a png"},
			{"image/svg+xml", `<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>`},
			{"image/svg+xml", `<svg xmlns="http://www.w3.org/2000/svg" onload="alert(1)"/>`},
			{"image/svg+xml", `<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink"><image xlink:href="https://evil.example/x.png"/></svg>`},
			{"image/svg+xml", `<svg xmlns="http://www.w3.org/2000/svg"><style>@import url(https://evil.example/a.css);</style></svg>`},
			{"image/svg+xml", `<svg xmlns="http://www.w3.org/2000/svg"><rect style="fill:url(https://evil.example/#p)"/></svg>`},
			{"image/svg+xml", `<?xml version="1.0"?><!DOCTYPE svg [<!ENTITY x "y">]><svg/>`},
			{"image/svg+xml", `<html><svg/></html>`},
			{"image/svg+xml", `<svg><g></svg>`},
		}
		for _, b := range refused {
			mustProblem(t, e.putLogo("/api/v1/qr/logo", tok, b.ctype, []byte(b.body)), http.StatusBadRequest, "logo")
		}
		mustProblem(t, e.putLogo("/api/v1/qr/logo", tok, "text/plain", logo), http.StatusUnsupportedMediaType, "")
		if got := e.do(http.MethodGet, "/api/v1/qr/logo", tok, ""); !bytes.Equal(got.body, logo) {
			t.Error("a refused logo replaced the stored one")
		}

		// An SVG logo: embedded in the SVG code; a PNG code cannot draw it.
		vec := `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 2 2"><circle cx="1" cy="1" r="1" fill="#e53935"/><use href="#a"/></svg>`
		mustStatus(t, e.putLogo("/api/v1/qr/logo", tok, "image/svg+xml", []byte(vec)), http.StatusNoContent)
		if svg := e.do(http.MethodGet, qr+"?format=svg", tok, ""); !strings.Contains(string(svg.body), "data:image/svg+xml;base64,") {
			t.Errorf("svg with an SVG logo: %.300s", svg.body)
		}
		mustProblem(t, e.do(http.MethodGet, qr+"?format=png", tok, ""), http.StatusBadRequest, "format")

		mustStatus(t, e.do(http.MethodDelete, "/api/v1/qr/logo", tok, ""), http.StatusNoContent)
		mustProblem(t, e.do(http.MethodGet, "/api/v1/qr/logo", tok, ""), http.StatusNotFound, "")
		if r := e.do(http.MethodGet, qr+"?size=300", tok, ""); r.header.Get("ETag") != plain {
			t.Error("without the logo the code is not the plain one again")
		}
	})
}

// TestQRDefaultsPrecedence: the query overrides the link's domain's
// defaults, which override the tenant's; a domain's logo replaces the
// tenant's for its links only; defaults are checked like the query.
func TestQRDefaultsPrecedence(t *testing.T) {
	testdb.Each(t, func(t *testing.T, s linkforge.Store) {
		t.Parallel()
		e := newEnv(t, s, verifyNone)
		_, tok := mustTenantToken(t, s, "acme")
		_, otherTok := mustTenantToken(t, s, "other")
		mustStatus(t, e.do(http.MethodPost, "/api/v1/domains", tok, `{"host":"go.acme.com"}`), http.StatusCreated)
		e.mustCreate(tok, `{"slug":"p","url":"https://example.com/p"}`)
		e.mustCreate(tok, `{"slug":"d","url":"https://example.com/d","domain":"go.acme.com"}`)
		colour := func(path string) color.RGBA {
			t.Helper()
			r := e.do(http.MethodGet, path, tok, "")
			mustStatus(t, r, http.StatusOK)
			text, img := decodeQR(t, r.body)
			if !strings.HasSuffix(text, "?qr=1") {
				t.Errorf("%s: the code says %q", path, text)
			}
			_, fg := firstDark(img)
			return fg
		}
		black := color.RGBA{0, 0, 0, 0xff}
		if c := colour("/api/v1/links/d/qr?domain=go.acme.com"); c != black {
			t.Errorf("no defaults: fg %v", c)
		}
		r := e.do(http.MethodPut, "/api/v1/qr/defaults", tok, `{"fg":"#000080","bg":"#fff","margin":1}`)
		mustStatus(t, r, http.StatusOK)
		if d := mustJSON[map[string]any](t, r); d["fg"] != "#000080" || d["bg"] != "#ffffff" || d["margin"] != 1.0 || d["ec"] != nil || d["logo_type"] != nil {
			t.Errorf("PUT tenant defaults = %v", d)
		}
		mustStatus(t, e.do(http.MethodPut, "/api/v1/domains/go.acme.com/qr/defaults", tok, `{"fg":"#800000"}`), http.StatusOK)
		if d := mustJSON[map[string]any](t, e.do(http.MethodGet, "/api/v1/domains/go.acme.com/qr/defaults", tok, "")); d["fg"] != "#800000" || d["bg"] != nil {
			t.Errorf("GET domain defaults = %v", d)
		}
		navyDark, maroon, green := color.RGBA{0, 0, 0x80, 0xff}, color.RGBA{0x80, 0, 0, 0xff}, color.RGBA{0, 0x40, 0, 0xff}
		if c := colour("/api/v1/links/p/qr"); c != navyDark {
			t.Errorf("public link: fg %v, want the tenant's %v", c, navyDark)
		}
		if c := colour("/api/v1/links/d/qr?domain=go.acme.com"); c != maroon {
			t.Errorf("domain link: fg %v, want the domain's %v", c, maroon)
		}
		if c := colour("/api/v1/links/d/qr?domain=go.acme.com&fg=%23004000"); c != green {
			t.Errorf("domain link with ?fg: fg %v, want the query's %v", c, green)
		}
		// The tenant's margin 1 reaches the domain's link (the domain sets none).
		at := func(path string) int {
			n, _ := firstDark(mustImage(t, e.do(http.MethodGet, path, tok, "")))
			return n
		}
		if m1, m4 := at("/api/v1/links/d/qr?domain=go.acme.com"), at("/api/v1/links/d/qr?domain=go.acme.com&margin=4"); m1 >= m4 {
			t.Errorf("the tenant's margin 1 not used: finder at %d px, %d with margin 4", m1, m4)
		}

		// A domain's logo is its links' only.
		mustStatus(t, e.putLogo("/api/v1/domains/go.acme.com/qr/logo", tok, "image/png", testLogoPNG(t, 10, 10, red)), http.StatusNoContent)
		if img := mustImage(t, e.do(http.MethodGet, "/api/v1/links/d/qr?domain=go.acme.com", tok, "")); rgb(img, 128, 128) != red {
			t.Errorf("domain link: centre %v, want the domain's logo", rgb(img, 128, 128))
		}
		if img := mustImage(t, e.do(http.MethodGet, "/api/v1/links/p/qr", tok, "")); rgb(img, 128, 128) == red {
			t.Error("the public link has the domain's logo")
		}
		mustStatus(t, e.do(http.MethodDelete, "/api/v1/domains/go.acme.com/qr/logo", tok, ""), http.StatusNoContent)

		for _, b := range []struct{ body, field string }{
			{`{"fg":"#eeeeee"}`, "fg"}, // on the default white
			{`{"bg":"#111"}`, "fg"},    // the default black on it
			{`{"fg":"navy"}`, "fg"}, {`{"ec":"Z"}`, "ec"}, {`{"margin":17}`, "margin"}, {`{"margin":"1"}`, "margin"},
			{`{"colour":"#000"}`, "colour"}, {`{"colour":null}`, "colour"}, {`{"fg":1}`, "fg"},
		} {
			mustProblem(t, e.do(http.MethodPut, "/api/v1/qr/defaults", tok, b.body), http.StatusBadRequest, b.field)
		}
		if d := mustJSON[map[string]any](t, e.do(http.MethodGet, "/api/v1/qr/defaults", tok, "")); d["fg"] != "#000080" {
			t.Errorf("refused PUTs changed the defaults: %v", d)
		}
		mustProblem(t, e.do(http.MethodGet, "/api/v1/domains/go.acme.com/qr/defaults", otherTok, ""), http.StatusNotFound, "")
		mustProblem(t, e.do(http.MethodPut, "/api/v1/domains/go.acme.com/qr/defaults", otherTok, `{}`), http.StatusNotFound, "")
		if d := mustJSON[map[string]any](t, e.do(http.MethodGet, "/api/v1/qr/defaults", otherTok, "")); d["fg"] != nil {
			t.Errorf("another tenant sees defaults %v", d)
		}
		// PUT {} unsets everything: black on white again.
		mustStatus(t, e.do(http.MethodPut, "/api/v1/qr/defaults", tok, `{}`), http.StatusOK)
		if c := colour("/api/v1/links/p/qr"); c != black {
			t.Errorf("after PUT {}: fg %v", c)
		}
	})
}

func mustImage(t *testing.T, r response) image.Image {
	t.Helper()
	mustStatus(t, r, http.StatusOK)
	_, img := decodeQR(t, r.body)
	return img
}

// TestQRCodeSurvivesRename: a branded code (colours, a logo) printed
// before PATCH {"slug"} is decoded, and its whole content, ?qr=1
// included, followed through the server after the rename: the same
// target, counted to the same link.
func TestQRCodeSurvivesRename(t *testing.T) {
	testdb.Each(t, func(t *testing.T, s linkforge.Store) {
		t.Parallel()
		ctr := mustCounter(t, s)
		e := newEnv(t, s, func(c *web.Config) { useCounter(c, ctr.Counter) })
		_, tok := mustTenantToken(t, s, "acme")
		link := e.mustCreate(tok, `{"slug":"poster","url":"https://example.com/spring"}`)
		id, _ := strconv.ParseInt(link.ID, 10, 64)
		mustStatus(t, e.putLogo("/api/v1/qr/logo", tok, "image/png", testLogoPNG(t, 32, 32, red)), http.StatusNoContent)
		r := e.do(http.MethodGet, "/api/v1/links/poster/qr?fg=%231a237e&bg=%23fff8e1&size=512", tok, "")
		mustStatus(t, r, http.StatusOK)
		printed, _ := decodeQR(t, r.body)
		if printed != link.ShortURL+"?qr=1" {
			t.Fatalf("the printed code says %q", printed)
		}
		u := mustURL(t, printed)

		mustStatus(t, e.do(http.MethodPatch, "/api/v1/links/poster", tok, `{"slug":"poster-2027"}`), http.StatusOK)
		mustRedirect(t, e.do(http.MethodGet, u.RequestURI(), "", ""), "https://example.com/spring")
		if n := ctr.count(t, id); n != 1 {
			t.Errorf("the scan counted %d clicks to the link, want 1", n)
		}
		// The new slug's code is another image with the new content.
		text, _ := decodeQR(t, e.do(http.MethodGet, "/api/v1/links/poster-2027/qr", tok, "").body)
		if !strings.HasSuffix(text, "/poster-2027?qr=1") {
			t.Errorf("the renamed link's code says %q", text)
		}
	})
}
