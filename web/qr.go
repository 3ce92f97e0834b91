package web

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"net/http"
	"strconv"

	"github.com/labstack/echo/v4"
	goqr "github.com/piglig/go-qr"

	"github.com/linkforge/linkforge"
)

// QR codes of short links: GET /api/v1/links/{slug}/qr?format=svg|png&size=.
//
// The symbol is encoded by github.com/piglig/go-qr (a port of Nayuki's
// reference-quality encoder: maintained, no dependencies, SVG and PNG from
// one code). ADR 011 says why it was chosen over the other two candidates.
// The PNG is drawn here from the module matrix, as a two-colour paletted
// image of exactly size×size pixels (small files, sharp modules, no
// resampling); the SVG is the library's, scaled by its viewBox.

const (
	qrMinSize     = 64
	qrMaxSize     = 2048
	qrDefaultSize = 256
	// qrQuiet is the quiet zone around the symbol, in modules: the 4 the
	// QR specification requires for reliable scanning.
	qrQuiet = 4
	// qrVersion changes whenever the rendering does, so that ETags of the
	// old images stop matching.
	qrVersion = "1"
)

var qrCacheControl = "private, max-age=86400"

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
	slug := c.Param("slug")
	// The link must be the tenant's: another tenant's slug is 404 like
	// every other route of the admin API.
	l, err := s.addressedLink(c)
	if err != nil {
		return fmt.Errorf("qr code: %w", err)
	}
	shortURL := s.linkBase(l).URL + "/" + slug

	// The image depends on these inputs only: the ETag is their hash, and a
	// revalidation is answered without encoding anything.
	sum := sha256.Sum256([]byte(qrVersion + "\x00" + format + "\x00" + strconv.Itoa(size) + "\x00" + shortURL))
	etag := `"qr-` + hex.EncodeToString(sum[:12]) + `"`
	h := c.Response().Header()
	h.Set("ETag", etag)
	h.Set("Cache-Control", qrCacheControl)
	h.Set("Content-Disposition", `inline; filename="`+slug+`-qr.`+format+`"`)
	if etagMatches(c.Request().Header.Get("If-None-Match"), etag) {
		return c.NoContent(http.StatusNotModified)
	}

	// Medium error correction (15%): the usual choice for codes that are
	// printed and may be smudged, at little cost in size for a short URL.
	code, err := goqr.EncodeText(shortURL, goqr.Medium)
	if err != nil {
		return fmt.Errorf("qr code of %q: %w", slug, err)
	}
	var (
		body        []byte
		contentType string
	)
	if format == "svg" {
		body, err = qrSVG(code, size)
		contentType = "image/svg+xml"
	} else {
		body, err = qrPNG(code, size)
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
func qrModules(code *goqr.QrCode, size int) (int, error) {
	n := code.Size() + 2*qrQuiet
	scale := size / n
	if scale < 1 {
		return 0, linkforge.InvalidField("size", fmt.Sprintf("must be at least %d pixels for this link's code (%d modules)", n, n))
	}
	return scale, nil
}

// qrPNG draws code as a size×size two-colour PNG: whole pixels per module,
// the symbol centred, the rest quiet zone.
func qrPNG(code *goqr.QrCode, size int) ([]byte, error) {
	scale, err := qrModules(code, size)
	if err != nil {
		return nil, err
	}
	img := image.NewPaletted(image.Rect(0, 0, size, size), color.Palette{color.White, color.Black})
	// Index 0 (white) is the zero value: only the dark modules are drawn.
	off := (size - code.Size()*scale) / 2
	for y := range code.Size() {
		for x := range code.Size() {
			if !code.Module(x, y) {
				continue
			}
			for py := off + y*scale; py < off+(y+1)*scale; py++ {
				row := img.Pix[py*img.Stride:]
				for px := off + x*scale; px < off+(x+1)*scale; px++ {
					row[px] = 1
				}
			}
		}
	}
	var buf bytes.Buffer
	enc := png.Encoder{CompressionLevel: png.BestCompression}
	if err := enc.Encode(&buf, img); err != nil {
		return nil, fmt.Errorf("encode png: %w", err)
	}
	return buf.Bytes(), nil
}

// qrSVG renders code with the library's SVG writer, one unit per module
// and the quiet zone as its border, and gives it the requested width and
// height: the viewBox scales it.
func qrSVG(code *goqr.QrCode, size int) ([]byte, error) {
	if _, err := qrModules(code, size); err != nil {
		return nil, err
	}
	svg, err := code.ToSVGBytes(goqr.NewQrCodeImgConfig(1, qrQuiet, goqr.WithOptimalSVG()))
	if err != nil {
		return nil, fmt.Errorf("render svg: %w", err)
	}
	const open = "<svg "
	i := bytes.Index(svg, []byte(open))
	if i < 0 {
		return nil, fmt.Errorf("render svg: no <svg> element in the library's output")
	}
	dim := strconv.Itoa(size)
	attrs := `width="` + dim + `" height="` + dim + `" shape-rendering="crispEdges" `
	out := make([]byte, 0, len(svg)+len(attrs))
	out = append(out, svg[:i+len(open)]...)
	out = append(out, attrs...)
	out = append(out, svg[i+len(open):]...)
	return out, nil
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
