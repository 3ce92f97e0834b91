package storetest

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/linkforge/linkforge"
)

// WriteBeforeStatsSpeed writes clicks of two nodes on two links, with
// country rows over three UTC days, into s, a store whose schema stops
// before migration 00008; CheckAfterStatsSpeed checks, on the same database
// migrated, that tenant breakdowns over whole days (read from
// tenant_dims_daily, which 00008 backfills) hold them.
func WriteBeforeStatsSpeed(t *testing.T, s linkforge.Store) int64 {
	t.Helper()
	tn := mustTenant(t, s, "backfill")
	a := mustCreateLink(t, s, newLink(tn.ID, "bf-a"))
	b := mustCreateLink(t, s, newLink(tn.ID, "bf-b"))
	// ahour(2) is midnight: hours 2..73 are three whole days.
	for _, node := range []string{"n1", "n2"} {
		var dims []linkforge.DimRow
		for h := 0; h < 76; h += 5 {
			dims = append(dims,
				dim(a.ID, h, linkforge.DimCountry, "DE", 3),
				dim(b.ID, h, linkforge.DimCountry, "US", 1),
				dim(b.ID, h, linkforge.DimCountry, "DE", 1))
		}
		mustUpsertClicks(t, s, node, []linkforge.RollupRow{{LinkID: a.ID, Bucket: ahour(0), Count: 5}}, dims...)
	}
	return tn.ID
}

// CheckAfterStatsSpeed: see WriteBeforeStatsSpeed.
func CheckAfterStatsSpeed(t *testing.T, s linkforge.Store, tenantID int64) {
	t.Helper()
	for _, r := range [][2]int{{0, 76}, {2, 74}, {1, 51}, {7, 70}} {
		// Rows every 5 hours from hour 0, from 2 nodes: DE 3+1, US 1.
		var n int64
		for h := 0; h < 76; h += 5 {
			if h >= r[0] && h < r[1] {
				n++
			}
		}
		got := mustBreakdown(t, s, linkforge.BreakdownQuery{TenantID: tenantID, Dimension: linkforge.DimCountry,
			From: ahour(r[0]), To: ahour(r[1]), Limit: 10})
		checkBreakdown(t, fmt.Sprintf("hours %d..%d after migration 00008", r[0], r[1]), got,
			10*n, []linkforge.ValueCount{vc("DE", 8*n), vc("US", 2*n)}, 0)
	}
}

// BenchmarkFlush measures the database side of a counter's flush with
// click dimensions, the write its aggregates make heavier: one
// UpsertClicks of 1,000 links' rows of one minute (a new bucket each op,
// so a new hour every 60 ops) and their dimension rows of that hour, six
// dimensions and two values each, every count grown since the last flush.
// One op is one flush.
func BenchmarkFlush(b *testing.B, s linkforge.Store) {
	const links = 1000
	ctx := b.Context()
	tn, err := s.EnsureTenant(ctx, "flush")
	if err != nil {
		b.Fatal(err)
	}
	ids := make([]int64, links)
	for i := range ids {
		l, err := s.CreateLink(ctx, newLink(tn.ID, fmt.Sprintf("flush-%d", i)))
		if err != nil {
			b.Fatal(err)
		}
		ids[i] = l.ID
	}
	start := time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)
	rows := make([]linkforge.RollupRow, links)
	dims := make([]linkforge.DimRow, 0, links*int(linkforge.NumDimensions)*2)
	b.ResetTimer()
	for op := 0; b.Loop(); op++ {
		bucket := start.Add(time.Duration(op) * time.Minute)
		hour := bucket.Truncate(time.Hour)
		dims = dims[:0]
		for i, id := range ids {
			rows[i] = linkforge.RollupRow{LinkID: id, Bucket: bucket, Count: 10}
			n := int64(10 * (op%60 + 1)) // the hour's clicks so far
			for d := range linkforge.NumDimensions {
				dims = append(dims,
					linkforge.DimRow{LinkID: id, Hour: hour, Dim: d, Value: "a", Count: n - n/3},
					linkforge.DimRow{LinkID: id, Hour: hour, Dim: d, Value: "b", Count: n / 3})
			}
		}
		if err := s.UpsertClicks(ctx, "bench", rows, dims); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(links+len(dims)), "rows/op")
}

