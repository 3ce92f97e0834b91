package main

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

var testRoutes = map[string]string{
	"abc1234": "https://example.com/landing/1?utm_source=linkforge-bench",
	"hot":     "https://example.com/hot",
}

// noFollow is a client that reports redirects instead of following them.
func noFollow(c *http.Client) *http.Client {
	cp := *c
	cp.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	return &cp
}

func mustRequest(t *testing.T, c *http.Client, method, url string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s %s: read body: %v", method, url, err)
	}
	return resp, string(body)
}

func TestReferenceHandler(t *testing.T) {
	srv := httptest.NewServer(newReferenceServer(testRoutes).Handler)
	defer srv.Close()
	client := noFollow(srv.Client())

	tests := []struct {
		name         string
		method, path string
		status       int
		location     string
		cacheControl string
	}{
		{"GET redirects", http.MethodGet, "/abc1234", http.StatusFound, testRoutes["abc1234"], "private, max-age=0"},
		{"HEAD redirects", http.MethodHead, "/hot", http.StatusFound, testRoutes["hot"], "private, max-age=0"},
		{"unknown slug", http.MethodGet, "/nope", http.StatusNotFound, "", ""},
		{"root", http.MethodGet, "/", http.StatusNotFound, "", ""},
		{"other method", http.MethodPost, "/hot", http.StatusMethodNotAllowed, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, body := mustRequest(t, client, tt.method, srv.URL+tt.path)
			if resp.StatusCode != tt.status {
				t.Errorf("status %d, want %d", resp.StatusCode, tt.status)
			}
			if got := resp.Header.Get("Location"); got != tt.location {
				t.Errorf("Location %q, want %q", got, tt.location)
			}
			if got := resp.Header.Get("Cache-Control"); got != tt.cacheControl {
				t.Errorf("Cache-Control %q, want %q", got, tt.cacheControl)
			}
			if body != "" {
				t.Errorf("body %q, want none: LinkForge's 302 has none either", body)
			}
		})
	}
}

// TestServeReference runs the child process's side in process: routes on
// stdin, the address on stdout, serving until stdin closes.
func TestServeReference(t *testing.T) {
	stdinR, stdinW := io.Pipe()
	stdoutR, stdoutW := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- serveReference(context.Background(), stdinR, stdoutW)
		stdoutW.Close()
	}()
	go func() {
		// Routes, then nothing until the test closes stdin.
		io.WriteString(stdinW, `{"abc1234":"https://example.com/a"}`+"\n")
	}()

	line, err := bufio.NewReader(stdoutR).ReadString('\n')
	if err != nil {
		t.Fatalf("read the announced address: %v", err)
	}
	addr, ok := strings.CutPrefix(strings.TrimSpace(line), "listening ")
	if !ok || !strings.HasPrefix(addr, "127.0.0.1:") {
		t.Fatalf("announced %q, want \"listening 127.0.0.1:PORT\"", line)
	}
	client := noFollow(&http.Client{Timeout: 10 * time.Second})
	resp, _ := mustRequest(t, client, http.MethodGet, "http://"+addr+"/abc1234")
	if resp.StatusCode != http.StatusFound || resp.Header.Get("Location") != "https://example.com/a" {
		t.Fatalf("GET /abc1234 = %d to %q, want 302 to https://example.com/a", resp.StatusCode, resp.Header.Get("Location"))
	}
	client.CloseIdleConnections()

	stdinW.Close() // the parent is done
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("serveReference: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("serveReference did not return after stdin closed")
	}
}

func TestServeReferenceRefusesBadRoutes(t *testing.T) {
	err := serveReference(context.Background(), strings.NewReader("not json"), io.Discard)
	if err == nil || !strings.Contains(err.Error(), "read routes") {
		t.Fatalf("serveReference with garbage on stdin: %v, want a read routes error", err)
	}
}
