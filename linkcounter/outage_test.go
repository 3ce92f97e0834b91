package linkcounter

import (
	"io"
	"net"
	"net/url"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/internal/testlog"
	"github.com/linkforge/linkforge/linkcounter/clicklog"
)

// tcpProxy forwards TCP connections to a target until it is cut: then it
// closes every open connection and refuses new ones (accepts and closes them
// at once), which is what a client sees of a stopped or partitioned
// database. Its goroutines run outside any synctest bubble: a bubble whose
// goroutine blocks in Accept could never advance its clock.
type tcpProxy struct {
	ln     net.Listener
	target string
	up     atomic.Bool
	mu     sync.Mutex
	conns  map[net.Conn]struct{}
	wg     sync.WaitGroup
}

func newTCPProxy(t *testing.T, target string) *tcpProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("proxy listen: %v", err)
	}
	p := &tcpProxy{ln: ln, target: target, conns: make(map[net.Conn]struct{})}
	p.up.Store(true)
	p.wg.Go(p.accept)
	t.Cleanup(p.close)
	return p
}

func (p *tcpProxy) addr() string { return p.ln.Addr().String() }

func (p *tcpProxy) accept() {
	for {
		in, err := p.ln.Accept()
		if err != nil {
			return // closed
		}
		if !p.up.Load() {
			in.Close()
			continue
		}
		out, err := net.Dial("tcp", p.target)
		if err != nil {
			in.Close()
			continue
		}
		p.mu.Lock()
		p.conns[in], p.conns[out] = struct{}{}, struct{}{}
		p.mu.Unlock()
		pipe := func(dst, src net.Conn) {
			io.Copy(dst, src)
			dst.Close()
			src.Close()
		}
		p.wg.Go(func() { pipe(out, in) })
		p.wg.Go(func() { pipe(in, out) })
	}
}

// cut makes the target unreachable.
func (p *tcpProxy) cut() {
	p.up.Store(false)
	p.mu.Lock()
	defer p.mu.Unlock()
	for c := range p.conns {
		c.Close()
	}
	clear(p.conns)
}

// restore makes the target reachable again.
func (p *tcpProxy) restore() { p.up.Store(true) }

func (p *tcpProxy) close() {
	p.ln.Close()
	p.cut()
	p.wg.Wait()
}

// Outage: PostgreSQL is unreachable (cut through a proxy) for longer than the
// whole retry schedule while clicks keep coming. No click is lost, Record
// keeps succeeding (the journal is local), every failure is logged up to and
// past lastAttempt, and once the database is back the rollup catches up
// within two flush intervals.
func TestOutage(t *testing.T) {
	direct := migratedPostgres(t)
	u, err := url.Parse(direct)
	if err != nil {
		t.Fatalf("parse database URL: %v", err)
	}
	proxy := newTCPProxy(t, u.Host)
	u.Host = proxy.addr()
	viaProxy := u.String()

	synctest.Test(t, func(t *testing.T) {
		st := mustOpenPostgres(t, viaProxy)
		links := make([]linkforge.Link, 4)
		for i := range links {
			links[i] = mustLink(t, st, -1)
		}
		var logs testlog.Buffer
		// synchronous=NORMAL: power loss is not this test's subject, and an
		// fsync per tick would make it slow.
		j := mustJournal(t, t.TempDir(), clicklog.WithSync(clicklog.SyncWriteOnly))
		c := mustStart(t, Config{Store: st, Journal: j, Logger: logs.Logger()}, nil)

		// Load: every link clicked every 250 ms until stopLoad is closed.
		var acked atomic.Int64
		stopLoad := make(chan struct{})
		var load sync.WaitGroup
		for i := range links {
			load.Go(func() {
				tick := time.NewTicker(250 * time.Millisecond)
				defer tick.Stop()
				for {
					select {
					case <-stopLoad:
						return
					case <-tick.C:
					}
					if err := c.Record(t.Context(), &links[i], time.Now(), nil); err != nil {
						t.Errorf("record during the outage: %v", err)
						return
					}
					acked.Add(1)
				}
			})
		}

		time.Sleep(45 * time.Second) // the first flushes succeed
		synctest.Wait()
		if got := rollupSum(t, st, links); got == 0 {
			t.Fatalf("no click flushed before the outage")
		}

		proxy.cut()
		// Longer than the whole schedule (2+4+...+64 s = 126 s), then until
		// just after a failed attempt: the worst moment for the database to
		// return, a whole back-off away from the next attempt.
		time.Sleep(130 * time.Second)
		synctest.Wait()
		failures := len(logs.Records(t, "alarm_failed"))
		for len(logs.Records(t, "alarm_failed")) == failures {
			time.Sleep(100 * time.Millisecond)
			synctest.Wait()
		}
		proxy.restore()
		restoredAt := time.Now()
		ackedInOutage := acked.Load()

		recs := logs.Records(t, "alarm_failed")
		seen := map[float64]bool{}
		last := false
		for _, r := range recs {
			seen[r["retryCount"].(float64)] = true
			last = last || r["lastAttempt"] == true
		}
		for k := range MaxRetries + 1 {
			if !seen[float64(k)] {
				t.Errorf("no alarm_failed record with retryCount %d", k)
			}
		}
		if !last {
			t.Errorf("no alarm_failed record with lastAttempt true")
		}

		// The load goes on. Two flush intervals after the database is back,
		// every click acknowledged before is in the rollup.
		time.Sleep(2 * DefaultFlushInterval)
		synctest.Wait()
		if got := rollupSum(t, st, links); got < ackedInOutage {
			t.Errorf("rollup %v after the database returned = %d, want at least the %d clicks acknowledged until then",
				time.Since(restoredAt), got, ackedInOutage)
		}

		// No click lost, none counted twice.
		close(stopLoad)
		load.Wait()
		mustStop(t, c)
		if got, want := rollupSum(t, st, links), acked.Load(); got != want {
			t.Errorf("rollup after Stop = %d, want %d (acknowledged)", got, want)
		}
	})
}

