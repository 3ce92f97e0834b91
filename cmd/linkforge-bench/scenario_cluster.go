package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gorilla/websocket"
	"github.com/jackc/pgx/v5"
	vegeta "github.com/tsenart/vegeta/v12/lib"
)

// probeEvery is how often the cluster scenario sends a live-feed probe: one
// click on node 1 of a link nothing else clicks, timed to the dashboard on
// the last node.
const probeEvery = 500 * time.Millisecond

// probeWait is how long a probe sent may take to reach the dashboard
// before the scenario counts it lost, once the load is over.
const probeWait = 5 * time.Second

// clusterRun is the measurement of one node count, as the JSON of
// --cluster-json has it. Rates are per second of load; the database's
// figures run from just before the load to after the nodes' graceful stop
// (their last flush included).
type clusterRun struct {
	Nodes        int     `json:"nodes"`
	OfferedRate  int     `json:"offered_clicks_per_s"`
	Seconds      float64 `json:"load_seconds"`
	Clicks       int64   `json:"clicks"` // 302s received, load and probes
	Errors       uint64  `json:"errors"`
	ClickP50ms   float64 `json:"click_p50_ms"`
	ClickP99ms   float64 `json:"click_p99_ms"`
	ActiveLinks  int     `json:"active_links"` // distinct links clicked
	LinksCreated int     `json:"links_created"`
	FlushSeconds float64 `json:"flush_interval_s"`

	RollupRows int64 `json:"rollup_rows"`
	DimsRows   int64 `json:"click_dims_rows"`
	Commits    int64 `json:"commits"`
	WALBytes   int64 `json:"wal_bytes"`
	// Statements, Upserts (the flushes') and NotifyStatements (the bus's
	// sends) are -1 without pg_stat_statements.
	Statements       int64 `json:"statements"`
	Upserts          int64 `json:"rollup_upserts"`
	NotifyStatements int64 `json:"notify_statements"`

	// From the nodes' /metrics, summed, up to just before their stop.
	Notifications float64 `json:"notifications"`
	NotifyBytes   float64 `json:"notify_bytes"`
	BusEvents     float64 `json:"bus_events"`
	NodeRows      float64 `json:"node_rollup_rows"`

	DBCPUSeconds   float64   `json:"db_cpu_s"` // -1: not measured (--database-url)
	NodeCPUSeconds []float64 `json:"node_cpu_s"`
	NodeRSSBytes   []int64   `json:"node_rss_bytes"`

	LiveProbes   int     `json:"live_probes"`
	LiveReceived int     `json:"live_received"`
	LiveP50ms    float64 `json:"live_p50_ms"`
	LiveP99ms    float64 `json:"live_p99_ms"`

	// TopStatements are the statements the run's database ran most.
	TopStatements []topStatement `json:"top_statements,omitempty"`

	Counted  int64  `json:"rollup_total"`
	Exact    bool   `json:"exact"`
	Mismatch string `json:"mismatch,omitempty"`
}

// clusterNode is one linkforge process of the cluster.
type clusterNode struct {
	*instance
	before, after metrics
	cpu0, cpu1    time.Duration
	rss           int64
}

// runCluster runs the cluster simulation once per node count of --nodes,
// each on a fresh database of one PostgreSQL.
func runCluster(ctx context.Context, b *bench) ([]row, error) {
	if b.cfg.target != "" {
		return []row{{scenario: "cluster", target: "linkforge (--target)",
			notes: "skipped: starts its own nodes and database; run without --target"}}, nil
	}
	counts, err := parseNodeCounts(b.cfg.clusterNodes)
	if err != nil {
		return nil, err
	}
	db, err := newClusterDB(ctx, b)
	if err != nil {
		return nil, err
	}
	defer db.close()
	var (
		rows []row
		runs []clusterRun
		errs []error
	)
	for _, n := range counts {
		b.log.Info("cluster: node count", "nodes", n)
		run, r, err := clusterOnce(ctx, b, db, n)
		rows = append(rows, r)
		if run.Nodes != 0 { // measured, exact or not
			runs = append(runs, run)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("%d nodes: %w", n, err))
			if ctx.Err() != nil {
				break
			}
		}
	}
	if b.cfg.clusterJSON != "" {
		data, err := json.MarshalIndent(runs, "", "  ")
		if err == nil {
			err = os.WriteFile(b.cfg.clusterJSON, append(data, '\n'), 0o600)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("--cluster-json: %w", err))
		}
	}
	return rows, shown(errors.Join(errs...))
}

