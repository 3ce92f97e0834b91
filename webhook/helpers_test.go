package webhook_test

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/expiry"
	"github.com/linkforge/linkforge/internal/pgtest"
	"github.com/linkforge/linkforge/schedule"
	"github.com/linkforge/linkforge/store/postgres"
	"github.com/linkforge/linkforge/webhook"
)

func TestMain(m *testing.M) { pgtest.MainNoLeaks(m) }

// verify checks a Standard Webhooks signature with an implementation of the
// spec written here, independent of the library the package signs with:
// base64(HMAC-SHA256(key, id + "." + timestamp + "." + body)), key the
// base64-decoded part of the secret after whsec_, header "v1,<sig>"
// (several space-separated signatures allowed).
func verify(secret string, h http.Header, body []byte) error {
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, "whsec_"))
	if err != nil {
		return fmt.Errorf("secret: %w", err)
	}
	id, ts := h.Get("webhook-id"), h.Get("webhook-timestamp")
	if id == "" || ts == "" {
		return fmt.Errorf("missing webhook-id or webhook-timestamp")
	}
	if _, err := strconv.ParseInt(ts, 10, 64); err != nil {
		return fmt.Errorf("webhook-timestamp %q: %w", ts, err)
	}
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(id + "." + ts + "."))
	mac.Write(body)
	want := "v1," + base64.StdEncoding.EncodeToString(mac.Sum(nil))
	for _, sig := range strings.Fields(h.Get("webhook-signature")) {
		if hmac.Equal([]byte(sig), []byte(want)) {
			return nil
		}
	}
	return fmt.Errorf("no matching signature in %q", h.Get("webhook-signature"))
}

// request is one POST a receiver got.
type request struct {
	ID, Type  string
	Timestamp int64 // webhook-timestamp: the sender's clock
	Body      []byte
	Event     struct {
		ID        string          `json:"id"`
		Type      string          `json:"type"`
		CreatedAt time.Time       `json:"created_at"`
		Data      json.RawMessage `json:"data"`
	}
	VerifyErr error
}

// receiver is an httptest server that records every POST, checks its
// signature against the secret set after the webhook was created, and
// answers status(n) to the n-th request (from 1).
type receiver struct {
	*httptest.Server
	mu     sync.Mutex
	secret string
	reqs   []request
	status func(n int) int
	// got is signalled (non-blocking) on every request.
	got chan struct{}
}

func newReceiver(t *testing.T, status func(n int) int) *receiver {
	t.Helper()
	r := &receiver{status: status, got: make(chan struct{}, 1)}
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		rq := request{ID: req.Header.Get("webhook-id"), Body: body}
		rq.Timestamp, _ = strconv.ParseInt(req.Header.Get("webhook-timestamp"), 10, 64)
		json.Unmarshal(body, &rq.Event) //nolint:errcheck // a body that does not decode leaves an event without a type, which every test refuses
		rq.Type = rq.Event.Type
		r.mu.Lock()
		rq.VerifyErr = verify(r.secret, req.Header, body)
		r.reqs = append(r.reqs, rq)
		n := len(r.reqs)
		r.mu.Unlock()
		select {
		case r.got <- struct{}{}:
		default:
		}
		code := http.StatusNoContent
		if r.status != nil {
			code = r.status(n)
		}
		w.WriteHeader(code)
	}))
	t.Cleanup(r.Close)
	return r
}

func (r *receiver) setSecret(s string) {
	r.mu.Lock()
	r.secret = s
	r.mu.Unlock()
}

func (r *receiver) requests() []request {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]request(nil), r.reqs...)
}

// waitFor waits, on the real clock, until cond holds of the receiver's
// requests or the deadline passes.
func (r *receiver) waitFor(t *testing.T, d time.Duration, what string, cond func([]request) bool) []request {
	t.Helper()
	deadline := time.After(d)
	for {
		reqs := r.requests()
		if cond(reqs) {
			return reqs
		}
		select {
		case <-r.got:
		case <-deadline:
			t.Fatalf("after %v, still waiting for %s; got %d requests", d, what, len(reqs))
		}
	}
}

// node is one node's scheduler and dispatcher.
type node struct {
	sched *schedule.Scheduler
	disp  *webhook.Dispatcher
}

// startNode starts a scheduler with the expiry alarms (running onExpired)
// and a Dispatcher on s; cfg and dcfg fill in the rest. The dispatcher
// reaches 127.0.0.1 receivers unless dcfg says otherwise.
func startNode(t *testing.T, s linkforge.Store, cfg schedule.Config, dcfg webhook.Config, onExpired ...expiry.Hook) *node {
	t.Helper()
	dcfg.Store = s
	d, err := webhook.New(dcfg)
	if err != nil {
		t.Fatalf("webhook.New: %v", err)
	}
	alarms, err := expiry.New(expiry.Config{Store: s, OnExpired: onExpired})
	if err != nil {
		t.Fatalf("expiry.New: %v", err)
	}
	cfg.Work = []schedule.Work{alarms, d}
	if cfg.Owner == "" {
		cfg.Owner = "node-test"
	}
	if cfg.Backoff == nil {
		cfg.Backoff = schedule.Backoff
	}
	sched, err := schedule.New(cfg)
	if err != nil {
		t.Fatalf("schedule.New: %v", err)
	}
	if n, ok := s.(interface{ OnDeliveries(func(time.Time)) }); ok {
		n.OnDeliveries(sched.Reschedule)
	}
	if err := sched.Start(context.Background()); err != nil {
		t.Fatalf("Start: %v", err)
	}
	n := &node{sched: sched, disp: d}
	t.Cleanup(func() { n.stop(t) })
	return n
}

func (n *node) stop(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := n.sched.Stop(ctx); err != nil {
		t.Errorf("scheduler Stop: %v", err)
	}
	if err := n.disp.Close(ctx); err != nil {
		t.Errorf("dispatcher Close: %v", err)
	}
}

func mustTenant(t *testing.T, s linkforge.Store, name string) linkforge.Tenant {
	t.Helper()
	tn, err := s.EnsureTenant(t.Context(), name)
	if err != nil {
		t.Fatalf("EnsureTenant: %v", err)
	}
	return tn
}

// mustWebhook creates a webhook to url for events, allowing private
// addresses (the receivers are on 127.0.0.1), and gives r its secret.
func mustWebhook(t *testing.T, s linkforge.Store, tenantID int64, r *receiver, events ...string) linkforge.Webhook {
	t.Helper()
	w, err := webhook.Create(t.Context(), s, tenantID, r.URL, events, webhook.Policy{AllowPrivate: true})
	if err != nil {
		t.Fatalf("Create webhook: %v", err)
	}
	r.setSecret(w.Secret)
	return w
}

// migratedPostgres returns the URL of a fresh migrated database; called
// outside bubbles.
func migratedPostgres(t *testing.T) string {
	t.Helper()
	url := pgtest.New(t)
	db, err := postgres.Open(t.Context(), url)
	if err != nil {
		t.Fatalf("open postgres: %v", err)
	}
	defer db.Close()
	if err := db.Migrate(t.Context()); err != nil {
		t.Fatalf("migrate postgres: %v", err)
	}
	return url
}

func openPostgres(t *testing.T, url string) *postgres.DB {
	t.Helper()
	db, err := postgres.Open(t.Context(), url)
	if err != nil {
		t.Fatalf("open postgres: %v", err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}
