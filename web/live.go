package web

import (
	"errors"
	"math"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/gorilla/websocket"
	"github.com/labstack/echo/v4"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/people"
)

// LiveFeed serves the WebSocket feed of a tenant's live dashboard
// (GET /api/v1/live). Package dashboard's Hub implements it.
type LiveFeed interface {
	// ServeLive upgrades r, already authenticated for tenantID with the
	// token tokenID and checked for its Origin, and serves the feed in the
	// background until the client leaves or the token is revoked. An error
	// means nothing was written (EUnavailable: 503; ERateLimited: 429, the
	// tenant's cap of open sockets, with a RetryAfter method when the feed
	// knows when to retry); a failed handshake is answered by ServeLive
	// itself and returns nil.
	ServeLive(w http.ResponseWriter, r *http.Request, tenantID, tokenID int64) error
}

// Subprotocols of the live feed (operation liveFeed): a browser, which cannot
// set an Authorization header on a WebSocket, offers ["linkforge.v1",
// "bearer.<token>"] and the server selects linkforge.v1.
const (
	liveSubprotocol = "linkforge.v1"
	bearerProtocol  = "bearer."
)

// liveGate refuses, before any upgrade and in this order: a server without
// a feed (503), a cross-origin page (403), a request that is not a WebSocket
// handshake (400). A browser's token, offered as a subprotocol, is moved to
// the Authorization header, and its ?tenant= to X-LinkForge-Tenant, so
// that both ways go through the one authenticate that follows.
func (s *Server) liveGate(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if s.live == nil {
			return linkforge.Errorf(linkforge.EUnavailable, "the live feed is not enabled on this server")
		}
		r := c.Request()
		if !s.sameOrigin(r) {
			// No application code means 403; echo's HTTPError carries it to
			// the one error handler.
			return echo.NewHTTPError(http.StatusForbidden,
				"cross-origin WebSocket upgrades are refused: open the dashboard from this server's own origin")
		}
		if !websocket.IsWebSocketUpgrade(r) {
			return linkforge.Errorf(linkforge.EInvalid, "GET %s is a WebSocket endpoint: send a WebSocket handshake", pathLive)
		}
		if r.Header.Get("Authorization") == "" {
			token, offered, v1 := subprotocolToken(r)
			if offered {
				if !v1 {
					return linkforge.Errorf(linkforge.EInvalid,
						"offer the %q subprotocol next to %q: the server selects it", liveSubprotocol, bearerProtocol+"<token>")
				}
				r.Header.Set("Authorization", "Bearer "+token)
			}
		}
		// Nor can it set X-LinkForge-Tenant: a user in several tenants
		// names the feed's in the query instead.
		if name := c.QueryParam("tenant"); name != "" && r.Header.Get(tenantHeader) == "" {
			r.Header.Set(tenantHeader, name)
		}
		return next(c)
	}
}

// serveLive hands the authenticated upgrade to the feed.
func (s *Server) serveLive(c echo.Context) error {
	tokenID, _ := c.Get(ctxTokenID).(int64)
	if sess, ok := c.Get(ctxSession).(linkforge.Session); ok {
		// The feed checks this id for revocation (people.FeedChecker):
		// the session's, so that its end closes the socket.
		tokenID = people.FeedID(sess.ID)
	}
	if err := s.live.ServeLive(c.Response(), c.Request(), tenantID(c), tokenID); err != nil {
		var ra interface{ RetryAfter() time.Duration }
		if errors.As(err, &ra) {
			secs := max(1, int(math.Ceil(ra.RetryAfter().Seconds())))
			c.Response().Header().Set("Retry-After", strconv.Itoa(secs))
		}
		return err
	}
	// The connection was hijacked and answered 101, unless the handshake
	// failed and the upgrader answered through the response (committed).
	if resp := c.Response(); !resp.Committed {
		resp.Status = http.StatusSwitchingProtocols
		resp.Committed = true
	}
	return nil
}

// subprotocolToken finds "bearer.<token>" among the offered subprotocols,
// and whether linkforge.v1 is offered too.
func subprotocolToken(r *http.Request) (token string, offered, v1 bool) {
	for _, h := range r.Header.Values("Sec-WebSocket-Protocol") {
		for p := range strings.SplitSeq(h, ",") {
			p = strings.TrimSpace(p)
			switch {
			case p == liveSubprotocol:
				v1 = true
			case strings.HasPrefix(p, bearerProtocol) && !offered:
				token, offered = strings.TrimPrefix(p, bearerProtocol), true
			}
		}
	}
	return token, offered, v1
}

// sameOrigin admits requests without an Origin (programs, which
// authenticate with the header and are no CSRF vector) and requests from
// this server's own origin: its public URL's (behind a proxy), or the one
// the request itself was addressed to (a node reached directly). Everything
// else, "null" included, is cross-origin.
func (s *Server) sameOrigin(r *http.Request) bool {
	origin := r.Header.Get("Origin")
	if origin == "" {
		return true
	}
	u, err := url.Parse(origin)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return false
	}
	if strings.EqualFold(u.Scheme, s.publicOrigin.Scheme) && strings.EqualFold(linkforge.SelfHost(u), linkforge.SelfHost(s.publicOrigin)) {
		return true
	}
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return strings.EqualFold(u.Scheme, scheme) && strings.EqualFold(linkforge.SelfHost(u), linkforge.SelfHost(&url.URL{Scheme: scheme, Host: r.Host}))
}
