package client

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
)

// QRDefaults are the defaults of the QR code's look, the tenant's or a
// domain's: a link's domain's override the tenant's, and a request's
// QROptions override both. Nil: unset.
type QRDefaults struct {
	FG     *string `json:"fg"`
	BG     *string `json:"bg"`
	EC     *string `json:"ec"`
	Margin *int    `json:"margin"`
	// LogoType is the logo's media type, nil without one (read-only).
	LogoType *string `json:"logo_type,omitempty"`
}

// maxLogoBytes bounds a logo read back: the server stores at most 256 KiB.
const maxLogoBytes = 1 << 20

func qrBase(host string) string {
	if host == "" {
		return "/api/v1/qr"
	}
	return "/api/v1/domains/" + seg(host) + "/qr"
}

func (c *Client) qrDefaults(ctx context.Context, host string) (QRDefaults, error) {
	var out QRDefaults
	err := c.call(ctx, request{method: http.MethodGet, path: qrBase(host) + "/defaults", want: http.StatusOK}, &out)
	return out, err
}

func (c *Client) setQRDefaults(ctx context.Context, host string, d QRDefaults) (QRDefaults, error) {
	var out QRDefaults
	d.LogoType = nil
	err := c.call(ctx, request{method: http.MethodPut, path: qrBase(host) + "/defaults", body: d, want: http.StatusOK}, &out)
	return out, err
}

func (c *Client) qrLogo(ctx context.Context, host string) ([]byte, string, error) {
	path := qrBase(host) + "/logo"
	resp, err := c.do(ctx, request{method: http.MethodGet, path: path, want: http.StatusOK})
	if err != nil {
		return nil, "", err
	}
	defer resp.Body.Close()
	img, err := io.ReadAll(io.LimitReader(resp.Body, maxLogoBytes))
	if err != nil {
		return nil, "", fmt.Errorf("client: GET %s: read logo: %w", path, err)
	}
	return img, resp.Header.Get("Content-Type"), nil
}

func (c *Client) setQRLogo(ctx context.Context, host, contentType string, logo []byte) error {
	return c.call(ctx, request{method: http.MethodPut, path: qrBase(host) + "/logo",
		raw: bytes.NewReader(logo), rawType: contentType, want: http.StatusNoContent}, nil)
}

func (c *Client) deleteQRLogo(ctx context.Context, host string) error {
	return c.call(ctx, request{method: http.MethodDelete, path: qrBase(host) + "/logo", want: http.StatusNoContent}, nil)
}

// QRDefaults returns the tenant's QR code defaults (GET /api/v1/qr/defaults).
func (c *Client) QRDefaults(ctx context.Context) (QRDefaults, error) {
	return c.qrDefaults(ctx, "")
}

// SetQRDefaults replaces the tenant's QR code defaults (PUT
// /api/v1/qr/defaults); nil members unset. The logo stays.
func (c *Client) SetQRDefaults(ctx context.Context, d QRDefaults) (QRDefaults, error) {
	return c.setQRDefaults(ctx, "", d)
}

// QRLogo returns the tenant's QR code logo and its content type (GET
// /api/v1/qr/logo); a 404 *Error without one.
func (c *Client) QRLogo(ctx context.Context) ([]byte, string, error) {
	return c.qrLogo(ctx, "")
}

// SetQRLogo stores the tenant's QR code logo (PUT /api/v1/qr/logo):
// contentType "image/png" or "image/svg+xml", at most 256 KiB.
func (c *Client) SetQRLogo(ctx context.Context, contentType string, logo []byte) error {
	return c.setQRLogo(ctx, "", contentType, logo)
}

// DeleteQRLogo removes the tenant's QR code logo (DELETE /api/v1/qr/logo).
func (c *Client) DeleteQRLogo(ctx context.Context) error {
	return c.deleteQRLogo(ctx, "")
}

// DomainQRDefaults returns a domain's QR code defaults (GET
// /api/v1/domains/{host}/qr/defaults).
func (c *Client) DomainQRDefaults(ctx context.Context, host string) (QRDefaults, error) {
	return c.qrDefaults(ctx, host)
}

// SetDomainQRDefaults replaces a domain's QR code defaults (PUT
// /api/v1/domains/{host}/qr/defaults); an owner's.
func (c *Client) SetDomainQRDefaults(ctx context.Context, host string, d QRDefaults) (QRDefaults, error) {
	return c.setQRDefaults(ctx, host, d)
}

// DomainQRLogo returns a domain's QR code logo (GET
// /api/v1/domains/{host}/qr/logo).
func (c *Client) DomainQRLogo(ctx context.Context, host string) ([]byte, string, error) {
	return c.qrLogo(ctx, host)
}

// SetDomainQRLogo stores a domain's QR code logo (PUT
// /api/v1/domains/{host}/qr/logo), used for its links instead of the
// tenant's; an owner's.
func (c *Client) SetDomainQRLogo(ctx context.Context, host, contentType string, logo []byte) error {
	return c.setQRLogo(ctx, host, contentType, logo)
}

// DeleteDomainQRLogo removes a domain's QR code logo (DELETE
// /api/v1/domains/{host}/qr/logo).
func (c *Client) DeleteDomainQRLogo(ctx context.Context, host string) error {
	return c.deleteQRLogo(ctx, host)
}
