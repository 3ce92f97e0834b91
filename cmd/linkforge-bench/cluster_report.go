package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
)

// clusterDB is the PostgreSQL of the cluster scenario: a server of its
// own, started with pg_stat_statements loaded and its postmaster's CPU
// readable, or --database-url's (one database for every node count, its
// CPU not measured).
type clusterDB struct {
	b   *bench
	srv *pgServer // nil with --database-url
}

func newClusterDB(ctx context.Context, b *bench) (*clusterDB, error) {
	if b.cfg.databaseURL != "" {
		return &clusterDB{b: b}, nil
	}
	if !b.cfg.startPG {
		return nil, errors.New("the cluster scenario needs PostgreSQL: --database-url, or --start-postgres")
	}
	b.log.Info("cluster: starting a PostgreSQL of its own, with pg_stat_statements")
	srv, err := startPostgres(ctx, "shared_preload_libraries="+pgStatStatements, "max_connections=200")
	if err != nil {
		// Without the extension installed the server refuses the preload:
		// run without statement counts rather than not at all.
		b.log.Warn("cluster: PostgreSQL with pg_stat_statements did not start; without it", "error", firstLine(err.Error()))
		if srv, err = startPostgres(ctx, "max_connections=200"); err != nil {
			return nil, err
		}
	}
	return &clusterDB{b: b, srv: srv}, nil
}

// database returns the URL of a fresh database for the run of n nodes
// (--database-url's own database with --database-url), with
// pg_stat_statements created in it when the server has it loaded.
func (d *clusterDB) database(ctx context.Context, n int) (string, error) {
	dbURL := d.b.cfg.databaseURL
	if d.srv != nil {
		name := fmt.Sprintf("linkforge_cluster_%s_%d", strings.ToLower(d.b.runID), n)
		conn, err := pgx.Connect(ctx, d.srv.url("postgres"))
		if err != nil {
			return "", fmt.Errorf("create database: %w", err)
		}
		_, err = conn.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize())
		conn.Close(ctx)
		if err != nil {
			return "", fmt.Errorf("create database: %w", err)
		}
		dbURL = d.srv.url(name)
	}
	conn, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		return "", fmt.Errorf("connect to the database: %w", err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "CREATE EXTENSION IF NOT EXISTS "+pgStatStatements); err != nil {
		d.b.log.Info("cluster: no statement counts", "reason", firstLine(err.Error()))
	}
	return dbURL, nil
}

// cpu returns the CPU time of the scenario's server; ok is false with
// --database-url.
func (d *clusterDB) cpu() (time.Duration, bool) {
	if d.srv == nil {
		return 0, false
	}
	return postgresCPU(d.srv.cmd.Process.Pid)
}

func (d *clusterDB) close() {
	if d.srv == nil {
		return
	}
	if err := d.srv.close(); err != nil {
		d.b.log.Error("cluster: stop postgres", "error", err)
	}
}

// The bus's counters on the nodes' /metrics (internal/buswire).
const (
	metricBusNotifications = "linkforge_bus_notifications_published_total"
	metricBusBytes         = "linkforge_bus_published_bytes_total"
	metricBusEvents        = "linkforge_bus_events_published_total"
)

