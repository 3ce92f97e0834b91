package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	vegeta "github.com/tsenart/vegeta/v12/lib"

	"github.com/linkforge/linkforge/internal/pgtest"
)

func TestParseNodeCounts(t *testing.T) {
	got, err := parseNodeCounts(" 4,1 ,2")
	if err != nil || fmt.Sprint(got) != "[4 1 2]" {
		t.Errorf("parseNodeCounts = %v, %v; want [4 1 2] in the order given", got, err)
	}
	for _, bad := range []string{"", "0", "17", "2,2", "two", "1,,2"} {
		if _, err := parseNodeCounts(bad); err == nil {
			t.Errorf("parseNodeCounts(%q) accepted", bad)
		}
	}
}

// TestChurnZipf: the draws follow the ranks (the hottest link is drawn
// most), and a link added takes the top rank at once.
func TestChurnZipf(t *testing.T) {
	slugs := make([]string, 200)
	for i := range slugs {
		slugs[i] = fmt.Sprint("s", i)
	}
	z := newChurnZipf(slugs, 1.1, 7)
	hottest := z.ranked[0]
	counts := map[string]int{}
	for range 20000 {
		counts[z.next()]++
	}
	for s, n := range counts {
		if n > counts[hottest] {
			t.Fatalf("%s drawn %d times, more than the top-ranked %s (%d)", s, n, hottest, counts[hottest])
		}
	}
	z.add("fresh")
	clear(counts)
	for range 20000 {
		counts[z.next()]++
	}
	if counts["fresh"] <= counts[hottest] {
		t.Errorf("the new link was drawn %d times, the former hottest %d: want the new one on top", counts["fresh"], counts[hottest])
	}
}

func TestSpreadTargeter(t *testing.T) {
	z := newChurnZipf([]string{"a", "b"}, 1.1, 1)
	tg := spreadTargeter([]string{"http://n1", "http://n2", "http://n3"}, z)
	var got []string
	for range 6 {
		var vt vegeta.Target
		if err := tg(&vt); err != nil {
			t.Fatal(err)
		}
		got = append(got, strings.SplitN(strings.TrimPrefix(vt.URL, "http://"), "/", 2)[0])
		if s := slugOf(vt.URL); s != "a" && s != "b" {
			t.Errorf("slug %q of %s", s, vt.URL)
		}
	}
	if fmt.Sprint(got) != "[n1 n2 n3 n1 n2 n3]" {
		t.Errorf("nodes %v, want round robin", got)
	}
}

func TestParseProcStatFull(t *testing.T) {
	// A command name with blanks and parentheses; utime 150, stime 50,
	// cutime 300, cstime 100 ticks.
	stat := "4242 (postgres: a (b)) S 4000 4242 4242 0 -1 4194560 100 0 0 0 150 50 300 100 20 0 1 0 5 0 0"
	p, ok := parseProcStatFull(stat)
	if !ok || p.pid != 4242 || p.ppid != 4000 || p.cpu != 2*time.Second || p.children != 4*time.Second {
		t.Errorf("parseProcStatFull = %+v, %v", p, ok)
	}
	if _, ok := parseProcStatFull("garbage"); ok {
		t.Error("garbage parsed")
	}
}

func TestTreeCPU(t *testing.T) {
	stats := []procStat{
		{pid: 10, ppid: 1, cpu: time.Second, children: 5 * time.Second}, // the postmaster, with exited backends
		{pid: 11, ppid: 10, cpu: 2 * time.Second},                       // a backend
		{pid: 12, ppid: 11, cpu: time.Hour},                             // not postgres's child
		{pid: 13, ppid: 1, cpu: time.Hour},                              // another process
	}
	if got := treeCPU(10, stats); got != 8*time.Second {
		t.Errorf("treeCPU = %v, want 8s", got)
	}
	if _, ok := postgresCPU(os.Getpid()); !ok {
		t.Error("postgresCPU did not find this process")
	}
}

