package clienttest_test

import (
	"bytes"
	"context"
	"net/http"
	"testing"

	"github.com/linkforge/linkforge/client"
)

// TestClientQRBranding: the tenant's defaults set, read and cleared; a
// logo set, read back and removed; QR with colours; the server's
// refusals (low contrast, a scripted SVG) as *client.Error naming the
// field.
func TestClientQRBranding(t *testing.T) {
	s := newServer(t, serverOpts{})
	c := mustClient(t, s)
	ctx := context.Background()
	if _, err := c.CreateLink(ctx, client.NewLink{URL: "https://example.com/q", Slug: "q1"}); err != nil {
		t.Fatal(err)
	}
	d, err := c.SetQRDefaults(ctx, client.QRDefaults{FG: ptr("#1A237E"), Margin: ptr(2)})
	if err != nil || d.FG == nil || *d.FG != "#1a237e" || d.Margin == nil || *d.Margin != 2 || d.BG != nil {
		t.Fatalf("SetQRDefaults = %+v, %v", d, err)
	}
	if got, err := c.QRDefaults(ctx); err != nil || got.FG == nil || *got.FG != "#1a237e" {
		t.Errorf("QRDefaults = %+v, %v", got, err)
	}
	_, err = c.SetQRDefaults(ctx, client.QRDefaults{FG: ptr("#eeeeee")})
	if e := mustAPIError(t, err, http.StatusBadRequest, client.CodeInvalid); len(e.Fields) == 0 || e.Fields[0].Field != "fg" {
		t.Errorf("low contrast: %+v", e)
	}

	logo := []byte(`<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 1 1"><rect width="1" height="1" fill="#c00"/></svg>`)
	if err := c.SetQRLogo(ctx, "image/svg+xml", logo); err != nil {
		t.Fatalf("SetQRLogo: %v", err)
	}
	got, ct, err := c.QRLogo(ctx)
	if err != nil || ct != "image/svg+xml" || !bytes.Equal(got, logo) {
		t.Errorf("QRLogo = %q, %q, %v", got, ct, err)
	}
	err = c.SetQRLogo(ctx, "image/svg+xml", []byte(`<svg xmlns="http://www.w3.org/2000/svg"><script>x()</script></svg>`))
	if e := mustAPIError(t, err, http.StatusBadRequest, client.CodeInvalid); len(e.Fields) == 0 || e.Fields[0].Field != "logo" {
		t.Errorf("scripted SVG: %+v", e)
	}
	svg, _, err := c.QR(ctx, "q1", client.QROptions{Format: "svg", BG: "#fff8e1", Margin: ptr(0)})
	if err != nil || !bytes.Contains(svg, []byte(`fill="#fff8e1"`)) || !bytes.Contains(svg, []byte(`fill="#1a237e"`)) ||
		!bytes.Contains(svg, []byte("data:image/svg+xml;base64,")) {
		t.Errorf("QR svg with the defaults and the logo: %.200s, %v", svg, err)
	}
	if err := c.DeleteQRLogo(ctx); err != nil {
		t.Fatal(err)
	}
	if _, _, err := c.QRLogo(ctx); !client.IsStatus(err, http.StatusNotFound) {
		t.Errorf("QRLogo after delete: %v", err)
	}
	if d, err := c.SetQRDefaults(ctx, client.QRDefaults{}); err != nil || d.FG != nil || d.Margin != nil {
		t.Errorf("cleared defaults = %+v, %v", d, err)
	}
}