// clusterOnce runs n nodes on a fresh database and measures them.
func clusterOnce(ctx context.Context, b *bench, db *clusterDB, n int) (clusterRun, row, error) {
	target := fmt.Sprintf("%d node(s), postgres bus, flush %s", n, b.cfg.clusterFlush)
	failed := func(err error) (clusterRun, row, error) {
		return clusterRun{}, row{scenario: "cluster", target: target, notes: "FAILED: " + firstLine(err.Error())}, err
	}
	dbURL, err := db.database(ctx, n)
	if err != nil {
		return failed(err)
	}
	links := b.newLinks(b.cfg.clusterLinks)
	probes := b.newLinks(int(b.cfg.clusterDuration/probeEvery) + 1)
	nodes, token, err := startClusterNodes(ctx, b, dbURL, n, slices.Concat(links, probes))
	defer stopClusterNodes(nodes)
	if err != nil {
		return failed(err)
	}
	live, err := newLiveProbe(ctx, nodes[n-1].base, token, probes)
	if err != nil {
		return failed(err)
	}
	defer live.close()
	if err := waitBusHealthy(ctx, b, nodes); err != nil {
		return failed(err)
	}
	conn, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		return failed(fmt.Errorf("connect to the database: %w", err))
	}
	defer conn.Close(context.WithoutCancel(ctx))
	dbBefore, err := readDBStats(ctx, conn)
	if err != nil {
		return failed(err)
	}
	callsBefore := readStatementCalls(ctx, conn)
	cpuBefore, cpuOK := db.cpu()
	ld, err := clusterLoad(ctx, b, nodes, links, live)
	if err != nil {
		return failed(err)
	}
	if err := finishNodes(ctx, b, nodes); err != nil {
		return failed(err)
	}
	dbAfter, err := readDBStats(ctx, conn)
	if err != nil {
		return failed(err)
	}
	cpuAfter, cpuOK2 := db.cpu()
	top := topStatements(callsBefore, readStatementCalls(ctx, conn), 12)
	stored, err := nodes[0].storedClicks(ctx, ld.all)
	if err != nil {
		return failed(err)
	}
	run := summarizeCluster(b, n, ld, nodes, dbAfter.sub(dbBefore), stored)
	run.TopStatements = top
	run.DBCPUSeconds = -1
	if cpuOK && cpuOK2 {
		run.DBCPUSeconds = (cpuAfter - cpuBefore).Seconds()
	}
	r := clusterRow(target, b.cfg.clusterRate, ld.res, run)
	if !run.Exact {
		return run, r, errors.New(run.Mismatch)
	}
	return run, r, nil
}

// startClusterNodes loads links into the database, makes a token and
// starts n nodes on it, node-1 to node-n, each with a data dir (a journal)
// of its own. The nodes started are returned even on error, to be stopped.
func startClusterNodes(ctx context.Context, b *bench, dbURL string, n int, links []benchLink) ([]*clusterNode, string, error) {
	first := &instance{b: b, backend: "postgres", dbURL: dbURL}
	var err error
	if first.dataDir, err = os.MkdirTemp(b.tmp, "node-"); err != nil {
		return nil, "", fmt.Errorf("create data dir: %w", err)
	}
	if err := first.importLinks(ctx, links); err != nil {
		return nil, "", err
	}
	token, err := createToken(ctx, b.bin, first.dataDir, dbURL, benchTenant)
	if err != nil {
		return nil, "", err
	}
	var nodes []*clusterNode
	for i := range n {
		in := first
		if i > 0 {
			in = &instance{b: b, backend: "postgres", dbURL: dbURL}
			if in.dataDir, err = os.MkdirTemp(b.tmp, "node-"); err != nil {
				return nodes, "", fmt.Errorf("create data dir: %w", err)
			}
		}
		in.token = token
		in.proc, err = startLinkForge(ctx, b.bin, in.dataDir, dbURL, b.cfg.clusterFlush, b.cfg.journalSync,
			"--node-id", fmt.Sprintf("node-%d", i+1))
		if err != nil {
			return nodes, "", err
		}
		in.base = "http://" + in.proc.addr
		nodes = append(nodes, &clusterNode{instance: in})
	}
	return nodes, token, nil
}

