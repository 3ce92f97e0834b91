package web

import (
	"time"

	"github.com/labstack/echo/v4"
)

// The files crawlers and security researchers look for at a host's root:
// robots.txt keeps search engines from indexing short links (an indexed
// short link is what gets a shared host flagged), security.txt (RFC 9116)
// names where to report abuse.
const (
	pathRobots      = "/robots.txt"
	pathSecurityTxt = "/.well-known/security.txt"
)

var (
	robotsDisallow = []byte("User-agent: *\nDisallow: /\n")
	robotsAllow    = []byte("User-agent: *\nAllow: /\n")
)

// robots answers GET /robots.txt: every crawler kept out, unless
// Config.RobotsAllow.
func (s *Server) robots(c echo.Context) error {
	body := robotsDisallow
	if s.robotsAllow {
		body = robotsAllow
	}
	c.Response().Header().Set("Cache-Control", "public, max-age=3600")
	return blob(c, "text/plain; charset=utf-8", body)
}

// securityTxt answers GET /.well-known/security.txt: Contact from
// Config.AbuseContact, and an Expires a year ahead (the file is made at
// each request, so it never expires while the server runs); 404 when no
// contact is configured.
func (s *Server) securityTxt(c echo.Context) error {
	if s.abuseContact == "" {
		return echo.ErrNotFound
	}
	expires := s.now().UTC().AddDate(1, 0, 0).Truncate(time.Second).Format(time.RFC3339)
	body := "Contact: " + s.abuseContact + "\nExpires: " + expires + "\n"
	c.Response().Header().Set("Cache-Control", "public, max-age=86400")
	return blob(c, "text/plain; charset=utf-8", []byte(body))
}
