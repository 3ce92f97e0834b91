package dashboard

import (
	"sync/atomic"
	"time"

	"github.com/gorilla/websocket"
)

// client is one WebSocket connection to a tenant's dashboard. Its reader
// and its writer are the only goroutines that touch conn, apart from Close
// and WriteControl, which gorilla/websocket allows from anywhere.
type client struct {
	hub    *Hub
	td     *tenantDashboard // set by register
	conn   *websocket.Conn
	send   chan []byte // bounded; closed by the dashboard when it lets go
	remote string

	// seen is the hub clock's time of the connection or of its last pong,
	// in Unix nanoseconds; read by the prune alarm.
	seen atomic.Int64
}

func (c *client) lastSeen() time.Time { return time.Unix(0, c.seen.Load()) }

// readLoop reads until the connection fails. Clients send nothing the feed
// uses; reading is what processes their pongs and close frames. The read
// deadline is pushed forward by each pong, so a client that stops answering
// is also cut by its own deadline, whatever the prune alarm does.
func (c *client) readLoop() {
	h := c.hub
	defer h.clients.Done()
	defer c.td.remove(c)
	c.conn.SetReadLimit(h.readLimit)
	c.conn.SetReadDeadline(time.Now().Add(h.pongWait))
	c.conn.SetPongHandler(func(string) error {
		c.seen.Store(h.clock.Now().UnixNano())
		if h.hooks.pong != nil {
			h.hooks.pong(c)
		}
		return c.conn.SetReadDeadline(time.Now().Add(h.pongWait))
	})
	for {
		if _, _, err := c.conn.ReadMessage(); err != nil {
			if websocket.IsUnexpectedCloseError(err, websocket.CloseGoingAway, websocket.CloseNormalClosure, websocket.CloseNoStatusReceived) {
				h.log.Debug("dashboard: client read failed", "actor", c.td.name, "remote", c.remote, "error", err)
			}
			return
		}
	}
}

// writeLoop writes the queued messages, one per frame, and a ping every
// pingPeriod, each under a write deadline. It returns when the dashboard
// closes the queue or a write fails, and closes the connection, which ends
// the reader.
func (c *client) writeLoop() {
	h := c.hub
	defer h.clients.Done()
	defer c.conn.Close()
	ping := h.clock.NewTicker(h.pingPeriod)
	defer ping.Stop()
	for {
		select {
		case msg, ok := <-c.send:
			c.conn.SetWriteDeadline(time.Now().Add(h.writeWait))
			if !ok {
				// Let go by the dashboard: a dropped client's connection is
				// closed already and this fails; on Stop it tells the
				// browser to reconnect elsewhere.
				c.conn.WriteMessage(websocket.CloseMessage,
					websocket.FormatCloseMessage(websocket.CloseGoingAway, "server shutting down"))
				return
			}
			if err := c.conn.WriteMessage(websocket.TextMessage, msg); err != nil {
				c.td.remove(c)
				return
			}
			h.m.sent.Inc()
		case <-ping.C():
			c.conn.SetWriteDeadline(time.Now().Add(h.writeWait))
			if err := c.conn.WriteMessage(websocket.PingMessage, nil); err != nil {
				c.td.remove(c)
				return
			}
		}
	}
}
