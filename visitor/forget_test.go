package visitor_test

import (
	"context"
	"log/slog"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/internal/pgtest"
	"github.com/linkforge/linkforge/internal/testdb"
	"github.com/linkforge/linkforge/rules"
	"github.com/linkforge/linkforge/schedule"
	"github.com/linkforge/linkforge/visitor"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// hangGuard bounds a wait for the scheduler: only a broken build gets
// near it.
const hangGuard = 30 * time.Second

// clock is a test's UTC time, moved by hand.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *clock) Set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = t
}

// forgotten is a slog handler that reports each day the Hasher says it
// destroyed the keys before.
type forgotten chan time.Time

func (f forgotten) Enabled(context.Context, slog.Level) bool { return true }
func (f forgotten) Handle(_ context.Context, r slog.Record) error {
	r.Attrs(func(a slog.Attr) bool {
		if a.Key == "day" {
			f <- a.Value.Time()
		}
		return true
	})
	return nil
}
func (f forgotten) WithAttrs([]slog.Attr) slog.Handler { return f }
func (f forgotten) WithGroup(string) slog.Handler      { return f }

// TestForgetRunsFromTheScheduler: with the Hasher as the scheduler's
// work, the previous day's key row is destroyed once the UTC day is over
// although nothing is hashed after midnight (a deployment without clicks),
// on both backends; and the next day's hashes and variants are not
// the previous day's.
func TestForgetRunsFromTheScheduler(t *testing.T) {
	testdb.Each(t, func(t *testing.T, s linkforge.Store) {
		ctx := t.Context()
		keys := s.(visitor.KeyStore)
		day1 := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
		clk := &clock{now: day1.Add(23*time.Hour + 59*time.Minute)}
		done := make(forgotten, 8)
		h := visitor.NewHasher(keys, clk.Now, slog.New(done))

		l := &linkforge.Link{ID: 7, URL: "https://example.com/", Routing: &linkforge.Routing{Variants: []linkforge.Variant{
			{URL: "https://example.com/a", Weight: 50}, {URL: "https://example.com/b", Weight: 50}}}}
		routes := rules.Compile(l)
		picks := func() (string, uint64) {
			var b strings.Builder
			for i := range 32 {
				req := rules.Request{Addr: netip.AddrFrom4([4]byte{192, 0, 2, byte(i)}), UserAgent: "Firefox", Visitors: h, Ctx: ctx, Now: clk.Now()}
				b.WriteString(routes.Evaluate(&req).Variant)
			}
			return b.String(), h.Hash(ctx, netip.MustParseAddr("192.0.2.1"), "Firefox")
		}
		variants1, hash1 := picks()
		var probe visitor.Key
		probe[0] = 0xAA
		if k, err := keys.DayKey(ctx, day1, probe); err != nil || k == probe {
			t.Fatalf("day 1's key is not stored (%v)", err)
		}

		sched, err := schedule.New(schedule.Config{Owner: "node-1", Work: []schedule.Work{h},
			PollInterval: 20 * time.Millisecond, Resolution: 10 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		if err := sched.Start(ctx); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = sched.Stop(context.Background()) })
		wait := func(want time.Time) {
			t.Helper()
			for {
				select {
				case got := <-done:
					if got.Equal(want) {
						return
					}
				case <-time.After(hangGuard):
					t.Fatalf("the keys before %s were never destroyed", want.Format(time.DateOnly))
				}
			}
		}
		wait(day1) // at start: the days before day 1 (none)
		if k, err := keys.DayKey(ctx, day1, probe); err != nil || k == probe {
			t.Fatalf("day 1's key is gone during day 1 (%v)", err)
		}

		// Midnight passes; nobody clicks.
		clk.Set(day1.Add(24*time.Hour + time.Second))
		wait(day1.Add(24 * time.Hour))
		k, err := keys.DayKey(ctx, day1, probe)
		if err != nil {
			t.Fatal(err)
		}
		if k != probe {
			t.Fatal("day 1's key row is still stored after day 1 ended")
		}
		if err := keys.DeleteKeysBefore(ctx, day1.Add(24*time.Hour)); err != nil { // the probe
			t.Fatal(err)
		}

		variants2, hash2 := picks()
		if hash2 == hash1 {
			t.Error("the same visitor hashes alike on the next day")
		}
		if variants2 == variants1 {
			t.Errorf("all 32 visitors kept their variant on the next day (%s)", variants1)
		}
	})
}
