package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gorilla/websocket"
)

// livePath is the tenant's live dashboard feed (operation liveFeed in
// web/openapi.json).
const livePath = "/api/v1/live"

// fanout is the shared state of one fan-out measurement: which link each
// click went to, when it was sent, and what the viewers received.
type fanout struct {
	index map[string]int  // slug -> click
	sent  []atomic.Int64  // click -> unix nanoseconds it was sent; 0: not yet
	got   []atomic.Int64  // click -> viewers that received it
	wake  chan struct{}   // a viewer received something
	mu    sync.Mutex      // guards lat
	lat   []time.Duration // every click-to-receive latency, all viewers
}

func newFanout(links []benchLink) *fanout {
	f := &fanout{
		index: make(map[string]int, len(links)),
		sent:  make([]atomic.Int64, len(links)),
		got:   make([]atomic.Int64, len(links)),
		wake:  make(chan struct{}, 1),
	}
	for i, l := range links {
		f.index[l.slug] = i
	}
	return f
}

// liveMessage is the part of a feed message the viewers read.
type liveMessage struct {
	Type string `json:"type"`
	Link string `json:"link"`
}

// viewer reads one connection until it closes, recording for each click the
// time from its sending to the first message about its link.
func (f *fanout) viewer(conn *websocket.Conn) {
	seen := make([]bool, len(f.sent))
	conn.SetReadLimit(1 << 20)
	for {
		_, data, err := conn.ReadMessage()
		if err != nil {
			return // closed by the scenario, or by the server
		}
		now := time.Now().UnixNano()
		var m liveMessage
		if json.Unmarshal(data, &m) != nil || m.Type != "clicks" {
			continue
		}
		i, ok := f.index[m.Link]
		if !ok || seen[i] {
			continue
		}
		sent := f.sent[i].Load()
		if sent == 0 {
			continue
		}
		seen[i] = true
		f.mu.Lock()
		f.lat = append(f.lat, time.Duration(now-sent))
		f.mu.Unlock()
		f.got[i].Add(1)
		select {
		case f.wake <- struct{}{}:
		default:
		}
	}
}

// dialViewer opens one feed connection with the bearer header. A 429 (the
// admin API's per-token rate limit covers the upgrade too) is retried after
// its Retry-After until ctx ends; a 404 or 503 is errNoLiveRoute.
func dialViewer(ctx context.Context, wsURL, token string) (*websocket.Conn, error) {
	d := websocket.Dialer{HandshakeTimeout: 10 * time.Second}
	h := http.Header{"Authorization": {"Bearer " + token}}
	for {
		conn, resp, err := d.DialContext(ctx, wsURL, h)
		if err == nil {
			return conn, nil
		}
		if resp == nil {
			return nil, err
		}
		resp.Body.Close()
		switch resp.StatusCode {
		case http.StatusNotFound, http.StatusServiceUnavailable:
			return nil, fmt.Errorf("%w: %s", errNoLiveRoute, resp.Status)
		case http.StatusTooManyRequests:
			wait := time.Second
			if s, err := strconv.Atoi(resp.Header.Get("Retry-After")); err == nil && s > 0 {
				wait = time.Duration(s) * time.Second
			}
			select {
			case <-time.After(wait):
			case <-ctx.Done():
				return nil, fmt.Errorf("GET %s: still rate limited: %w", livePath, ctx.Err())
			}
		default:
			return nil, fmt.Errorf("GET %s: %s: %w", livePath, resp.Status, err)
		}
	}
}

var errNoLiveRoute = errors.New("no live feed at GET " + livePath)

// viewersPerToken spreads the viewers over several tokens of the tenant:
// the API's per-token limit (20 requests per second, burst 40) applies to
// the upgrade, and one token would make 1,000 viewers take 50 s to connect.
const viewersPerToken = 30

// connectTimeout bounds the connection of all the viewers.
const connectTimeout = 3 * time.Minute