// TestReadDBStats reads the statistics of a real database before and
// after a write to the rollup: the rows show, and a server without
// pg_stat_statements says so rather than failing.
func TestReadDBStats(t *testing.T) {
	url := pgtest.New(t)
	ctx := t.Context()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(ctx, `CREATE TABLE click_rollup (k int PRIMARY KEY, n int)`); err != nil {
		t.Fatal(err)
	}
	before, err := readDBStats(ctx, conn)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(ctx, `INSERT INTO click_rollup SELECT g, 1 FROM generate_series(1, 5) g`); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(ctx, `UPDATE click_rollup SET n = 2 WHERE k <= 2`); err != nil {
		t.Fatal(err)
	}
	// The statistics of a session reach the server at most once a second.
	var after dbStats
	deadline := time.Now().Add(10 * time.Second)
	for {
		if after, err = readDBStats(ctx, conn); err != nil {
			t.Fatal(err)
		}
		if d := after.sub(before); d.rollupRows >= 7 || time.Now().After(deadline) {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	d := after.sub(before)
	if d.rollupRows != 7 || d.commits < 2 || d.walBytes <= 0 {
		t.Errorf("delta %+v: want 7 rollup rows (5 inserted, 2 updated), 2 commits or more, WAL written", d)
	}
	if d.statements {
		t.Error("statements counted on a server without pg_stat_statements")
	}
}

func TestTopStatements(t *testing.T) {
	before := statementCalls{"a": 10, "b": 5, "c": 1}
	after := statementCalls{"a": 12, "b": 15, "c": 1, "d": 2}
	got := topStatements(before, after, 2)
	if fmt.Sprint(got) != "[{b 10} {a 2}]" {
		t.Errorf("topStatements = %v, want b then a (ties by text), c left out", got)
	}
}

// TestClusterScenario runs the cluster scenario at its smallest: two
// nodes, a few seconds at 20 clicks/s. Every acknowledged click must be in
// the rollup, the probes must reach the dashboard on the other node, and
// the database's and the bus's figures must be there, in the row and in
// the JSON.
func TestClusterScenario(t *testing.T) {
	if _, _, ok := findPostgres(); !ok && os.Getenv("LINKFORGE_REQUIRE_POSTGRES") == "" {
		t.Skip("no PostgreSQL server binaries")
	}
	out := t.TempDir() + "/cluster.json"
	b := scenarioBench(t, "--nodes", "2", "--cluster-rate", "20", "--cluster-duration", "4s",
		"--cluster-flush-interval", "1s", "--cluster-links", "50", "--cluster-new-links", "2", "--cluster-json", out, "cluster")
	rows, err := runCluster(t.Context(), b)
	if err != nil {
		t.Fatalf("%v\n%+v", err, rows)
	}
	if len(rows) != 1 {
		t.Fatalf("%d rows, want 1", len(rows))
	}
	for _, want := range []string{"rollup rows ", "statements ", "NOTIFY ", "DB CPU ", "live node 1 → node 2: ", ": exact, per link too"} {
		if !strings.Contains(rows[0].notes, want) {
			t.Errorf("notes lack %q:\n%s", want, rows[0].notes)
		}
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var runs []clusterRun
	if err := json.Unmarshal(data, &runs); err != nil || len(runs) != 1 {
		t.Fatalf("--cluster-json: %v, %d runs\n%s", err, len(runs), data)
	}
	r := runs[0]
	if !r.Exact || r.Clicks == 0 || r.Clicks != r.Counted || r.LiveReceived == 0 || r.LinksCreated == 0 ||
		r.RollupRows <= 0 || r.Notifications <= 0 || r.Statements <= 0 || r.DBCPUSeconds < 0 || len(r.NodeRSSBytes) != 2 {
		t.Errorf("run %+v", r)
	}
	t.Log(rows[0].notes)
}
