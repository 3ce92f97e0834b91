package webhook_test

import (
	"net/http"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/internal/testdb"
	"github.com/linkforge/linkforge/schedule"
	"github.com/linkforge/linkforge/webhook"
)

// TestRetrySchedule: a receiver that always fails gets exactly 7
// attempts, at 0, 2, 6, 14, 30, 62 and 126 s (the alarms' schedule, on
// the bubble's virtual clock, read from the webhook-timestamp headers);
// then the delivery is dead, listed and counted, and a replay delivers
// it once, with the same webhook-id. A receiver failing 6 times gets its
// event on the seventh attempt.
func TestRetrySchedule(t *testing.T) {
	// The receivers run outside the bubble: a listener's Accept inside it
	// would keep it from ever being idle.
	receivers := func(t *testing.T) (*receiver, *receiver, *atomic.Bool) {
		var fail atomic.Bool
		fail.Store(true)
		rcv := newReceiver(t, func(n int) int {
			if fail.Load() {
				return http.StatusInternalServerError
			}
			return http.StatusOK
		})
		sixth := newReceiver(t, func(n int) int {
			if n <= 6 {
				return http.StatusBadGateway
			}
			return http.StatusOK
		})
		return rcv, sixth, &fail
	}
	run := func(t *testing.T, s linkforge.Store, rcv, sixth *receiver, fail *atomic.Bool) {
		t0 := time.Now()
		tn := mustTenant(t, s, "acme")
		w := mustWebhook(t, s, tn.ID, rcv, linkforge.EventLinkCreated)
		w6 := mustWebhook(t, s, tn.ID, sixth, linkforge.EventLinkCreated)
		reg := prometheus.NewRegistry()
		// No keep-alive: an idle connection's reader would keep the
		// bubble from ever being idle, and its clock from advancing.
		tr := webhook.NewTransport(true)
		tr.DisableKeepAlives = true
		startNode(t, s, schedule.Config{}, webhook.Config{Transport: tr, Registry: reg})
		if _, err := s.CreateLink(t.Context(), linkforge.Link{TenantID: tn.ID, Slug: "x", URL: "https://example.com/"}); err != nil {
			t.Fatal(err)
		}
		time.Sleep(200 * time.Second) // virtual
		synctest.Wait()

		want := []int64{0, 2, 6, 14, 30, 62, 126}
		check := func(name string, reqs []request, n int) {
			if len(reqs) != n {
				t.Fatalf("%s: %d attempts, want %d", name, len(reqs), n)
			}
			for i, r := range reqs[:min(n, len(want))] {
				if got := r.Timestamp - reqs[0].Timestamp; got != want[i] {
					t.Errorf("%s: attempt %d at %d s, want %d s", name, i+1, got, want[i])
				}
				if r.ID != reqs[0].ID || r.VerifyErr != nil {
					t.Errorf("%s: attempt %d id %q (first %q), signature %v", name, i+1, r.ID, reqs[0].ID, r.VerifyErr)
				}
			}
		}
		reqs := rcv.requests()
		check("failing", reqs, 7)
		if reqs[0].Timestamp-t0.Unix() > 1 {
			t.Errorf("first attempt %d s after the event", reqs[0].Timestamp-t0.Unix())
		}
		check("failing 6 times", sixth.requests(), 7)
		if ds, _ := s.ListDeliveries(t.Context(), tn.ID, w6.ID, linkforge.DeliveryDelivered, 10); len(ds) != 1 || ds[0].Attempts != 7 || ds[0].LastStatus != 200 {
			t.Errorf("the sixth-time receiver's deliveries: %+v, want delivered after 7 attempts", ds)
		}

		dead, err := s.ListDeliveries(t.Context(), tn.ID, w.ID, linkforge.DeliveryDead, 10)
		if err != nil || len(dead) != 1 || dead[0].Attempts != 7 || dead[0].LastStatus != 500 || dead[0].EventID != reqs[0].ID {
			t.Fatalf("dead deliveries: %+v, %v; want one after 7 attempts, last status 500", dead, err)
		}
		if got := testutil.ToFloat64(mustCollector(t, reg, "linkforge_webhook_deliveries_dead_total")); got != 1 {
			t.Errorf("linkforge_webhook_deliveries_dead_total = %v, want 1", got)
		}
		if _, err := s.RetryDelivery(t.Context(), tn.ID, dead[0].ID+1000, time.Now()); linkforge.ErrorCode(err) != linkforge.ENotFound {
			t.Errorf("retry of an unknown delivery: %v", err)
		}
		if _, err := s.RetryDelivery(t.Context(), tn.ID+1000, dead[0].ID, time.Now()); linkforge.ErrorCode(err) != linkforge.ENotFound {
			t.Errorf("retry by another tenant: %v", err)
		}

		fail.Store(false)
		if _, err := s.RetryDelivery(t.Context(), tn.ID, dead[0].ID, time.Now()); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Second)
		synctest.Wait()
		reqs = rcv.requests()
		if len(reqs) != 8 || reqs[7].ID != reqs[0].ID || reqs[7].VerifyErr != nil {
			t.Fatalf("after the replay: %d requests, want 8, the last with the same webhook-id", len(reqs))
		}
		ds, _ := s.ListDeliveries(t.Context(), tn.ID, w.ID, "", 10)
		if len(ds) != 1 || ds[0].State != linkforge.DeliveryDelivered || ds[0].Attempts != 1 {
			t.Errorf("after the replay: %+v, want delivered in 1 attempt", ds)
		}
		if _, err := s.RetryDelivery(t.Context(), tn.ID, dead[0].ID, time.Now()); linkforge.ErrorCode(err) != linkforge.EConflict {
			t.Errorf("retry of a delivered delivery: %v, want EConflict", err)
		}
	}
	t.Run("sqlite", func(t *testing.T) {
		rcv, sixth, fail := receivers(t)
		synctest.Test(t, func(t *testing.T) { run(t, testdb.SQLite(t), rcv, sixth, fail) })
	})
	t.Run("postgres", func(t *testing.T) {
		url := migratedPostgres(t)
		rcv, sixth, fail := receivers(t)
		synctest.Test(t, func(t *testing.T) { run(t, openPostgres(t, url), rcv, sixth, fail) })
	})
}

func mustCollector(t *testing.T, reg *prometheus.Registry, name string) prometheus.Collector {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == name && len(mf.GetMetric()) == 1 {
			return prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "x"}, func() float64 {
				return mf.GetMetric()[0].GetCounter().GetValue()
			})
		}
	}
	t.Fatalf("metric %s not registered", name)
	return nil
}
