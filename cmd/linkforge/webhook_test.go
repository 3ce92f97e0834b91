package main

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestWebhookSurvivesKill: the real binary is killed (SIGKILL) while a
// delivery is in flight; after a restart the delivery is taken over when
// its lease expires (30 s) and delivered, with the same webhook-id. Slow:
// skipped under -short.
func TestWebhookSurvivesKill(t *testing.T) {
	if testing.Short() {
		t.Skip("waits for a 30 s lease")
	}
	t.Parallel()
	var (
		mu       sync.Mutex
		ids      []string
		first    = make(chan struct{})
		hold     = make(chan struct{})
		answered = make(chan string, 10)
	)
	rcv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		ids = append(ids, r.Header.Get("webhook-id"))
		n := len(ids)
		mu.Unlock()
		if n == 1 {
			close(first)
			<-hold // the node dies meanwhile; this answer reaches nobody
		}
		w.WriteHeader(http.StatusNoContent)
		answered <- r.Header.Get("webhook-id")
	}))
	defer rcv.Close()
	defer close(hold)

	n := newNode(t, "")
	n.serveArgs = []string{"--webhook-allow-private", "true"}
	token := strings.TrimSpace(n.mustRun("token", "create", "--tenant", "acme"))
	srv := n.startServer("http://lf.test")
	base := "http://" + srv.addr
	resp, body := mustDo(t, http.MethodPost, base+"/api/v1/webhooks", token,
		`{"url":"`+rcv.URL+`/hook","events":["link.created"]}`)
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("create webhook: %d %s", resp.StatusCode, body)
	}
	var wh struct{ ID, Secret string }
	json.Unmarshal(body, &wh) //nolint:errcheck // a body that does not decode leaves the zero value, which the assertions below refuse
	if resp, body := mustDo(t, http.MethodPost, base+"/api/v1/links", token, `{"slug":"kill","url":"https://example.com/"}`); resp.StatusCode != http.StatusCreated {
		t.Fatalf("create link: %d %s", resp.StatusCode, body)
	}
	select {
	case <-first:
	case <-time.After(hangGuard):
		t.Fatal("no delivery attempt")
	}
	if err := srv.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	<-srv.exited

	srv = n.startServer("http://lf.test")
	base = "http://" + srv.addr
	var id string
	select {
	case id = <-answered:
		// The first, held request answers only when hold closes: this is
		// the attempt of the restarted node.
	case <-time.After(hangGuard):
		t.Fatal("the delivery was not retried after the restart")
	}
	mu.Lock()
	if len(ids) != 2 || id != ids[0] {
		t.Errorf("requests %q, answered %q: want the same webhook-id twice", ids, id)
	}
	mu.Unlock()
	// Recorded just after the answer: the log shows it delivered, attempt 2.
	waitFor(t, 10*time.Second, "the delivery recorded", func() bool {
		_, body := mustDo(t, http.MethodGet, base+"/api/v1/webhooks/"+wh.ID+"/deliveries", token, "")
		var out struct {
			Deliveries []struct {
				State    string
				Attempts int
			}
		}
		json.Unmarshal(body, &out) //nolint:errcheck // a body that does not decode leaves the zero value, which the assertions below refuse
		return len(out.Deliveries) == 1 && out.Deliveries[0].State == "delivered" && out.Deliveries[0].Attempts == 2
	})
}

// TestWebhookMetricsAtStart: the webhook metrics are in /metrics from the
// start, at 0, so an alert on the dead counter has a series to watch.
func TestWebhookMetricsAtStart(t *testing.T) {
	n := newNode(t, "")
	srv := n.startServer("http://lf.test")
	resp, body := mustDo(t, http.MethodGet, "http://"+srv.addr+"/metrics", "", "")
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("/metrics: %d", resp.StatusCode)
	}
	for _, line := range []string{
		"linkforge_webhook_deliveries_dead_total 0",
		`linkforge_webhook_deliveries_total{result="delivered"} 0`,
		`linkforge_webhook_deliveries_total{result="failed"} 0`,
	} {
		if !strings.Contains(string(body), "\n"+line+"\n") {
			t.Errorf("/metrics lacks %q", line)
		}
	}
}