// stopClusterNodes stops whatever still runs, for the clean-up; the
// instances log their own failures.
func stopClusterNodes(nodes []*clusterNode) {
	for _, nd := range nodes {
		nd.close()
	}
}

// waitBusHealthy waits until every node's bus listens, so that the load
// starts on a joined cluster.
func waitBusHealthy(ctx context.Context, b *bench, nodes []*clusterNode) error {
	deadline := time.Now().Add(30 * time.Second)
	for _, nd := range nodes {
		for {
			m, err := scrapeMetrics(ctx, b.client, nd.base)
			if err != nil {
				return err
			}
			if v, _ := m.value("linkforge_bus_healthy"); v == 1 {
				break
			}
			if time.Now().After(deadline) {
				return fmt.Errorf("the bus of %s is not healthy after 30s", nd.base)
			}
			if err := sleepCtx(ctx, 100*time.Millisecond); err != nil {
				return err
			}
		}
	}
	return nil
}

// clusterLoaded is what the load phase leaves: the attack, the 302s by
// slug, every link that could have been clicked, and the links created.
type clusterLoaded struct {
	res     attackResult
	took    time.Duration
	bySlug  map[string]int64
	all     []benchLink
	created int
	live    *liveProbe
}

// clusterLoad runs the Zipf load over every node, with the churn of new
// links and the live probes alongside, and scrapes each node before and
// after.
func clusterLoad(ctx context.Context, b *bench, nodes []*clusterNode, links []benchLink, live *liveProbe) (clusterLoaded, error) {
	bases := make([]string, len(nodes))
	for i, nd := range nodes {
		bases[i] = nd.base
		var err error
		if nd.before, err = scrapeMetrics(ctx, b.client, nd.base); err != nil {
			return clusterLoaded{}, err
		}
		nd.cpu0, _ = processCPU(nd.pid())
	}
	slugs := make([]string, len(links))
	for i, l := range links {
		slugs[i] = l.slug
	}
	z := newChurnZipf(slugs, b.cfg.zipfS, b.cfg.seed)
	ld := clusterLoaded{bySlug: make(map[string]int64), live: live}
	sideCtx, stopSide := context.WithCancel(ctx)
	var side sync.WaitGroup
	var created []benchLink
	side.Go(func() { created = churnLinks(sideCtx, b, nodes, z) })
	side.Go(func() { live.run(sideCtx, b, nodes[0].base) })

	b.log.Info("cluster: load", "nodes", len(nodes), "rate", b.cfg.clusterRate, "duration", b.cfg.clusterDuration)
	start := time.Now()
	ld.res = runAttack(ctx, attackSpec{
		name: "cluster", targeter: spreadTargeter(bases, z),
		rate: vegeta.Rate{Freq: b.cfg.clusterRate, Per: time.Second}, workers: 8,
		duration: b.cfg.clusterDuration, maxRequests: b.cfg.maxRequests,
		onResult: func(r *vegeta.Result) {
			if r.Code == http.StatusFound && r.Error == "" {
				ld.bySlug[slugOf(r.URL)]++
			}
		},
	})
	ld.took = time.Since(start)
	stopSide()
	side.Wait()
	live.wait(ctx)
	ld.created = len(created)
	ld.all = slices.Concat(links, created, live.links)
	for slug, n := range live.found() {
		ld.bySlug[slug] += n
	}
	for _, nd := range nodes {
		var err error
		if nd.after, err = scrapeMetrics(ctx, b.client, nd.base); err != nil {
			return ld, err
		}
		nd.cpu1, _ = processCPU(nd.pid())
		if m, err := readProcMemory(nd.pid()); err == nil {
			nd.rss = m.rss
		}
	}
	return ld, nil
}