// summarizeCluster turns one node count's readings into its clusterRun.
func summarizeCluster(b *bench, n int, ld clusterLoaded, nodes []*clusterNode, db dbStats, stored map[string]int64) clusterRun {
	run := clusterRun{Nodes: n, OfferedRate: b.cfg.clusterRate, Seconds: ld.took.Seconds(), Errors: ld.res.errors,
		ClickP50ms: ms(ld.res.metrics.Latencies.P50), ClickP99ms: ms(ld.res.metrics.Latencies.P99),
		LinksCreated: ld.created, FlushSeconds: b.cfg.clusterFlush.Seconds(),
		RollupRows: db.rollupRows, DimsRows: db.dimsRows, Commits: db.commits, WALBytes: db.walBytes,
		Statements: -1, Upserts: -1, NotifyStatements: -1}
	if db.statements {
		run.Statements, run.Upserts, run.NotifyStatements = db.calls, db.upserts, db.sends
	}
	for _, nd := range nodes {
		run.Notifications += delta(nd.before, nd.after, metricBusNotifications)
		run.NotifyBytes += delta(nd.before, nd.after, metricBusBytes)
		run.BusEvents += delta(nd.before, nd.after, metricBusEvents)
		run.NodeRows += delta(nd.before, nd.after, metricRowsWritten)
		run.NodeCPUSeconds = append(run.NodeCPUSeconds, (nd.cpu1 - nd.cpu0).Seconds())
		run.NodeRSSBytes = append(run.NodeRSSBytes, nd.rss)
	}
	lat := ld.live.latencies()
	run.LiveProbes, run.LiveReceived = int(ld.live.sent.Load()), len(lat)
	if len(lat) > 0 {
		run.LiveP50ms, run.LiveP99ms = ms(quantile(lat, 0.50)), ms(quantile(lat, 0.99))
	}
	var differ []string
	for _, l := range ld.all {
		got, want := stored[l.slug], ld.bySlug[l.slug]
		run.Clicks += want
		run.Counted += got
		if want > 0 {
			run.ActiveLinks++
		}
		if got != want {
			differ = append(differ, fmt.Sprintf("%s: %d 302s, %d counted", l.slug, want, got))
		}
	}
	run.Exact = len(differ) == 0
	if !run.Exact {
		run.Mismatch = fmt.Sprintf("MISMATCH: 302s received %d, rollup total %d; %d links differ, e.g. %s",
			run.Clicks, run.Counted, len(differ), differ[0])
	}
	return run
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// clusterRow is the table's row of one node count: every figure per
// second of load and per click.
func clusterRow(target string, rate int, res attackResult, run clusterRun) row {
	per := func(v float64) float64 { return v / run.Seconds }
	perClick := func(v float64) float64 { return v / float64(max(run.Clicks, 1)) }
	notes := []string{
		fmt.Sprintf("rollup rows %.1f/s (%.3f/click), click_dims rows %.1f/s", per(float64(run.RollupRows)),
			perClick(float64(run.RollupRows)), per(float64(run.DimsRows))),
	}
	if run.Statements >= 0 {
		notes = append(notes, fmt.Sprintf("statements %.1f/s (flush upserts %.2f/s, pg_notify %.2f/s), commits %.1f/s",
			per(float64(run.Statements)), per(float64(run.Upserts)), per(float64(run.NotifyStatements)), per(float64(run.Commits))))
	} else {
		notes = append(notes, fmt.Sprintf("commits %.1f/s (no pg_stat_statements)", per(float64(run.Commits))))
	}
	notes = append(notes, fmt.Sprintf("WAL %.1f kB/s", per(float64(run.WALBytes))/1e3),
		fmt.Sprintf("NOTIFY %.2f/s, %.2f kB/s, %.1f events/s", per(run.Notifications), per(run.NotifyBytes)/1e3, per(run.BusEvents)))
	if run.DBCPUSeconds >= 0 {
		notes = append(notes, fmt.Sprintf("DB CPU %.0fµs/click", perClick(run.DBCPUSeconds)*1e6))
	}
	var nodeCPU float64
	var rss int64
	for i := range run.NodeCPUSeconds {
		nodeCPU += run.NodeCPUSeconds[i]
		rss = max(rss, run.NodeRSSBytes[i])
	}
	notes = append(notes, fmt.Sprintf("node CPU %.0fµs/click, RSS ≤ %s/node", perClick(nodeCPU)*1e6, formatMB(rss)))
	from := "node 1 → node " + fmt.Sprint(run.Nodes)
	if run.Nodes == 1 {
		from = "node 1 → itself"
	}
	notes = append(notes, fmt.Sprintf("live %s: p50 %.0fms p99 %.0fms (%d of %d probes)", from, run.LiveP50ms,
		run.LiveP99ms, run.LiveReceived, run.LiveProbes),
		fmt.Sprintf("%d active links, %d created", run.ActiveLinks, run.LinksCreated))
	if run.Exact {
		notes = append(notes, fmt.Sprintf("302s received %d = rollup total %d: exact, per link too", run.Clicks, run.Counted))
	} else {
		notes = append(notes, run.Mismatch)
	}
	return resultRow("cluster", target, constRateLabel(rate), res, notes...)
}
