package main

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gorilla/websocket"
)

// feedServer upgrades GET /api/v1/live, sends msgs, and closes.
func feedServer(t *testing.T, msgs []string) *httptest.Server {
	t.Helper()
	up := websocket.Upgrader{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		conn, err := up.Upgrade(w, r, nil)
		if err != nil {
			return // the upgrader answered
		}
		defer conn.Close()
		for _, m := range msgs {
			if err := conn.WriteMessage(websocket.TextMessage, []byte(m)); err != nil {
				return
			}
		}
		_ = conn.WriteMessage(websocket.CloseMessage, websocket.FormatCloseMessage(websocket.CloseNormalClosure, ""))
	}))
	t.Cleanup(srv.Close)
	return srv
}

// TestViewerRecordsFirstMessagePerClick: a viewer records one latency per
// click, at the first clicks message about its link, and ignores the rest.
func TestViewerRecordsFirstMessagePerClick(t *testing.T) {
	links := []benchLink{{slug: "sent"}, {slug: "notyet"}}
	f := newFanout(links)
	f.sent[0].Store(time.Now().Add(-50 * time.Millisecond).UnixNano())
	srv := feedServer(t, []string{
		`not json`,
		`{"type":"expired","link":"sent","at":"2026-12-01T00:00:00Z"}`,
		`{"type":"clicks","link":"other","bucket":"2026-11-30T08:01:00Z","count":1,"total":1}`,
		`{"type":"clicks","link":"notyet","bucket":"2026-11-30T08:01:00Z","count":1,"total":1}`,
		`{"type":"clicks","link":"sent","bucket":"2026-11-30T08:01:00Z","count":1,"total":1}`,
		`{"type":"clicks","link":"sent","bucket":"2026-11-30T08:01:00Z","count":2,"total":2}`,
	})
	conn, err := dialViewer(context.Background(), "ws"+strings.TrimPrefix(srv.URL, "http")+livePath, "lf_token")
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	f.viewer(conn) // returns when the server closes

	if got := f.got[0].Load(); got != 1 {
		t.Errorf("click on \"sent\" received %d times, want 1", got)
	}
	if got := f.got[1].Load(); got != 0 {
		t.Errorf("click on \"notyet\" received %d times before it was sent, want 0", got)
	}
	if len(f.lat) != 1 || f.lat[0] < 50*time.Millisecond {
		t.Errorf("latencies %v, want one of at least 50ms", f.lat)
	}
}

func TestDialViewer(t *testing.T) {
	var calls atomic.Int64
	up := websocket.Upgrader{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := calls.Add(1)
		switch {
		case r.URL.Path == "/missing":
			http.NotFound(w, r)
		case r.URL.Path == "/disabled":
			w.WriteHeader(http.StatusServiceUnavailable)
		case r.Header.Get("Authorization") != "Bearer lf_good":
			w.WriteHeader(http.StatusUnauthorized)
		case n == 1:
			// The first attempt is rate limited.
			w.Header().Set("Retry-After", "1")
			w.WriteHeader(http.StatusTooManyRequests)
		default:
			conn, err := up.Upgrade(w, r, nil)
			if err == nil {
				conn.Close()
			}
		}
	}))
	defer srv.Close()
	ws := "ws" + strings.TrimPrefix(srv.URL, "http")

	conn, err := dialViewer(context.Background(), ws+livePath, "lf_good")
	if err != nil {
		t.Fatalf("dial after a 429: %v", err)
	}
	conn.Close()
	if got := calls.Load(); got != 2 {
		t.Errorf("%d handshakes, want 2 (one 429, one retry)", got)
	}

	tests := []struct {
		name, path, token string
		noRoute           bool
		want              string
	}{
		{"no route", "/missing", "lf_good", true, "404"},
		{"feed disabled", "/disabled", "lf_good", true, "503"},
		{"bad token", livePath, "lf_bad", false, "401"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := dialViewer(context.Background(), ws+tt.path, tt.token)
			if err == nil || errors.Is(err, errNoLiveRoute) != tt.noRoute || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("dial: %v; want an error with %s (no route: %v)", err, tt.want, tt.noRoute)
			}
		})
	}
}

func TestQuantile(t *testing.T) {
	var d []time.Duration
	for i := 1; i <= 100; i++ {
		d = append(d, time.Duration(i)*time.Millisecond)
	}
	tests := []struct {
		name string
		in   []time.Duration
		q    float64
		want time.Duration
	}{
		{"p50 of 1..100", d, 0.5, 50 * time.Millisecond},
		{"p99 of 1..100", d, 0.99, 99 * time.Millisecond},
		{"p100", d, 1, 100 * time.Millisecond},
		{"one sample", d[:1], 0.99, time.Millisecond},
		{"none", nil, 0.5, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := quantile(tt.in, tt.q); got != tt.want {
				t.Errorf("quantile(%v) = %v, want %v", tt.q, got, tt.want)
			}
		})
	}
}
