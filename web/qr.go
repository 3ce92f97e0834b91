package web

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"image"
	"image/color"
	"image/draw"
	"image/png"
	"net/http"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"
	goqr "github.com/piglig/go-qr"

	"github.com/linkforge/linkforge"
)

// QR codes of short links: GET /api/v1/links/{slug}/qr?format=svg|png&size=
// &fg=&bg=&ec=&margin=.
//
// The symbol is encoded by github.com/piglig/go-qr (a port of Nayuki's
// reference-quality encoder: maintained, no dependencies). ADR 011 says why
// it was chosen over the other two candidates. Both images are drawn here
// from the module matrix: the PNG as exactly size×size pixels, whole pixels
// per module (a two-colour paletted image unless a logo is composed in),
// the SVG as one path scaled by its viewBox. The code encodes the short URL
// with ?qr=1, which tells the redirect a scan from a click.
//
// Colours, error correction and margin come from the query, else the
// link's domain's defaults, else the tenant's (qrsettings.go), else black
// on white, M and 4. A logo (the domain's, else the tenant's) raises error
// correction to H and is drawn on a bg-coloured pad in the centre.

const (
	qrMinSize     = 64
	qrMaxSize     = 2048
	qrDefaultSize = 256
	// qrQuiet is the default quiet zone around the symbol, in modules:
	// the 4 the QR specification requires for reliable scanning.
	qrQuiet = 4
	// qrVersion changes whenever the rendering does, so that ETags of the
	// old images stop matching. 2: ?qr=1 in the content, colours, logos.
	qrVersion = "2"
	// qrScanParam is what the code appends to the short URL.
	qrScanParam = "qr=1"
	// qrLogoShare is the pad's side as a share of the symbol's: a third,
	// so the pad covers at most 1/9 (11%) of the symbol, well within what
	// error correction H (30% of codewords) recovers, and away from the
	// finder patterns in the corners.
	qrLogoShare = 3
)

var qrCacheControl = "private, max-age=86400"

// qrStyle is what a code is drawn with, every option resolved.
type qrStyle struct {
	fg, bg       color.RGBA
	fgHex, bgHex string
	ec           string
	margin       int
	logo         []byte
	logoType     string
}

// qrQueryOptions reads fg, bg, ec and margin of the query, each checked.
func qrQueryOptions(c echo.Context) (linkforge.QRSettings, error) {
	var (
		fe fieldErrors
		o  linkforge.QRSettings
	)
	for _, f := range []struct {
		name string
		dst  *string
	}{{"fg", &o.FG}, {"bg", &o.BG}} {
		if v := c.QueryParam(f.name); v != "" {
			if _, hex, err := linkforge.ParseQRColor(f.name, v); err != nil {
				fe.addErr(err)
			} else {
				*f.dst = hex
			}
		}
	}
	if v := c.QueryParam("ec"); v != "" {
		if !linkforge.ValidQREC(v) {
			fe.add("ec", `must be "L", "M", "Q" or "H"`)
		}
		o.EC = v
	}
	if v := c.QueryParam("margin"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 || n > linkforge.QRMaxMargin {
			fe.add("margin", fmt.Sprintf("must be an integer from 0 to %d (modules)", linkforge.QRMaxMargin))
		}
		o.Margin = &n
	}
	if len(fe) > 0 {
		return o, linkforge.InvalidFields(fe)
	}
	return o, nil
}

