package linkforge

import (
	"bytes"
	"context"
	"encoding/xml"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"io"
	"math"
	"strings"
)

// QRSettings are a tenant's or one of its domains' QR code settings
// (docs/adr/011-link-fields.md, "Branded QR codes"): the defaults of the
// options GET /api/v1/links/{slug}/qr takes, and a logo. A request's own
// options override the domain's, which override the tenant's; an unset
// field ("" or nil) falls through to the next.
type QRSettings struct {
	FG     string // "#rrggbb" (ParseQRColor's form); "" unset
	BG     string // "#rrggbb"; "" unset
	EC     string // "L", "M", "Q" or "H"; "" unset
	Margin *int   // quiet zone in modules, 0..16; nil unset

	// Logo is the image drawn in the centre of every code (nil: none),
	// of type LogoType ("image/png" or "image/svg+xml"), as ValidateQRLogo
	// admitted it.
	Logo     []byte
	LogoType string
}

// QRStore keeps QR settings. domainID PublicDomainID names the tenant's
// own settings, any other a domain of the tenant's.
type QRStore interface {
	// QRSettings returns the stored settings; the zero value when none
	// were ever stored.
	QRSettings(ctx context.Context, tenantID, domainID int64) (QRSettings, error)
	// UpdateQRSettings applies fn to the stored settings (the zero value
	// when none) and stores the result, in one transaction; an error of
	// fn stores nothing and is returned. A domainID that is not a domain
	// of the tenant's is ENotFound.
	UpdateQRSettings(ctx context.Context, tenantID, domainID int64, fn func(*QRSettings) error) (QRSettings, error)
}

// Bounds of QR settings.
const (
	QRMaxMargin    = 16
	QRMaxLogoBytes = 256 << 10
	// QRMaxLogoPixels bounds a PNG logo's sides: larger ones are no
	// sharper in a 2048 px code and cost memory to decode.
	QRMaxLogoPixels = 4096
	// QRMinContrast is the least WCAG contrast ratio of bg to fg admitted:
	// below it scanners' binarisation confuses the two colours.
	QRMinContrast = 3.0
)

// The logo types accepted.
const (
	QRLogoPNG = "image/png"
	QRLogoSVG = "image/svg+xml"
)

// ParseQRColor parses "#rgb" or "#rrggbb" (either case) into its colour
// and the canonical "#rrggbb" lowercase; field names it in the error.
func ParseQRColor(field, s string) (color.RGBA, string, error) {
	bad := InvalidField(field, `must be a hex colour, "#rgb" or "#rrggbb"`)
	if len(s) != 4 && len(s) != 7 || s[0] != '#' {
		return color.RGBA{}, "", bad
	}
	var v [6]byte
	h := s[1:]
	for i := range h {
		c := h[i]
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c -= 'a' - 10
		case c >= 'A' && c <= 'F':
			c -= 'A' - 10
		default:
			return color.RGBA{}, "", bad
		}
		if len(h) == 3 {
			v[2*i], v[2*i+1] = c, c
		} else {
			v[i] = c
		}
	}
	rgb := color.RGBA{v[0]<<4 | v[1], v[2]<<4 | v[3], v[4]<<4 | v[5], 0xff}
	return rgb, fmt.Sprintf("#%02x%02x%02x", rgb.R, rgb.G, rgb.B), nil
}

// QRContrast is the WCAG 2 contrast ratio of two colours, 1 to 21.
func QRContrast(a, b color.RGBA) float64 {
	la, lb := luminance(a), luminance(b)
	if la < lb {
		la, lb = lb, la
	}
	return (la + 0.05) / (lb + 0.05)
}

// luminance is the WCAG 2 relative luminance of c.
func luminance(c color.RGBA) float64 {
	lin := func(v uint8) float64 {
		s := float64(v) / 255
		if s <= 0.04045 {
			return s / 12.92
		}
		return math.Pow((s+0.055)/1.055, 2.4)
	}
	return 0.2126*lin(c.R) + 0.7152*lin(c.G) + 0.0722*lin(c.B)
}

// CheckQRColors refuses a pair a scanner may not read: fg not darker than
// bg (inverted codes, which many scanners do not try), or a contrast ratio
// below QRMinContrast. The error names fg.
func CheckQRColors(fg, bg color.RGBA) error {
	if luminance(fg) >= luminance(bg) {
		return InvalidField("fg", "must be darker than bg: many scanners cannot read light-on-dark codes")
	}
	if r := QRContrast(fg, bg); r < QRMinContrast {
		return InvalidField("fg", fmt.Sprintf("contrast with bg is %.2f:1, below the %.0f:1 scanners need", r, QRMinContrast))
	}
	return nil
}