// churnLinks creates a link every 1/--cluster-new-links seconds through
// the nodes' API in turn, and makes each the hottest, until ctx ends. It
// returns the links created.
func churnLinks(ctx context.Context, b *bench, nodes []*clusterNode, z *churnZipf) []benchLink {
	if b.cfg.clusterNewLinks <= 0 {
		return nil
	}
	tick := time.NewTicker(time.Duration(float64(time.Second) / b.cfg.clusterNewLinks))
	defer tick.Stop()
	fresh := b.newLinks(int(b.cfg.clusterDuration.Seconds()*b.cfg.clusterNewLinks) + 1)
	var created []benchLink
	for i, l := range fresh {
		select {
		case <-ctx.Done():
			return created
		case <-tick.C:
		}
		nd := nodes[i%len(nodes)]
		// Not cut by ctx, as the probes' clicks.
		if err := nd.api(context.WithoutCancel(ctx), http.MethodPost, "/api/v1/links", map[string]any{"slug": l.slug, "url": l.url}, nil); err != nil {
			b.log.Warn("cluster: create link", "node", nd.base, "error", err)
			continue
		}
		created = append(created, l)
		z.add(l.slug)
	}
	return created
}

// finishNodes stops every node gracefully, at once: each flushes what it
// counted. The caller reads the database afterwards.
func finishNodes(ctx context.Context, b *bench, nodes []*clusterNode) error {
	errs := make([]error, len(nodes))
	var wg sync.WaitGroup
	for i, nd := range nodes {
		wg.Go(func() {
			took, err := nd.stop()
			b.log.Info("cluster: node stopped", "node", i+1, "took", took.Round(time.Millisecond))
			errs[i] = err
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("graceful stop: %w", err)
	}
	return ctx.Err()
}

// liveProbe times clicks on one node to a dashboard on another: a
// WebSocket of the tenant's live feed, on the last node.
type liveProbe struct {
	conn  *websocket.Conn
	f     *fanout
	links []benchLink
	sent  atomic.Int64 // probes sent
	done  chan struct{}
	mu    sync.Mutex
	ok    map[string]int64 // 302s of the probes
}

func newLiveProbe(ctx context.Context, base, token string, links []benchLink) (*liveProbe, error) {
	conn, err := dialViewer(ctx, "ws"+strings.TrimPrefix(base, "http")+livePath, token)
	if err != nil {
		return nil, fmt.Errorf("connect the dashboard: %w", err)
	}
	p := &liveProbe{conn: conn, f: newFanout(links), links: links, done: make(chan struct{}), ok: map[string]int64{}}
	go func() {
		defer close(p.done)
		p.f.viewer(conn)
	}()
	return p, nil
}

// run clicks one probe link on base every probeEvery until ctx ends or
// the links run out.
func (p *liveProbe) run(ctx context.Context, b *bench, base string) {
	tick := time.NewTicker(probeEvery)
	defer tick.Stop()
	for i, l := range p.links {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		p.f.sent[i].Store(time.Now().UnixNano())
		p.sent.Add(1)
		// Not cut by ctx: a click the server counted must reach the
		// tally, or the exact-count check would miss it.
		if err := click(context.WithoutCancel(ctx), b.client, base+"/"+l.slug); err != nil {
			b.log.Warn("cluster: probe click", "error", err)
			continue
		}
		p.mu.Lock()
		p.ok[l.slug]++
		p.mu.Unlock()
	}
}

// wait gives the probes sent up to probeWait to arrive.
func (p *liveProbe) wait(ctx context.Context) {
	deadline := time.After(probeWait)
	for int(p.received()) < int(p.sent.Load()) {
		select {
		case <-p.f.wake:
		case <-deadline:
			return
		case <-ctx.Done():
			return
		}
	}
}

func (p *liveProbe) received() int {
	p.f.mu.Lock()
	defer p.f.mu.Unlock()
	return len(p.f.lat)
}

// found returns the probes' 302s by slug.
func (p *liveProbe) found() map[string]int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return maps.Clone(p.ok)
}

// latencies returns the probes' click-to-dashboard times, sorted.
func (p *liveProbe) latencies() []time.Duration {
	p.f.mu.Lock()
	lat := slices.Clone(p.f.lat)
	p.f.mu.Unlock()
	slices.Sort(lat)
	return lat
}

func (p *liveProbe) close() {
	_ = p.conn.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(websocket.CloseNormalClosure, ""), time.Now().Add(time.Second))
	p.conn.Close()
	<-p.done
}
