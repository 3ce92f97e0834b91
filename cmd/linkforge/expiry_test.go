package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestExpiryEndToEnd drives a link across its expires_at on the real binary:
// no request sent at or after expires_at gets the target, whatever the alarm
// is doing; the alarm then marks the link expired and ends `done`.
func TestExpiryEndToEnd(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		testExpiryEndToEnd(t, b.newNode(t))
	})
}

func testExpiryEndToEnd(t *testing.T, n *node) {
	const target = "https://example.com/soon-gone"
	token := strings.TrimSpace(n.mustRun("token", "create", "--tenant", "acme"))
	srv := n.startServer("http://lf.test")
	base := "http://" + srv.addr

	expiresAt := time.Now().Add(1500 * time.Millisecond).UTC().Truncate(time.Millisecond)
	resp, body := mustDo(t, http.MethodPost, base+"/api/v1/links", token, fmt.Sprintf(
		`{"url":%q,"slug":"soon","expires_at":%q}`, target, expiresAt.Format(time.RFC3339Nano)))
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("create link: %d %s", resp.StatusCode, body)
	}

	// Hammer the link across the boundary. The test and the server share
	// one clock, so a request sent at or after expiresAt must be refused.
	var before, after int
	deadline := expiresAt.Add(time.Second)
	for time.Now().Before(deadline) {
		sent := time.Now()
		resp, err := noRedirects.Get(base + "/soon")
		if err != nil {
			t.Fatalf("GET /soon: %v", err)
		}
		resp.Body.Close()
		loc := resp.Header.Get("Location")
		if !sent.Before(expiresAt) {
			after++
			if resp.StatusCode != http.StatusGone || loc != "" {
				t.Fatalf("request sent %v after expires_at got %d Location %q, want 410 and no target",
					sent.Sub(expiresAt), resp.StatusCode, loc)
			}
		} else if resp.StatusCode == http.StatusFound && loc == target {
			before++
		}
	}
	if before == 0 || after == 0 {
		t.Fatalf("the load did not straddle expires_at: %d redirects before, %d refusals after", before, after)
	}

	// The alarm marks the link expired and finishes.
	var link struct {
		ExpiredAt *time.Time `json:"expired_at"`
	}
	var alarms struct {
		Alarms []struct{ Link, State string } `json:"alarms"`
	}
	for wait := time.Now().Add(hangGuard); ; {
		resp, body := mustDo(t, http.MethodGet, base+"/api/v1/links/soon", token, "")
		if resp.StatusCode != http.StatusOK || json.Unmarshal(body, &link) != nil {
			t.Fatalf("GET link: %d %s", resp.StatusCode, body)
		}
		resp, body = mustDo(t, http.MethodGet, base+"/api/v1/alarms?state=done", token, "")
		if resp.StatusCode != http.StatusOK || json.Unmarshal(body, &alarms) != nil {
			t.Fatalf("GET alarms: %d %s", resp.StatusCode, body)
		}
		if link.ExpiredAt != nil && len(alarms.Alarms) == 1 {
			break
		}
		if time.Now().After(wait) {
			t.Fatalf("the expiry alarm did not finish: expired_at %v, done alarms %+v", link.ExpiredAt, alarms.Alarms)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if link.ExpiredAt.Before(expiresAt) {
		t.Fatalf("expired_at %v is before expires_at %v", link.ExpiredAt, expiresAt)
	}
	if alarms.Alarms[0].Link != "soon" || alarms.Alarms[0].State != "done" {
		t.Fatalf("done alarms = %+v, want the link's", alarms.Alarms)
	}
	if code := srv.stop(t); code != 0 {
		t.Fatalf("SIGTERM: exit %d", code)
	}
}