// resolveQRStyle merges the levels, first set wins, and checks the
// colours the code will have. The logo is the first level's that has one.
func resolveQRStyle(levels ...linkforge.QRSettings) (qrStyle, error) {
	st := qrStyle{fgHex: "#000000", bgHex: "#ffffff", ec: "M", margin: qrQuiet}
	var fgSet, bgSet, ecSet, marginSet, logoSet bool
	for _, l := range levels {
		if !fgSet && l.FG != "" {
			st.fgHex, fgSet = l.FG, true
		}
		if !bgSet && l.BG != "" {
			st.bgHex, bgSet = l.BG, true
		}
		if !ecSet && l.EC != "" {
			st.ec, ecSet = l.EC, true
		}
		if !marginSet && l.Margin != nil {
			st.margin, marginSet = *l.Margin, true
		}
		if !logoSet && l.Logo != nil {
			st.logo, st.logoType, logoSet = l.Logo, l.LogoType, true
		}
	}
	var err error
	if st.fg, _, err = linkforge.ParseQRColor("fg", st.fgHex); err != nil {
		return st, err
	}
	if st.bg, _, err = linkforge.ParseQRColor("bg", st.bgHex); err != nil {
		return st, err
	}
	if err := linkforge.CheckQRColors(st.fg, st.bg); err != nil {
		return st, err
	}
	if st.logo != nil {
		st.ec = "H" // the pad hides modules: the most recovery there is
	}
	return st, nil
}

func qrECC(ec string) goqr.Ecc {
	switch ec {
	case "L":
		return goqr.Low
	case "Q":
		return goqr.Quartile
	case "H":
		return goqr.High
	}
	return goqr.Medium
}

func (s *Server) linkQR(c echo.Context) error {
	format := c.QueryParam("format")
	switch format {
	case "":
		format = "png"
	case "png", "svg":
	default:
		return linkforge.InvalidField("format", `must be "svg" or "png"`)
	}
	size := qrDefaultSize
	if v := c.QueryParam("size"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < qrMinSize || n > qrMaxSize {
			return linkforge.InvalidField("size", fmt.Sprintf("must be an integer from %d to %d (pixels)", qrMinSize, qrMaxSize))
		}
		size = n
	}
	opts, err := qrQueryOptions(c)
	if err != nil {
		return err
	}
	slug := c.Param("slug")
	// The link must be the tenant's: another tenant's slug is 404 like
	// every other route of the admin API.
	l, err := s.addressedLink(c)
	if err != nil {
		return fmt.Errorf("qr code: %w", err)
	}
	ctx := c.Request().Context()
	levels := []linkforge.QRSettings{opts}
	if l.DomainID != linkforge.PublicDomainID {
		d, err := s.store.QRSettings(ctx, l.TenantID, l.DomainID)
		if err != nil {
			return fmt.Errorf("qr code: %w", err)
		}
		levels = append(levels, d)
	}
	t, err := s.store.QRSettings(ctx, l.TenantID, linkforge.PublicDomainID)
	if err != nil {
		return fmt.Errorf("qr code: %w", err)
	}
	st, err := resolveQRStyle(append(levels, t)...)
	if err != nil {
		return err
	}
	if format == "png" && st.logoType == linkforge.QRLogoSVG {
		// Rasterising SVG needs a renderer this server does not carry.
		return linkforge.InvalidField("format", `must be "svg": the QR logo is an SVG image`)
	}
	content := s.linkBase(l).URL + "/" + slug + "?" + qrScanParam

	// The image depends on these inputs only: the ETag is their hash, and a
	// revalidation is answered without encoding anything.
	logoSum := sha256.Sum256(st.logo)
	sum := sha256.Sum256([]byte(strings.Join([]string{qrVersion, format, strconv.Itoa(size), content,
		st.fgHex, st.bgHex, st.ec, strconv.Itoa(st.margin), hex.EncodeToString(logoSum[:])}, "\x00")))
	etag := `"qr-` + hex.EncodeToString(sum[:12]) + `"`
	h := c.Response().Header()
	h.Set("ETag", etag)
	h.Set("Cache-Control", qrCacheControl)
	h.Set("Content-Disposition", `inline; filename="`+slug+`-qr.`+format+`"`)
	if etagMatches(c.Request().Header.Get("If-None-Match"), etag) {
		return c.NoContent(http.StatusNotModified)
	}

	code, err := goqr.EncodeText(content, qrECC(st.ec))
	if err != nil {
		return fmt.Errorf("qr code of %q: %w", slug, err)
	}
	var (
		body        []byte
		contentType string
	)
	if format == "svg" {
		body, err = qrSVG(code, size, st)
		contentType = "image/svg+xml"
	} else {
		body, err = qrPNG(code, size, st)
		contentType = "image/png"
	}
	if err != nil {
		if linkforge.ErrorCode(err) == linkforge.EInvalid {
			h.Del("ETag")
			h.Del("Cache-Control")
			h.Del("Content-Disposition")
		}
		return err
	}
	return blob(c, contentType, body)
}