// BenchmarkFlushOneOff measures the flush of a viral burst of distinct
// links on the database side: one UpsertClicks of 1,000 links clicked once
// each and never before, so that every row is an insert, each link's one
// minute row and its dimension rows as a counter's flush of a person's
// click writes them, 8 dimension rows a link. One op
// is one flush; links are created before the timer starts, ops × 1,000.
// The burst's flush rate in links per second is 1,000 / (s/op).
func BenchmarkFlushOneOff(b *testing.B, s linkforge.Store) {
	const links = 1000
	imp, ok := s.(importer)
	if !ok {
		b.Skip("this store has no ImportLinks")
	}
	ctx := b.Context()
	tn, err := s.EnsureTenant(ctx, "oneoff")
	if err != nil {
		b.Fatal(err)
	}
	// b.N is known only inside the loop: create links a flush ahead.
	var ids []int64
	more := func(op int) {
		batch := make([]linkforge.Link, links)
		for i := range batch {
			batch[i] = newLink(tn.ID, fmt.Sprintf("oneoff-%d-%d", op, i))
		}
		if err := imp.ImportLinks(ctx, batch); err != nil {
			b.Fatal(err)
		}
		ids = ids[:0]
		for _, l := range batch {
			got, err := s.LinkBySlug(ctx, linkforge.PublicDomainID, l.Slug)
			if err != nil {
				b.Fatal(err)
			}
			ids = append(ids, got.ID)
		}
	}
	bucket := time.Date(2026, 11, 30, 12, 7, 0, 0, time.UTC)
	click := linkforge.ClickDims{linkforge.DimCountry: "DE", linkforge.DimReferrer: "news.example",
		linkforge.DimDevice: "mobile", linkforge.DimBrowser: "Safari", linkforge.DimOS: "iOS", linkforge.DimTraffic: linkforge.TrafficHuman}
	rows := make([]linkforge.RollupRow, links)
	dims := make([]linkforge.DimRow, 0, links*int(linkforge.NumDimensions))
	var cpu time.Duration
	for op := 0; b.Loop(); op++ {
		b.StopTimer()
		more(op)
		dims = dims[:0]
		for i, id := range ids {
			rows[i] = linkforge.RollupRow{LinkID: id, Bucket: bucket, Count: 1}
			for d := range linkforge.NumDimensions {
				v := click.Value(d)
				sd, a := d, click.Automated()
				dims = append(dims, linkforge.DimRow{LinkID: id, Hour: bucket.Truncate(time.Hour), Dim: sd, Automated: a, Value: v, Count: 1})
			}
		}
		b.StartTimer()
		cpu0 := processCPU(b)
		if err := s.UpsertClicks(ctx, "bench", rows, dims); err != nil {
			b.Fatal(err)
		}
		cpu += processCPU(b) - cpu0
	}
	b.ReportMetric(float64(links+len(dims)), "rows/op")
	// The CPU per flush of the process and the database server it
	// started: steadier than ns/op on a shared machine.
	b.ReportMetric(float64(cpu.Milliseconds())/float64(b.N), "cpu-ms/op")
}

// processCPU is the CPU time this process and its live descendants (a
// PostgreSQL server the test started, and its backends) have used, user
// and system, from /proc: a flush's whole work on either backend.
func processCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	total := time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return total // not Linux: this process only
	}
	type proc struct {
		parent int
		ticks  int64
	}
	procs := map[int]proc{}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		// Fields after the command's closing parenthesis: state (3),
		// ppid (4), …, utime (14), stime (15).
		f := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:]))
		if len(f) < 13 {
			continue
		}
		ppid, _ := strconv.Atoi(f[1])
		ut, _ := strconv.ParseInt(f[11], 10, 64)
		st, _ := strconv.ParseInt(f[12], 10, 64)
		procs[pid] = proc{ppid, ut + st}
	}
	self := os.Getpid()
	for pid, p := range procs {
		for q, n := p.parent, 0; q > 1 && n < 8; q, n = procs[q].parent, n+1 {
			if q == self {
				total += time.Duration(p.ticks) * 10 * time.Millisecond // USER_HZ 100
				break
			}
		}
		_ = pid
	}
	return total
}