// rollupSum returns the links' rollup totals, summed.
func rollupSum(t *testing.T, st Store, links []linkforge.Link) int64 {
	t.Helper()
	var sum int64
	for _, l := range links {
		sum += mustClickTotal(t, st, l.ID)
	}
	return sum
}

// Outage without load: the clicks stop before PostgreSQL goes away, so no
// new click re-arms a flush. The failed flush is retried on the schedule,
// past lastAttempt (retryCount 6) and on at the capped interval, and once
// the database is back the next attempt, at most 64 s later, writes every
// click: nothing is dropped at the end of the schedule, and nothing waits
// for Stop.
func TestOutageWithoutLoad(t *testing.T) {
	direct := migratedPostgres(t)
	u, err := url.Parse(direct)
	if err != nil {
		t.Fatalf("parse database URL: %v", err)
	}
	proxy := newTCPProxy(t, u.Host)
	u.Host = proxy.addr()
	viaProxy := u.String()

	synctest.Test(t, func(t *testing.T) {
		st := mustOpenPostgres(t, viaProxy)
		ref := mustOpenPostgres(t, direct) // to read the rollup while the proxy is cut
		links := make([]linkforge.Link, 3)
		for i := range links {
			links[i] = mustLink(t, st, -1)
		}
		var logs testlog.Buffer
		j := mustJournal(t, t.TempDir(), clicklog.WithSync(clicklog.SyncWriteOnly))
		c := mustStart(t, Config{Store: st, Journal: j, Logger: logs.Logger()}, nil)
		var acked int64
		for i := range links {
			for range 5 + i {
				mustRecord(t, c, &links[i], time.Now())
				acked++
			}
		}
		proxy.cut() // before the first flush: every click waits for the database

		// Until an attempt after lastAttempt has failed too.
		deadline := time.Now().Add(10 * time.Minute)
		pastLast := func() bool {
			for _, r := range logs.Records(t, "alarm_failed") {
				if r["retryCount"].(float64) > MaxRetries {
					return true
				}
			}
			return false
		}
		for !pastLast() {
			if time.Now().After(deadline) {
				t.Fatalf("no failed attempt after lastAttempt within 10 minutes: %d alarm_failed records",
					len(logs.Records(t, "alarm_failed")))
			}
			time.Sleep(100 * time.Millisecond)
			synctest.Wait()
		}
		recs := logs.Records(t, "alarm_failed")
		last := false
		for _, r := range recs {
			last = last || (r["lastAttempt"] == true && r["retryCount"] == float64(MaxRetries))
		}
		if !last {
			t.Errorf("no alarm_failed record with retryCount %d and lastAttempt true: %v", MaxRetries, recs)
		}
		if got := rollupSum(t, ref, links); got != 0 {
			t.Fatalf("rollup during the outage = %d, want 0", got)
		}

		proxy.restore()
		time.Sleep(c.backoff(MaxRetries) + time.Second)
		synctest.Wait()
		if got := rollupSum(t, st, links); got != acked {
			t.Errorf("rollup %v after the database returned, with no new click = %d, want %d (acknowledged)",
				c.backoff(MaxRetries)+time.Second, got, acked)
		}
		if p := c.pending.Load(); p != 0 {
			t.Errorf("pending after the catch-up = %d, want 0", p)
		}
		mustStop(t, c)
	})
}
