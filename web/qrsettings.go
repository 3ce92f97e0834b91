package web

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/linkforge/linkforge"
)

// QR settings (docs/adr/011-link-fields.md, "Branded QR codes"): the
// tenant's and each domain's defaults of the QR code's options and a logo.
//
//	GET|PUT        /api/v1/qr/defaults, /api/v1/domains/{host}/qr/defaults
//	GET|PUT|DELETE /api/v1/qr/logo,     /api/v1/domains/{host}/qr/logo
//
// The tenant's are an editor's (QR codes are, with links); a domain's are
// an owner's, like every other domain write.

const (
	pathQRDefaults       = apiPrefix + "/qr/defaults"
	pathQRLogo           = apiPrefix + "/qr/logo"
	pathDomainQRDefaults = pathDomain + "/qr/defaults"
	pathDomainQRLogo     = pathDomain + "/qr/logo"
)

// qrRouteTable registers the QR settings' routes.
func (s *Server) qrRouteTable(r *router) {
	for _, p := range []string{pathQRDefaults, pathDomainQRDefaults} {
		r.add(http.MethodGet, p, false, s.getQRDefaults, r.api(http.MethodGet, p)...)
		r.add(http.MethodPut, p, true, s.putQRDefaults, r.withBody(http.MethodPut, p)...)
	}
	for _, p := range []string{pathQRLogo, pathDomainQRLogo} {
		r.add(http.MethodGet, p, false, s.getQRLogo, r.api(http.MethodGet, p)...)
		r.add(http.MethodPut, p, true, s.putQRLogo, append(r.api(http.MethodPut, p), limitLogoBody)...)
		r.add(http.MethodDelete, p, false, s.deleteQRLogo, r.api(http.MethodDelete, p)...)
	}
}

// qrScope is the domain id the route's settings belong to: the {host}'s,
// or PublicDomainID (the tenant's own) on the routes without one.
func (s *Server) qrScope(c echo.Context) (int64, error) {
	host := c.Param("host")
	if host == "" {
		return linkforge.PublicDomainID, nil
	}
	d, err := s.domains.Get(c.Request().Context(), tenantID(c), host)
	if err != nil {
		return 0, err
	}
	return d.ID, nil
}

// qrDefaultsJSON is the defaults' representation; null: unset.
type qrDefaultsJSON struct {
	FG     *string `json:"fg"`
	BG     *string `json:"bg"`
	EC     *string `json:"ec"`
	Margin *int    `json:"margin"`
	// LogoType is the logo's media type, null without one (read-only).
	LogoType *string `json:"logo_type"`
}

func renderQRDefaults(q linkforge.QRSettings) qrDefaultsJSON {
	opt := func(s string) *string {
		if s == "" {
			return nil
		}
		return &s
	}
	return qrDefaultsJSON{FG: opt(q.FG), BG: opt(q.BG), EC: opt(q.EC), Margin: q.Margin, LogoType: opt(q.LogoType)}
}

func (s *Server) getQRDefaults(c echo.Context) error {
	id, err := s.qrScope(c)
	if err != nil {
		return err
	}
	q, err := s.store.QRSettings(c.Request().Context(), tenantID(c), id)
	if err != nil {
		return fmt.Errorf("qr defaults: %w", err)
	}
	return c.JSON(http.StatusOK, renderQRDefaults(q))
}

// decodeQRDefaults reads {fg, bg, ec, margin}, each optional or null
// (unset). The colours are checked as a pair, an unset one standing for
// the built-in default (black on white).
func decodeQRDefaults(r io.Reader) (linkforge.QRSettings, error) {
	members, err := readObject(r)
	if err != nil {
		return linkforge.QRSettings{}, err
	}
	var (
		fe fieldErrors
		q  linkforge.QRSettings
	)
	for _, m := range members {
		known := m.name == "fg" || m.name == "bg" || m.name == "ec" || m.name == "margin"
		if known && isNull(m.value) {
			continue // unset
		}
		switch m.name {
		case "fg", "bg":
			var v string
			if fe.str(m, &v) {
				if _, hex, err := linkforge.ParseQRColor(m.name, v); err != nil {
					fe.addErr(err)
				} else if m.name == "fg" {
					q.FG = hex
				} else {
					q.BG = hex
				}
			}
		case "ec":
			var v string
			if fe.str(m, &v) {
				if !linkforge.ValidQREC(v) {
					fe.add("ec", `must be "L", "M", "Q" or "H"`)
				}
				q.EC = v
			}
		case "margin":
			var n int
			if err := json.Unmarshal(m.value, &n); err != nil || n < 0 || n > linkforge.QRMaxMargin {
				fe.add("margin", fmt.Sprintf("must be an integer from 0 to %d (modules)", linkforge.QRMaxMargin))
			}
			q.Margin = &n
		case "logo_type":
			// Read-only: a GET's answer may be sent back as it is.
		default:
			fe.add(fieldName(m.name), "is not a field of QR defaults (fg, bg, ec, margin)")
		}
	}
	if len(fe) == 0 {
		if _, err := resolveQRStyle(q); err != nil {
			fe.addErr(err)
		}
	}
	if len(fe) > 0 {
		return linkforge.QRSettings{}, linkforge.InvalidFields(fe)
	}
	return q, nil
}