// ValidQREC reports whether s is an error correction level.
func ValidQREC(s string) bool {
	return s == "L" || s == "M" || s == "Q" || s == "H"
}

// ValidateQRLogo checks a logo of the given Content-Type: at most
// QRMaxLogoBytes; a PNG that decodes, with sides of 1 to QRMaxLogoPixels;
// an SVG that is well-formed XML with an <svg> root and nothing that runs
// or fetches: no <script> or <foreignObject>, no on* attribute, no href
// other than a fragment or a data: URI, no url() or @import in a style
// naming anything but a fragment. The error names "logo".
func ValidateQRLogo(contentType string, body []byte) error {
	if len(body) == 0 {
		return InvalidField("logo", "is empty")
	}
	if len(body) > QRMaxLogoBytes {
		return ErrQRLogoTooLarge()
	}
	switch contentType {
	case QRLogoPNG:
		cfg, err := png.DecodeConfig(bytes.NewReader(body))
		if err != nil {
			return InvalidField("logo", "is not a PNG image")
		}
		if cfg.Width < 1 || cfg.Height < 1 || cfg.Width > QRMaxLogoPixels || cfg.Height > QRMaxLogoPixels {
			return InvalidField("logo", fmt.Sprintf("must be 1 to %d pixels a side, is %dx%d", QRMaxLogoPixels, cfg.Width, cfg.Height))
		}
		if _, err := png.Decode(bytes.NewReader(body)); err != nil {
			return InvalidField("logo", "is not a PNG image")
		}
		return nil
	case QRLogoSVG:
		return validateSVG(body)
	}
	return Errorf(EUnsupportedMediaType, "the logo must be image/png or image/svg+xml")
}

// validateSVG is ValidateQRLogo's SVG check.
func validateSVG(body []byte) error {
	dec := xml.NewDecoder(bytes.NewReader(body))
	dec.Strict = true
	root := true
	inStyle := false
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return InvalidField("logo", "is not well-formed XML")
		}
		switch t := tok.(type) {
		case xml.StartElement:
			name := strings.ToLower(t.Name.Local)
			if root && name != "svg" {
				return InvalidField("logo", "must have an <svg> root element")
			}
			root = false
			if name == "script" || name == "foreignobject" {
				return InvalidField("logo", "must not contain <"+t.Name.Local+">")
			}
			inStyle = name == "style"
			for _, a := range t.Attr {
				an := strings.ToLower(a.Name.Local)
				switch {
				case strings.HasPrefix(an, "on"):
					return InvalidField("logo", "must not have event attributes ("+a.Name.Local+")")
				case an == "href" || an == "src":
					v := strings.TrimSpace(a.Value)
					if !strings.HasPrefix(v, "#") && !strings.HasPrefix(strings.ToLower(v), "data:image/") {
						return InvalidField("logo", "must not reference external resources ("+a.Name.Local+")")
					}
				case an == "style":
					if externalCSS(a.Value) {
						return InvalidField("logo", "must not reference external resources (style)")
					}
				}
			}
		case xml.EndElement:
			inStyle = false
		case xml.CharData:
			if inStyle && externalCSS(string(t)) {
				return InvalidField("logo", "must not reference external resources (<style>)")
			}
		case xml.Directive:
			// A DOCTYPE may declare entities that fetch or expand.
			return InvalidField("logo", "must not have a DOCTYPE or other directives")
		}
	}
	if root {
		return InvalidField("logo", "must have an <svg> root element")
	}
	return nil
}

// externalCSS reports whether CSS text may load something: an @import,
// or a url() that is not a fragment.
func externalCSS(s string) bool {
	s = strings.ToLower(s)
	if strings.Contains(s, "@import") {
		return true
	}
	for {
		i := strings.Index(s, "url(")
		if i < 0 {
			return false
		}
		s = strings.TrimLeft(s[i+4:], " \t\n'\"")
		if !strings.HasPrefix(s, "#") {
			return true
		}
	}
}

// ErrQRLogoTooLarge is the ETooLarge of a logo over QRMaxLogoBytes.
func ErrQRLogoTooLarge() *Error {
	return &Error{Code: ETooLarge, Message: fmt.Sprintf("the logo exceeds %d KiB", QRMaxLogoBytes>>10),
		Fields: []FieldError{{Field: "logo", Detail: fmt.Sprintf("must be at most %d KiB", QRMaxLogoBytes>>10)}}}
}

// DecodeQRLogo decodes a PNG logo ValidateQRLogo admitted.
func DecodeQRLogo(body []byte) (image.Image, error) {
	img, err := png.Decode(bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("decode logo: %w", err)
	}
	return img, nil
}
