package quota_test

import (
	"context"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/internal/pgtest"
	"github.com/linkforge/linkforge/internal/testdb"
	"github.com/linkforge/linkforge/quota"
)

func TestMain(m *testing.M) { pgtest.MainNoLeaks(m) }

// TestGaugeCountsTenantsOverQuota: the gauge counts the tenants whose
// clicks this month pass their max_clicks_per_month; last month's clicks
// and tenants without a monthly quota do not count.
func TestGaugeCountsTenantsOverQuota(t *testing.T) {
	testdb.Each(t, func(t *testing.T, s linkforge.Store) {
		ctx := t.Context()
		now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
		reg := prometheus.NewRegistry()
		q, err := quota.New(quota.Config{Store: s, Registerer: reg, Now: func() time.Time { return now }})
		if err != nil {
			t.Fatal(err)
		}
		clicks := map[string]int64{"over": 11, "under": 10, "free": 500, "lastmonth": 0}
		for name, n := range clicks {
			ten, err := s.EnsureTenant(ctx, name)
			if err != nil {
				t.Fatal(err)
			}
			l, err := s.CreateLink(ctx, linkforge.Link{TenantID: ten.ID, Slug: "s-" + name, URL: "https://example.com/"})
			if err != nil {
				t.Fatal(err)
			}
			if name != "free" {
				ten10 := int64(10)
				if _, err := q.Set(ctx, ten.ID, linkforge.QuotaChange{MaxClicksPerMonth: linkforge.QuotaValue{Set: true, Value: &ten10}}); err != nil {
					t.Fatal(err)
				}
			}
			rows := []linkforge.RollupRow{{LinkID: l.ID, Bucket: now.Add(-time.Hour), Count: n}}
			if name == "lastmonth" {
				rows[0] = linkforge.RollupRow{LinkID: l.ID, Bucket: time.Date(2026, 10, 31, 23, 59, 0, 0, time.UTC), Count: 99}
			}
			if err := s.UpsertRollup(ctx, "n1", rows); err != nil {
				t.Fatal(err)
			}
		}
		if err := q.RefreshGauge(ctx); err != nil {
			t.Fatal(err)
		}
		mfs, err := reg.Gather()
		if err != nil || len(mfs) != 1 {
			t.Fatalf("gather: %v, %v", mfs, err)
		}
		if v := mfs[0].GetMetric()[0].GetGauge().GetValue(); v != 1 {
			t.Errorf("linkforge_tenant_over_quota = %v, want 1 (over: 11 > 10)", v)
		}
		sctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		if err := q.Stop(sctx); err != nil {
			t.Errorf("Stop of a service never started: %v", err)
		}
	})
}

// TestStartStop: Stop is safe on a Service never started and twice, after
// a Start (a second Start is a no-op), and each Stop returns once the
// refreshes have ended.
func TestStartStop(t *testing.T) {
	s := testdb.SQLite(t)
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()

	never, err := quota.New(quota.Config{Store: s})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		if err := never.Stop(ctx); err != nil {
			t.Errorf("Stop %d of a service never started: %v", i+1, err)
		}
	}

	q, err := quota.New(quota.Config{Store: s, Refresh: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	q.Start(ctx)
	q.Start(ctx)
	for i := range 2 {
		if err := q.Stop(ctx); err != nil {
			t.Errorf("Stop %d: %v", i+1, err)
		}
	}
}
