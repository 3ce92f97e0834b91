package clicklog_test

import (
	"context"
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	"github.com/linkforge/linkforge/internal/testdb"
	"github.com/linkforge/linkforge/linkcounter"
	"github.com/linkforge/linkforge/linkcounter/clicklog"
)

// The counter flushes the clicks a journal imported from the previous
// release's SQLite file, under the imported node id. An external test: the
// counter imports this package.
func TestCounterFlushesImportedJournal(t *testing.T) {
	dir := t.TempDir()
	clicklog.WriteLegacyJournal(t, filepath.Join(dir, "journal.db"), 2,
		`INSERT INTO meta (key, value) VALUES ('node_id', 'edge-7'), ('purged_before', '3000')`,
		`INSERT INTO clicks (link_id, bucket, n, flushed) VALUES (1, 3600, 5, 5), (1, 3660, 4, 1), (2, 7200, 3, 0)`,
		`INSERT INTO dims (link_id, hour, dim, value, n, flushed) VALUES
			(1, 3600, 0, 'NL', 6, 6), (1, 3600, 0, 'DE', 3, 0), (2, 7200, 0, 'NL', 3, 0)`)
	ctx := context.Background()
	j, err := clicklog.Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	st, ok := testdb.SQLite(t).(linkcounter.Store)
	if !ok {
		t.Fatal("the SQLite store is not a linkcounter.Store")
	}
	c, err := linkcounter.New(ctx, linkcounter.Config{Store: st, Journal: j, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if c.NodeID() != "edge-7" {
		t.Errorf("node id %q, want the imported edge-7", c.NodeID())
	}
	stopCtx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	if err := c.Stop(stopCtx); err != nil {
		t.Fatalf("stop counter: %v", err)
	}
	rows, err := st.NodeRollup(ctx, "edge-7", time.Unix(0, 0))
	if err != nil {
		t.Fatal(err)
	}
	got := map[int64]int64{}
	for _, r := range rows {
		got[r.Bucket.Unix()] += r.Count
	}
	if got[3660] != 4 || got[7200] != 3 {
		t.Errorf("rollup of edge-7 after the flush %v, want 4 at 3660 and 3 at 7200", got)
	}
}
