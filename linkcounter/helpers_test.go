package linkcounter

import (
	"context"
	"log/slog"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/internal/pgtest"
	"github.com/linkforge/linkforge/internal/testdb"
	"github.com/linkforge/linkforge/linkcounter/clicklog"
	"github.com/linkforge/linkforge/linkcounter/clicklog/clicklogtest"
	"github.com/linkforge/linkforge/linkcounter/internal/faultfile"
	"github.com/linkforge/linkforge/store/postgres"
)

func TestMain(m *testing.M) { pgtest.MainNoLeaks(m) }

// mustJournal opens the journal of the data dir dir, closed when t ends.
func mustJournal(t testing.TB, dir string, opts ...clicklog.Option) *clicklog.Journal {
	t.Helper()
	j, err := clicklog.Open(context.Background(), dir, opts...)
	if err != nil {
		t.Fatalf("open journal: %v", err)
	}
	t.Cleanup(func() { j.Close() })
	return j
}

// mustStart returns a started counter on st and j; tune, if not nil, adjusts
// it before Start. It is stopped when t ends (a no-op if the test did).
func mustStart(t testing.TB, cfg Config, tune func(*Counter)) *Counter {
	t.Helper()
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	c, err := New(context.Background(), cfg)
	if err != nil {
		t.Fatalf("new counter: %v", err)
	}
	if tune != nil {
		tune(c)
	}
	if err := c.Start(context.Background()); err != nil {
		t.Fatalf("start counter: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		c.Stop(ctx)
	})
	return c
}

// mustStop stops c and fails t if its final flush failed.
func mustStop(t testing.TB, c *Counter) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := c.Stop(ctx); err != nil {
		t.Fatalf("stop counter: %v", err)
	}
}

// testStore is the store the counter needs plus what the tests read with.
type testStore interface {
	Store
	linkforge.Store
}

func asTestStore(t testing.TB, s linkforge.Store) testStore {
	t.Helper()
	ts, ok := s.(testStore)
	if !ok {
		t.Fatalf("%T has no ClickTotal", s)
	}
	return ts
}

// mustLink creates a link (maxClicks < 0: unlimited) of a fresh tenant.
func mustLink(t testing.TB, s linkforge.Store, maxClicks int64) linkforge.Link {
	t.Helper()
	ctx := context.Background()
	ten, err := s.EnsureTenant(ctx, "tenant-"+linkforge.NewSlug())
	if err != nil {
		t.Fatalf("ensure tenant: %v", err)
	}
	l := linkforge.Link{TenantID: ten.ID, Slug: linkforge.NewSlug(), URL: "https://example.com/target"}
	if maxClicks >= 0 {
		l.MaxClicks = &maxClicks
	}
	l, err = s.CreateLink(ctx, l)
	if err != nil {
		t.Fatalf("create link: %v", err)
	}
	return l
}

// mustRecord records one click and fails t on error.
func mustRecord(t testing.TB, c *Counter, l *linkforge.Link, at time.Time) {
	t.Helper()
	if err := c.Record(context.Background(), l, at, nil); err != nil {
		t.Fatalf("record click of link %d: %v", l.ID, err)
	}
}

// mustStats returns the link's rollup, summed over nodes, by minute.
func mustStats(t testing.TB, s linkforge.Store, l linkforge.Link) linkforge.Stats {
	t.Helper()
	st, err := s.Stats(context.Background(), linkforge.StatsQuery{
		TenantID: l.TenantID, LinkID: l.ID, Interval: linkforge.Minute,
		From: time.Unix(0, 0), To: time.Date(3000, 1, 1, 0, 0, 0, 0, time.UTC),
	})
	if err != nil {
		t.Fatalf("stats of link %d: %v", l.ID, err)
	}
	return st
}

func mustClickTotal(t testing.TB, s Store, linkID int64) int64 {
	t.Helper()
	n, err := s.ClickTotal(context.Background(), linkID)
	if err != nil {
		t.Fatalf("click total of link %d: %v", linkID, err)
	}
	return n
}

// upsertCall is one UpsertClicks seen by recordingStore.
type upsertCall struct {
	at   time.Time
	node string
	rows []linkforge.RollupRow
	dims []linkforge.DimRow
	err  error
}

// recordingStore wraps a real store, records every UpsertClicks and can make
// it fail, before or after the real write.
type recordingStore struct {
	Store
	mu    sync.Mutex
	calls []upsertCall
	// fail, if set, decides the outcome of call i (0-based): before is
	// returned without writing, after is returned after the real write.
	fail func(i int) (before, after error)
}

func (r *recordingStore) UpsertClicks(ctx context.Context, nodeID string, rows []linkforge.RollupRow, dims []linkforge.DimRow) error {
	r.mu.Lock()
	i := len(r.calls)
	fail := r.fail
	r.mu.Unlock()
	var before, after error
	if fail != nil {
		before, after = fail(i)
	}
	err := before
	if err == nil {
		err = r.Store.UpsertClicks(ctx, nodeID, rows, dims)
		if err == nil {
			err = after
		}
	}
	r.mu.Lock()
	r.calls = append(r.calls, upsertCall{at: time.Now(), node: nodeID, rows: append([]linkforge.RollupRow(nil), rows...),
		dims: append([]linkforge.DimRow(nil), dims...), err: err})
	r.mu.Unlock()
	return err
}

func (r *recordingStore) snapshot() []upsertCall {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]upsertCall(nil), r.calls...)
}

// journalRows returns the journal's rows of a link, by bucket.
func journalRows(t testing.TB, j *clicklog.Journal, linkID int64) []clicklog.Row {
	t.Helper()
	return j.Rows(linkID)
}

// backend opens a fresh store of one kind. Tests that run in a
// testing/synctest bubble call open inside it, so that the store's
// connections, timers and goroutines belong to the bubble and are closed in
// it; what must outlive the bubble (the PostgreSQL server, the database) is
// prepared outside.
type backend struct {
	name string
	open func(t *testing.T) testStore
}

// eachBackend runs fn as subtests "sqlite" and "postgres".
func eachBackend(t *testing.T, fn func(t *testing.T, b backend)) {
	t.Helper()
	t.Run("sqlite", func(t *testing.T) {
		fn(t, backend{name: "sqlite", open: func(t *testing.T) testStore {
			return asTestStore(t, testdb.SQLite(t))
		}})
	})
	t.Run("postgres", func(t *testing.T) {
		url := migratedPostgres(t)
		fn(t, backend{name: "postgres", open: func(t *testing.T) testStore {
			return mustOpenPostgres(t, url)
		}})
	})
}

// migratedPostgres returns the URL of a fresh, migrated PostgreSQL database.
func migratedPostgres(t *testing.T) string {
	t.Helper()
	url := pgtest.New(t)
	mustOpenPostgres(t, url) // migrates; closed when t ends
	return url
}

// mustOpenPostgres opens (and migrates) the store at url, closed when t ends.
func mustOpenPostgres(t *testing.T, url string) testStore {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	db, err := postgres.Open(ctx, url)
	if err != nil {
		t.Fatalf("open postgres: %v", err)
	}
	t.Cleanup(func() { db.Close() })
	if err := db.Migrate(ctx); err != nil {
		t.Fatalf("migrate postgres: %v", err)
	}
	return db
}

// faultFiles is the fault layer under the journal's segment files
// (faultfile.Files) as a journal option.
type faultFiles struct{ faultfile.Files }

func (ff *faultFiles) option() clicklog.Option {
	return clicklogtest.WithFileLayer(func(f *os.File) clicklog.File { return ff.Wrap(f) })
}