// runFanout connects --viewers viewers to one tenant's live feed, then
// clicks --clicks links one at a time and measures, at every viewer, the
// time from sending the click to receiving a message about its link.
func runFanout(ctx context.Context, b *bench) ([]row, error) {
	links := b.newLinks(b.cfg.clicks)
	in, err := b.start(ctx, b.cfg.backend, links)
	if err != nil {
		return nil, err
	}
	defer in.close()
	target := fmt.Sprintf("%s %s, %d viewers", in.label(), livePath, b.cfg.viewers)
	rate := fmt.Sprintf("%d clicks, 1 at a time", b.cfg.clicks)
	wsURL := "ws" + strings.TrimPrefix(in.base, "http") + livePath

	first, err := dialViewer(ctx, wsURL, in.token)
	if errors.Is(err, errNoLiveRoute) {
		return []row{{scenario: "fanout", target: target, rate: rate,
			notes: "not available: " + err.Error() + " (the live dashboard feed is not in this build)"}}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("connect the first viewer: %w", err)
	}
	tokens, err := viewerTokens(ctx, b, in)
	if err != nil {
		first.Close()
		return nil, err
	}

	f := newFanout(links)
	var readers sync.WaitGroup
	var connMu sync.Mutex
	conns := []*websocket.Conn{first}
	readers.Go(func() { f.viewer(first) })
	defer func() {
		// Close every connection, then wait for the readers to return.
		connMu.Lock()
		for _, c := range conns {
			_ = c.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(websocket.CloseNormalClosure, ""), time.Now().Add(time.Second))
			c.Close()
		}
		connMu.Unlock()
		readers.Wait()
	}()

	b.log.Info("fanout: connecting viewers", "viewers", b.cfg.viewers)
	connectStart := time.Now()
	connectCtx, cancelConnect := context.WithTimeout(ctx, connectTimeout)
	defer cancelConnect()
	var (
		failed   atomic.Int64
		errMu    sync.Mutex
		firstErr error
	)
	jobs := make(chan string)
	var dialers sync.WaitGroup
	for range 32 {
		dialers.Go(func() {
			for token := range jobs {
				c, err := dialViewer(connectCtx, wsURL, token)
				if err != nil {
					failed.Add(1)
					errMu.Lock()
					if firstErr == nil {
						firstErr = err
					}
					errMu.Unlock()
					continue
				}
				connMu.Lock()
				conns = append(conns, c)
				connMu.Unlock()
				readers.Go(func() { f.viewer(c) })
			}
		})
	}
	for v := 1; v < b.cfg.viewers; v++ {
		jobs <- tokens[v%len(tokens)]
	}
	close(jobs)
	dialers.Wait()
	connectTook := time.Since(connectStart)
	connMu.Lock()
	viewers := int64(len(conns))
	connMu.Unlock()
	b.log.Info("fanout: viewers connected", "connected", viewers, "failed", failed.Load(),
		"tokens", len(tokens), "took", connectTook.Round(time.Millisecond))

	b.log.Info("fanout: clicking", "clicks", len(links))
	if err := f.clickEach(ctx, b, in.base, links, viewers); err != nil {
		return nil, err
	}

	connected := fmt.Sprintf("%d viewers connected in %s with %d tokens", viewers, connectTook.Round(time.Millisecond), len(tokens))
	if failed.Load() > 0 {
		connected += fmt.Sprintf("; %d failed to connect: %v", failed.Load(), firstErr)
	}
	return []row{f.report(target, rate, viewers, len(links), uint64(failed.Load()), connected)}, nil //nolint:gosec // G115: a counter, never negative
}

// viewerTokens returns the tokens the viewers connect with: in.token, and
// with a process of its own as many more as keep each token's viewers
// within viewersPerToken.
func viewerTokens(ctx context.Context, b *bench, in *instance) ([]string, error) {
	tokens := []string{in.token}
	if in.proc != nil {
		for len(tokens)*viewersPerToken < b.cfg.viewers {
			t, err := createToken(ctx, b.bin, in.dataDir, in.dbURL, benchTenant)
			if err != nil {
				return nil, err
			}
			tokens = append(tokens, t)
		}
	}
	return tokens, nil
}

// clickEach clicks each link (base/slug) one at a time, and after each
// waits until all viewers have heard of it, or b.cfg.fanoutWait.
func (f *fanout) clickEach(ctx context.Context, b *bench, base string, links []benchLink, viewers int64) error {
	// Until ctx ends: what was measured by then is still reported.
	for i := 0; i < len(links) && ctx.Err() == nil; i++ {
		f.sent[i].Store(time.Now().UnixNano())
		if err := click(ctx, b.client, base+"/"+links[i].slug); err != nil {
			return err
		}
		deadline := time.After(b.cfg.fanoutWait)
	wait:
		for f.got[i].Load() < viewers {
			select {
			case <-f.wake:
			case <-deadline:
				break wait
			case <-ctx.Done():
				break wait
			}
		}
	}
	return nil
}

// report is the scenario's row: the latencies f measured of clicks clicks
// at viewers viewers, failed of which did not connect, as connected says.
func (f *fanout) report(target, rate string, viewers int64, clicks int, failed uint64, connected string) row {
	f.mu.Lock()
	lat := slices.Clone(f.lat)
	f.mu.Unlock()
	expected := uint64(viewers) * uint64(clicks) //nolint:gosec // G115: counts, never negative
	lost := expected - uint64(len(lat))
	r := row{scenario: "fanout", target: target, rate: rate, measured: true, thr: -1,
		requests: expected, errors: lost + failed}
	notes := []string{connected, fmt.Sprintf("%d of %d deliveries", len(lat), expected)}
	if len(lat) > 0 {
		slices.Sort(lat)
		r.p50, r.p99 = quantile(lat, 0.50), quantile(lat, 0.99)
		notes = append(notes, fmt.Sprintf("max %s; p99 target ≤ %s: %s", formatLatency(lat[len(lat)-1]),
			targetFanoutP99, metOrMissed(r.p99 <= targetFanoutP99 && lost == 0)))
	}
	r.notes = strings.Join(notes, "; ")
	return r
}

// quantile returns the q-quantile of sorted (nearest rank).
func quantile(sorted []time.Duration, q float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(q*float64(len(sorted))+0.5) - 1
	return sorted[min(max(i, 0), len(sorted)-1)]
}

// click sends one counted redirect and expects its 302.
func click(ctx context.Context, client *http.Client, u string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return fmt.Errorf("click %s: %w", u, err)
	}
	resp, err := client.Do(req)
	if err != nil {
		return fmt.Errorf("click %s: %w", u, err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusFound {
		return fmt.Errorf("click %s: %s, want 302", u, resp.Status)
	}
	return nil
}
