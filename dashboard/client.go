package dashboard

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/gorilla/websocket"
)

// client is one WebSocket connection to a tenant's dashboard. Its reader
// and its writer are the only goroutines that touch conn, apart from Close
// and WriteControl, which gorilla/websocket allows from anywhere.
type client struct {
	hub     *Hub
	td      *tenantDashboard // set by register
	conn    *websocket.Conn
	remote  string
	tokenID int64 // the token the upgrade was authenticated with

	// seen is the hub clock's time of the connection or of its last pong,
	// in Unix nanoseconds; read by the prune alarm.
	seen atomic.Int64

	// The send queue: at most hub.queueSize messages, appended by the
	// dashboard, taken whole by the writer. A slice rather than a channel,
	// so that its memory follows the backlog instead of being reserved for
	// the worst burst on every connection; the messages themselves are
	// shared by all the tenant's clients.
	qmu    sync.Mutex
	queue  [][]byte
	spare  [][]byte      // the writer's last batch, emptied, for reuse
	closed bool          // let go by the dashboard: nothing more is queued
	wake   chan struct{} // capacity 1: something was queued, or closed
	// The close frame the writer sends once closed, set with closed.
	closeCode   int
	closeReason string

	ping ticker // owned by the writer, which stops it
}

func newClient(h *Hub, conn *websocket.Conn, remote string, tokenID int64) *client {
	c := &client{hub: h, conn: conn, remote: remote, tokenID: tokenID, wake: make(chan struct{}, 1)}
	c.seen.Store(h.clock.Now().UnixNano())
	// The ping ticker starts with the connection, before it is registered:
	// a ticker made later by the writer goroutine would start its period
	// whenever that goroutine got to run, so the first ping could come late
	// (and, on a test clock, an advance made right after registration would
	// be missed).
	c.ping = h.clock.NewTicker(h.pingPeriod)
	return c
}

func (c *client) lastSeen() time.Time { return time.Unix(0, c.seen.Load()) }

// enqueue queues msg without waiting, and reports false when the queue is
// full: the client has fallen behind.
func (c *client) enqueue(msg []byte) bool {
	c.qmu.Lock()
	if c.closed {
		c.qmu.Unlock()
		return true
	}
	if len(c.queue) >= c.hub.queueSize {
		c.qmu.Unlock()
		return false
	}
	c.queue = append(c.queue, msg)
	c.qmu.Unlock()
	c.signal()
	return true
}

// closeQueue tells the writer that nothing more will come, and which close
// frame to end with. The first call decides the frame.
func (c *client) closeQueue(code int, reason string) {
	c.qmu.Lock()
	if !c.closed {
		c.closed, c.closeCode, c.closeReason = true, code, reason
	}
	c.qmu.Unlock()
	c.signal()
}

// discardQueue drops the messages not yet taken by the writer: a client
// whose token is revoked gets nothing more but the close frame.
func (c *client) discardQueue() {
	c.qmu.Lock()
	clear(c.queue)
	c.queue = c.queue[:0]
	c.qmu.Unlock()
}

func (c *client) signal() {
	select {
	case c.wake <- struct{}{}:
	default: // a wake-up is pending already
	}
}

// take returns the queued messages and whether the queue is closed. done is
// the batch the writer has finished with: its array becomes the next queue,
// so that a busy client allocates nothing.
func (c *client) take(done [][]byte) ([][]byte, bool) {
	clear(done) // drop the references to the written messages
	c.qmu.Lock()
	defer c.qmu.Unlock()
	batch := c.queue
	c.queue, c.spare = c.spare[:0], done[:0]
	return batch, c.closed
}

// closeFrame returns the close frame the dashboard chose; read once closed.
func (c *client) closeFrame() []byte {
	c.qmu.Lock()
	defer c.qmu.Unlock()
	return websocket.FormatCloseMessage(c.closeCode, c.closeReason)
}

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
	ping := c.ping
	defer ping.Stop()
	var batch [][]byte
	for {
		select {
		case <-c.wake:
			var closed bool
			batch, closed = c.take(batch)
			for _, msg := range batch {
				c.conn.SetWriteDeadline(time.Now().Add(h.writeWait))
				if err := c.conn.WriteMessage(websocket.TextMessage, msg); err != nil {
					c.td.remove(c)
					return
				}
				h.m.sent.Inc()
			}
			if closed {
				// Let go by the dashboard: a dropped client's connection is
				// closed already and this fails; on Stop (1001) it tells
				// the browser to reconnect, elsewhere or later; on a
				// revoked token (4001) not to.
				c.conn.SetWriteDeadline(time.Now().Add(h.writeWait))
				c.conn.WriteMessage(websocket.CloseMessage, c.closeFrame()) //nolint:errcheck // a courtesy close frame: the connection is closed next either way
				return
			}
		case <-ping.C():
			c.conn.SetWriteDeadline(time.Now().Add(h.writeWait))
			if err := c.conn.WriteMessage(websocket.PingMessage, nil); err != nil {
				c.td.remove(c)
				return
			}
		}
	}
}