// qrModules returns the pixels per module of a size-pixel image of code,
// quiet zone included, or an EInvalid error naming size when a module
// would be smaller than a pixel.
func qrModules(code *goqr.QrCode, size, margin int) (int, error) {
	n := code.Size() + 2*margin
	scale := size / n
	if scale < 1 {
		return 0, linkforge.InvalidField("size", fmt.Sprintf("must be at least %d pixels for this link's code (%d modules)", n, n))
	}
	return scale, nil
}

// qrPad returns the modules [lo, hi) of each axis the logo's pad covers:
// a centred square of about a third of the symbol's side.
func qrPad(n int) (lo, hi int) {
	p := n / qrLogoShare
	if (n-p)%2 != 0 {
		p--
	}
	return (n - p) / 2, (n + p) / 2
}

// qrPNG draws code as a size×size PNG: whole pixels per module, the symbol
// centred, the rest quiet zone; a logo on its pad in the middle.
func qrPNG(code *goqr.QrCode, size int, st qrStyle) ([]byte, error) {
	scale, err := qrModules(code, size, st.margin)
	if err != nil {
		return nil, err
	}
	n := code.Size()
	lo, hi := 0, 0
	if st.logo != nil {
		lo, hi = qrPad(n)
	}
	// Index 0 (bg) is the zero value: only the dark modules are drawn.
	pal := image.NewPaletted(image.Rect(0, 0, size, size), color.Palette{st.bg, st.fg})
	off := (size - n*scale) / 2
	for y := range n {
		for x := range n {
			if !code.Module(x, y) || x >= lo && x < hi && y >= lo && y < hi {
				continue
			}
			for py := off + y*scale; py < off+(y+1)*scale; py++ {
				row := pal.Pix[py*pal.Stride:]
				for px := off + x*scale; px < off+(x+1)*scale; px++ {
					row[px] = 1
				}
			}
		}
	}
	var img image.Image = pal
	if st.logo != nil {
		logo, err := linkforge.DecodeQRLogo(st.logo)
		if err != nil {
			return nil, err
		}
		rgba := image.NewRGBA(pal.Rect)
		draw.Draw(rgba, rgba.Rect, pal, image.Point{}, draw.Src)
		// The logo keeps a module of pad on every side, and its aspect.
		inset := scale
		box := image.Rect(off+lo*scale+inset, off+lo*scale+inset, off+hi*scale-inset, off+hi*scale-inset)
		if box.Dx() > 0 {
			dst := fitRect(logo.Bounds(), box)
			draw.Draw(rgba, dst, scaleImage(logo, dst.Dx(), dst.Dy()), image.Point{}, draw.Over)
		}
		img = rgba
	}
	var buf bytes.Buffer
	enc := png.Encoder{CompressionLevel: png.BestCompression}
	if err := enc.Encode(&buf, img); err != nil {
		return nil, fmt.Errorf("encode png: %w", err)
	}
	return buf.Bytes(), nil
}

// fitRect is the largest rectangle of src's aspect centred in box.
func fitRect(src, box image.Rectangle) image.Rectangle {
	w, h := box.Dx(), box.Dx()*src.Dy()/src.Dx()
	if h > box.Dy() {
		w, h = box.Dy()*src.Dx()/src.Dy(), box.Dy()
	}
	w, h = max(w, 1), max(h, 1)
	x, y := box.Min.X+(box.Dx()-w)/2, box.Min.Y+(box.Dy()-h)/2
	return image.Rect(x, y, x+w, y+h)
}