// putQRDefaults replaces the four defaults; the logo stays.
func (s *Server) putQRDefaults(c echo.Context) error {
	id, err := s.qrScope(c)
	if err != nil {
		return err
	}
	in, err := decodeQRDefaults(c.Request().Body)
	if err != nil {
		return err
	}
	q, err := s.store.UpdateQRSettings(c.Request().Context(), tenantID(c), id, func(q *linkforge.QRSettings) error {
		q.FG, q.BG, q.EC, q.Margin = in.FG, in.BG, in.EC, in.Margin
		return nil
	})
	if err != nil {
		return fmt.Errorf("qr defaults: %w", err)
	}
	return c.JSON(http.StatusOK, renderQRDefaults(q))
}

// limitLogoBody bounds a logo's body: a Content-Length over the bound is
// 413 at once; a body without one is read to one byte past it, which
// ValidateQRLogo then refuses.
func limitLogoBody(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		req := c.Request()
		if req.ContentLength > linkforge.QRMaxLogoBytes {
			return linkforge.ErrQRLogoTooLarge()
		}
		req.Body = http.MaxBytesReader(c.Response().Writer, req.Body, linkforge.QRMaxLogoBytes+1)
		return next(c)
	}
}

func (s *Server) putQRLogo(c echo.Context) error {
	id, err := s.qrScope(c)
	if err != nil {
		return err
	}
	req := c.Request()
	typ, _, _ := mime.ParseMediaType(req.Header.Get(echo.HeaderContentType))
	if typ != linkforge.QRLogoPNG && typ != linkforge.QRLogoSVG {
		return linkforge.Errorf(linkforge.EUnsupportedMediaType, "the logo's Content-Type must be image/png or image/svg+xml")
	}
	body, err := io.ReadAll(req.Body)
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		return linkforge.ErrQRLogoTooLarge()
	}
	if err != nil {
		return fmt.Errorf("read logo: %w", err)
	}
	if err := linkforge.ValidateQRLogo(typ, body); err != nil {
		return err
	}
	if _, err := s.store.UpdateQRSettings(req.Context(), tenantID(c), id, func(q *linkforge.QRSettings) error {
		q.Logo, q.LogoType = bytes.Clone(body), typ
		return nil
	}); err != nil {
		return fmt.Errorf("qr logo: %w", err)
	}
	return c.NoContent(http.StatusNoContent)
}

// getQRLogo answers the logo as it was stored. An SVG is served with a
// CSP that lets nothing in it run or load, should a browser open it.
func (s *Server) getQRLogo(c echo.Context) error {
	id, err := s.qrScope(c)
	if err != nil {
		return err
	}
	q, err := s.store.QRSettings(c.Request().Context(), tenantID(c), id)
	if err != nil {
		return fmt.Errorf("qr logo: %w", err)
	}
	if q.Logo == nil {
		return linkforge.Errorf(linkforge.ENotFound, "no QR logo is set")
	}
	h := c.Response().Header()
	h.Set("Cache-Control", "private, no-cache")
	h.Set("Content-Security-Policy", "default-src 'none'; img-src data:; style-src 'unsafe-inline'; sandbox")
	return blob(c, q.LogoType, q.Logo)
}

// deleteQRLogo removes the logo; 204 whether there was one or not.
func (s *Server) deleteQRLogo(c echo.Context) error {
	id, err := s.qrScope(c)
	if err != nil {
		return err
	}
	if _, err := s.store.UpdateQRSettings(c.Request().Context(), tenantID(c), id, func(q *linkforge.QRSettings) error {
		q.Logo, q.LogoType = nil, ""
		return nil
	}); err != nil {
		return fmt.Errorf("qr logo: %w", err)
	}
	return c.NoContent(http.StatusNoContent)
}
