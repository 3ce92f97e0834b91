package main

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
)

// dbStats is one reading of what the cluster scenario measures at the
// database: its own counters, read over a connection of the tool's.
type dbStats struct {
	// From pg_stat_database: transactions committed, rows inserted and
	// updated in the run's database.
	commits, inserted, updated int64
	// From pg_stat_user_tables: the rollup's and the click dimensions'
	// rows inserted plus updated (an upsert is one or the other), summed
	// over their monthly partitions (migration 00021).
	rollupRows, dimsRows int64
	// From pg_stat_statements when it is loaded (statements false
	// otherwise): every statement of the run's database but the tool's own
	// reads of the statistics, the flushes' upserts among them, and the
	// bus's pg_notify statements.
	statements            bool
	calls, upserts, sends int64
	// walBytes is pg_stat_wal's, the whole server's (the scenario's
	// server serves the run alone).
	walBytes int64
}

// pgStatStatements is the extension the scenario loads into its own server
// (shared_preload_libraries) to count statements.
const pgStatStatements = "pg_stat_statements"

// readDBStats reads dbStats over conn, connected to the run's database. A
// server without pg_stat_statements leaves statements false.
func readDBStats(ctx context.Context, conn *pgx.Conn) (dbStats, error) {
	var s dbStats
	// pg_stat_* show a snapshot per transaction; each read here is its
	// own, so they are current.
	if _, err := conn.Exec(ctx, "SELECT pg_stat_clear_snapshot()"); err != nil {
		return s, fmt.Errorf("clear statistics snapshot: %w", err)
	}
	err := conn.QueryRow(ctx, `SELECT xact_commit, tup_inserted, tup_updated FROM pg_stat_database
		WHERE datname = current_database()`).Scan(&s.commits, &s.inserted, &s.updated)
	if err != nil {
		return s, fmt.Errorf("read pg_stat_database: %w", err)
	}
	err = conn.QueryRow(ctx, `SELECT
		COALESCE(SUM(n_tup_ins + n_tup_upd) FILTER (WHERE relname ~ '^click_rollup(_([0-9]{6}|default))?$'), 0)::bigint,
		COALESCE(SUM(n_tup_ins + n_tup_upd) FILTER (WHERE relname ~ '^click_dims(_([0-9]{6}|default))?$'), 0)::bigint
		FROM pg_stat_user_tables`).Scan(&s.rollupRows, &s.dimsRows)
	if err != nil {
		return s, fmt.Errorf("read pg_stat_user_tables: %w", err)
	}
	if err := conn.QueryRow(ctx, `SELECT COALESCE(wal_bytes, 0)::bigint FROM pg_stat_wal`).Scan(&s.walBytes); err != nil {
		return s, fmt.Errorf("read pg_stat_wal: %w", err)
	}
	var loaded bool
	if err := conn.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_extension WHERE extname = $1)`,
		pgStatStatements).Scan(&loaded); err != nil || !loaded {
		return s, nil //nolint:nilerr // no extension: statements stays false, the rest is measured
	}
	err = conn.QueryRow(ctx, `SELECT COALESCE(SUM(calls), 0)::bigint,
		COALESCE(SUM(calls) FILTER (WHERE query ILIKE '%INSERT INTO click_rollup%'), 0)::bigint,
		COALESCE(SUM(calls) FILTER (WHERE query ILIKE '%pg_notify%'), 0)::bigint
		FROM pg_stat_statements
		WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())
		  AND query NOT ILIKE '%pg_stat%'`).Scan(&s.calls, &s.upserts, &s.sends)
	if err != nil {
		return s, fmt.Errorf("read pg_stat_statements: %w", err)
	}
	s.statements = true
	return s, nil
}

// sub returns the increase from before to s.
func (s dbStats) sub(before dbStats) dbStats {
	return dbStats{
		commits: s.commits - before.commits, inserted: s.inserted - before.inserted, updated: s.updated - before.updated,
		rollupRows: s.rollupRows - before.rollupRows, dimsRows: s.dimsRows - before.dimsRows,
		statements: s.statements && before.statements,
		calls:      s.calls - before.calls, upserts: s.upserts - before.upserts, sends: s.sends - before.sends,
		walBytes: s.walBytes - before.walBytes,
	}
}

// procStat is what the scenario reads of a process in /proc/PID/stat.
type procStat struct {
	pid, ppid int
	// cpu is its own user + system time; children the user + system time
	// of its children that exited and that it waited for.
	cpu, children time.Duration
}

// parseProcStatFull reads the process id (field 1), the parent's (field
// 4), utime and stime (14, 15) and cutime and cstime (16, 17) from the
// text of /proc/PID/stat.
func parseProcStatFull(stat string) (procStat, bool) {
	open, closing := strings.IndexByte(stat, '('), strings.LastIndexByte(stat, ')')
	if open < 0 || closing < open {
		return procStat{}, false
	}
	pid, err := strconv.Atoi(strings.TrimSpace(stat[:open]))
	if err != nil {
		return procStat{}, false
	}
	f := strings.Fields(stat[closing+1:])
	// f[0] is field 3 (state).
	if len(f) < 15 {
		return procStat{}, false
	}
	var n [5]int64
	for i, field := range []int{1, 11, 12, 13, 14} {
		if n[i], err = strconv.ParseInt(f[field], 10, 64); err != nil {
			return procStat{}, false
		}
	}
	tick := func(t int64) time.Duration { return time.Duration(t) * time.Second / userHZ }
	return procStat{pid: pid, ppid: int(n[0]), cpu: tick(n[1] + n[2]), children: tick(n[3] + n[4])}, true
}

// treeCPU returns the CPU time of the process root and its children: its
// own, that of its children still running (PostgreSQL's backends and
// background processes) and that of those that exited (which their parent
// waited for). PostgreSQL's processes are all children of the postmaster.
func treeCPU(root int, stats []procStat) time.Duration {
	var total time.Duration
	for _, p := range stats {
		switch {
		case p.pid == root:
			total += p.cpu + p.children
		case p.ppid == root:
			total += p.cpu
		}
	}
	return total
}

// postgresCPU reads every process of /proc and returns the CPU time of the
// PostgreSQL whose postmaster is pid; ok is false when pid is gone.
func postgresCPU(pid int) (time.Duration, bool) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return 0, false
	}
	var stats []procStat
	found := false
	for _, e := range entries {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue // exited meanwhile: its time is its parent's now
		}
		if p, ok := parseProcStatFull(string(b)); ok {
			stats = append(stats, p)
			found = found || p.pid == pid
		}
	}
	return treeCPU(pid, stats), found
}

// statementCalls is pg_stat_statements' calls by statement text (the
// normalized query, cut to topQueryLen), of the run's database.
type statementCalls map[string]int64

// topQueryLen bounds a statement's text in the report.
const topQueryLen = 90

// readStatementCalls reads statementCalls over conn; nil without
// pg_stat_statements.
func readStatementCalls(ctx context.Context, conn *pgx.Conn) statementCalls {
	rows, err := conn.Query(ctx, `SELECT query, calls FROM pg_stat_statements
		WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())
		  AND query NOT ILIKE '%pg_stat%'`)
	if err != nil {
		return nil
	}
	defer rows.Close()
	out := statementCalls{}
	for rows.Next() {
		var q string
		var n int64
		if rows.Scan(&q, &n) != nil {
			return nil
		}
		q = strings.Join(strings.Fields(q), " ")
		if len(q) > topQueryLen {
			q = q[:topQueryLen]
		}
		out[q] += n
	}
	if rows.Err() != nil {
		return nil
	}
	return out
}

// topStatement is one statement's calls over a run.
type topStatement struct {
	Query string `json:"query"`
	Calls int64  `json:"calls"`
}

// topStatements returns the n statements called most between two
// readings.
func topStatements(before, after statementCalls, n int) []topStatement {
	var out []topStatement
	for q, calls := range after {
		if d := calls - before[q]; d > 0 {
			out = append(out, topStatement{Query: q, Calls: d})
		}
	}
	slices.SortFunc(out, func(a, b topStatement) int {
		return cmp.Or(cmp.Compare(b.Calls, a.Calls), cmp.Compare(a.Query, b.Query))
	})
	return out[:min(n, len(out))]
}