// scaleImage resamples src to w×h: each destination pixel is the mean
// (alpha-weighted colour, mean alpha) of the source pixels it covers, or
// the nearest one when enlarging. Enough for a logo drawn once per code.
func scaleImage(src image.Image, w, h int) *image.RGBA {
	dst := image.NewRGBA(image.Rect(0, 0, w, h))
	b := src.Bounds()
	for y := range h {
		y0 := b.Min.Y + y*b.Dy()/h
		y1 := max(b.Min.Y+(y+1)*b.Dy()/h, y0+1)
		for x := range w {
			x0 := b.Min.X + x*b.Dx()/w
			x1 := max(b.Min.X+(x+1)*b.Dx()/w, x0+1)
			var r, g, bl, a, k uint64
			for sy := y0; sy < y1; sy++ {
				for sx := x0; sx < x1; sx++ {
					cr, cg, cb, ca := src.At(sx, sy).RGBA() // premultiplied
					r, g, bl, a, k = r+uint64(cr), g+uint64(cg), bl+uint64(cb), a+uint64(ca), k+1
				}
			}
			dst.SetRGBA(x, y, color.RGBA{uint8(r / k >> 8), uint8(g / k >> 8), uint8(bl / k >> 8), uint8(a / k >> 8)}) //nolint:gosec // G115: means of 16-bit values, shifted to 8
		}
	}
	return dst
}

// qrSVG draws code as an SVG of one path, one unit per module and the
// margin as its border, with the requested width and height (the viewBox
// scales it); a logo is an <image> of a data: URI on its pad.
func qrSVG(code *goqr.QrCode, size int, st qrStyle) ([]byte, error) {
	if _, err := qrModules(code, size, st.margin); err != nil {
		return nil, err
	}
	n, m := code.Size(), st.margin
	lo, hi := 0, 0
	if st.logo != nil {
		lo, hi = qrPad(n)
	}
	var b bytes.Buffer
	dim := strconv.Itoa(size)
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%s" height="%s" viewBox="0 0 %d %d" shape-rendering="crispEdges">`,
		dim, dim, n+2*m, n+2*m)
	fmt.Fprintf(&b, `<rect width="100%%" height="100%%" fill="%s"/><path fill="%s" d="`, st.bgHex, st.fgHex)
	for y := range n {
		for x := 0; x < n; {
			dark := func(x int) bool { return code.Module(x, y) && !(x >= lo && x < hi && y >= lo && y < hi) }
			if !dark(x) {
				x++
				continue
			}
			run := 1
			for x+run < n && dark(x+run) {
				run++
			}
			fmt.Fprintf(&b, "M%d,%dh%dv1h-%dz", x+m, y+m, run, run)
			x += run
		}
	}
	b.WriteString(`"/>`)
	if st.logo != nil && hi-lo > 2 {
		// The <image> keeps the logo's aspect (preserveAspectRatio's
		// default) inside a module of pad.
		fmt.Fprintf(&b, `<image x="%d" y="%d" width="%d" height="%d" href="data:%s;base64,%s"/>`,
			lo+m+1, lo+m+1, hi-lo-2, hi-lo-2, st.logoType, base64.StdEncoding.EncodeToString(st.logo))
	}
	b.WriteString(`</svg>`)
	return b.Bytes(), nil
}

// etagMatches reports whether an If-None-Match header matches etag (weak
// comparison, as RFC 9110 asks for If-None-Match).
func etagMatches(header, etag string) bool {
	for header != "" {
		var tag string
		tag, header = nextETag(header)
		if tag == "*" || tag == etag || tag == "W/"+etag {
			return true
		}
	}
	return false
}

// nextETag splits the first entity tag off a comma-separated list.
func nextETag(s string) (tag, rest string) {
	for len(s) > 0 && (s[0] == ' ' || s[0] == '\t' || s[0] == ',') {
		s = s[1:]
	}
	end := 0
	for end < len(s) && s[end] != ',' {
		end++
	}
	tag = s[:end]
	for len(tag) > 0 && (tag[len(tag)-1] == ' ' || tag[len(tag)-1] == '\t') {
		tag = tag[:len(tag)-1]
	}
	return tag, s[end:]
}
