package web_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/internal/testdb"
	"github.com/linkforge/linkforge/schedule"
	"github.com/linkforge/linkforge/web"
	"github.com/linkforge/linkforge/webhook"
)

// TestRedirectsWhileReceiverHangs: with every delivery slot a webhook may
// take held by a receiver that answers after 10 s, redirects (and a link
// created through the API, whose delivery then queues) complete while the
// held attempts are in flight, each well within a deadline far below the
// receiver's 10 s. The held attempts are counted, not timed.
func TestRedirectsWhileReceiverHangs(t *testing.T) {
	testdb.Each(t, func(t *testing.T, st linkforge.Store) {
		var held, got atomic.Int64
		release := make(chan struct{})
		slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			got.Add(1)
			held.Add(1)
			defer held.Add(-1)
			select {
			case <-release:
			case <-time.After(10 * time.Second):
			}
			w.WriteHeader(http.StatusNoContent)
		}))
		defer slow.Close()
		defer close(release)

		tenant, token := mustTenantToken(t, st, "acme")
		disp, err := webhook.New(webhook.Config{Store: st, AllowPrivate: true, PerWebhook: 2})
		if err != nil {
			t.Fatal(err)
		}
		sched, err := schedule.New(schedule.Config{Owner: "node-test", Work: []schedule.Work{disp},
			Resolution: 10 * time.Millisecond, Backoff: schedule.Backoff})
		if err != nil {
			t.Fatal(err)
		}
		st.(interface{ OnDeliveries(func(time.Time)) }).OnDeliveries(sched.Reschedule)
		if err := sched.Start(context.Background()); err != nil {
			t.Fatal(err)
		}
		defer func() {
			sched.Stop(context.Background())
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			defer cancel()
			disp.Close(ctx) // the held attempts are cut
		}()
		e := newEnv(t, st, func(c *web.Config) { c.Now = time.Now; c.WebhookAllowPrivate = true })
		r := e.do(http.MethodPost, "/api/v1/webhooks", token, `{"url":"`+slow.URL+`","events":["link.created"]}`)
		mustStatus(t, r, http.StatusCreated)
		for i := range 5 {
			mustStoreLink(t, st, linkforge.Link{TenantID: tenant, Slug: fmt.Sprintf("go%d", i), URL: "https://example.com/"})
		}
		deadline := time.Now().Add(5 * time.Second)
		for held.Load() < 2 && time.Now().Before(deadline) {
			time.Sleep(5 * time.Millisecond) // the receiver has no event to wait on
		}
		if held.Load() != 2 {
			t.Fatalf("%d attempts held, want the webhook's cap, 2", held.Load())
		}

		const redirects = 200
		start := time.Now()
		for i := range redirects {
			mustRedirect(t, e.do(http.MethodGet, fmt.Sprintf("/go%d", i%5), "", ""), "https://example.com/")
		}
		e.mustCreate(token, `{"slug":"during","url":"https://example.com/d"}`)
		took := time.Since(start)
		if h := held.Load(); h != 2 {
			t.Errorf("after the redirects %d attempts were held, want them still in flight (2)", h)
		}
		if took > 5*time.Second {
			t.Errorf("%d redirects and a create took %v while a receiver hung: they waited for it", redirects, took)
		}
		if n := got.Load(); n != 2 {
			t.Errorf("the hung receiver got %d requests, want its cap 2", n)
		}
		t.Logf("%d redirects and a create in %v with 2 deliveries hung", redirects, took)
	})
}
