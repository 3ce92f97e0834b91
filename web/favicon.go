package web

import (
	"crypto/sha256"
	"encoding/base64"
	"net/http"

	"github.com/labstack/echo/v4"
)

// faviconAsset is the icon browsers ask for at /favicon.ico (a 32×32 PNG in
// an ICO container, the form every browser reads there): without it, each
// visit of the dashboard logs a 404 and the tab shows a blank icon.
var faviconAsset = func() asset {
	body, err := assets.ReadFile("assets/favicon.ico")
	if err != nil {
		panic("web: embedded favicon: " + err.Error()) // a broken build
	}
	sum := sha256.Sum256(body)
	return asset{body: body, contentType: "image/x-icon",
		etag: `"` + base64.RawURLEncoding.EncodeToString(sum[:12]) + `"`}
}()

// favicon serves the icon. It changes only with the binary: browsers may
// keep it a day without asking.
func (s *Server) favicon(c echo.Context) error {
	h := c.Response().Header()
	h.Set("Cache-Control", "public, max-age=86400")
	h.Set("ETag", faviconAsset.etag)
	if c.Request().Header.Get("If-None-Match") == faviconAsset.etag {
		return c.NoContent(http.StatusNotModified)
	}
	return blob(c, faviconAsset.contentType, faviconAsset.body)
}
