package postgres_test

import (
	"context"
	"fmt"
	neturl "net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/internal/pgtest"
	"github.com/linkforge/linkforge/internal/testdb"
	"github.com/linkforge/linkforge/migrations"
	"github.com/linkforge/linkforge/store/postgres"
	"github.com/linkforge/linkforge/store/storetest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// mustOpen returns a migrated store on a fresh database.
func mustOpen(t *testing.T) *postgres.DB {
	t.Helper()
	return mustOpenURL(t, pgtest.New(t))
}

func mustOpenURL(t *testing.T, url string) *postgres.DB {
	t.Helper()
	db, err := postgres.Open(t.Context(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if err := db.Migrate(t.Context()); err != nil {
		t.Fatal(err)
	}
	return db
}

// poisonable is a store whose database can be made to refuse click_dims
// rows (storetest.DimsPoisoner) and read with SQL (storetest.SQLReader).
type poisonable struct{ *postgres.DB }

func (p poisonable) SQLDialect() string { return "postgres" }

func (p poisonable) QueryKeyed(t *testing.T, query string) map[string]storetest.AggRow {
	t.Helper()
	rows, err := p.Pool().Query(t.Context(), query)
	if err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	out := map[string]storetest.AggRow{}
	var (
		k string
		v storetest.AggRow
	)
	if _, err := pgx.ForEachRow(rows, []any{&k, &v.At, &v.N}, func() error {
		out[k] = v
		return nil
	}); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	return out
}

func (p poisonable) PoisonDims(t *testing.T, value string) {
	t.Helper()
	if _, err := p.Pool().Exec(t.Context(), `CREATE FUNCTION poison_dims() RETURNS trigger LANGUAGE plpgsql AS $$
		BEGIN
			IF NEW.value = '`+value+`' THEN RAISE EXCEPTION 'poisoned click_dims row'; END IF;
			RETURN NEW;
		END $$`); err != nil {
		t.Fatalf("create function: %v", err)
	}
	if _, err := p.Pool().Exec(t.Context(), `CREATE TRIGGER poison_dims BEFORE INSERT OR UPDATE ON click_dims
		FOR EACH ROW EXECUTE FUNCTION poison_dims()`); err != nil {
		t.Fatalf("create trigger: %v", err)
	}
}

func mustQueryInt(t *testing.T, db *postgres.DB, sql string, args ...any) int64 {
	t.Helper()
	var n int64
	if err := db.Pool().QueryRow(t.Context(), sql, args...).Scan(&n); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	return n
}

func mustTenant(t *testing.T, s linkforge.Store, name string) linkforge.Tenant {
	t.Helper()
	tn, err := s.EnsureTenant(t.Context(), name)
	if err != nil {
		t.Fatal(err)
	}
	return tn
}

// TestStore runs the conformance suite on databases copied from one
// migrated once (testdb.PostgresDB); TestConcurrentMigrate and the
// migration tests migrate their own.
func TestStore(t *testing.T) {
	t.Parallel()
	storetest.Run(t, func(t *testing.T) linkforge.Store { return poisonable{testdb.PostgresDB(t)} })
}

// TestConcurrentMigrate starts four "nodes" on one fresh database at once:
// all must succeed, and each migration must have been applied exactly once.
func TestConcurrentMigrate(t *testing.T) {
	t.Parallel()
	// The latest version, from a database migrated alone.
	control := mustOpen(t)
	latest := mustVersion(t, control)
	if latest < 1 {
		t.Fatalf("version of a migrated database = %d", latest)
	}

	url := pgtest.New(t)
	const nodes = 4
	errs := make([]error, nodes)
	var wg sync.WaitGroup
	for i := range nodes {
		wg.Go(func() {
			db, err := postgres.Open(t.Context(), url)
			if err != nil {
				errs[i] = err
				return
			}
			defer db.Close()
			errs[i] = db.Migrate(t.Context())
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("node %d: %v", i, err)
		}
	}

	db := mustOpenURL(t, url) // Migrate again: nothing left to do
	if v := mustVersion(t, db); v != latest {
		t.Errorf("version after concurrent migrations = %d, want %d", v, latest)
	}
	if dup := mustQueryInt(t, db, `SELECT count(*) FROM (SELECT version_id FROM goose_db_version
		WHERE version_id > 0 GROUP BY version_id HAVING count(*) > 1) d`); dup != 0 {
		t.Errorf("%d migrations were applied more than once", dup)
	}
	// As many as the database migrated alone has: version numbers may
	// have gaps while a branch lacks another's migrations.
	recorded := `SELECT count(DISTINCT version_id) FROM goose_db_version WHERE version_id > 0`
	if n, want := mustQueryInt(t, db, recorded), mustQueryInt(t, control, recorded); n != want {
		t.Errorf("%d migrations recorded, want %d", n, want)
	}
}

func mustVersion(t *testing.T, db *postgres.DB) int64 {
	t.Helper()
	sqlDB := stdlib.OpenDBFromPool(db.Pool())
	defer sqlDB.Close()
	v, err := migrations.Version(t.Context(), sqlDB, migrations.Postgres)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func TestOpenFailsOnUnreachableDatabase(t *testing.T) {
	t.Parallel()
	// A port nothing listens on: Open must fail at once, not on first use.
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	db, err := postgres.Open(ctx, "postgres://nobody:secret@127.0.0.1:1/none?sslmode=disable&connect_timeout=5")
	if err == nil {
		db.Close()
		t.Fatal("Open of an unreachable database succeeded")
	}
	if strings.Contains(err.Error(), "secret") {
		t.Errorf("error shows the password: %v", err)
	}
}

func TestImportLinks(t *testing.T) {
	t.Parallel()
	db := mustOpen(t)
	tn := mustTenant(t, db, "importer")
	const n = 10000
	expires := time.Date(2027, 1, 2, 3, 4, 5, 6789, time.FixedZone("X", 3600))
	links := make([]linkforge.Link, n)
	for i := range links {
		links[i] = linkforge.Link{TenantID: tn.ID, Slug: fmt.Sprintf("imp-%05d", i), URL: fmt.Sprintf("https://example.com/%d", i)}
	}
	links[7].Tags = []string{"a", "b"}
	links[7].ExpiresAt = &expires
	links[7].MaxClicks = new(int64(9))
	links[7].FallbackURL = "https://example.com/fallback"
	if err := db.ImportLinks(t.Context(), links); err != nil {
		t.Fatal(err)
	}
	if got := mustQueryInt(t, db, `SELECT count(*) FROM links WHERE tenant_id = $1`, tn.ID); got != n {
		t.Fatalf("%d links stored, want %d", got, n)
	}

	for _, i := range []int{0, 7, n / 2, n - 1} {
		l, err := db.LinkBySlug(t.Context(), linkforge.PublicDomainID, links[i].Slug)
		if err != nil {
			t.Fatalf("LinkBySlug(%q): %v", links[i].Slug, err)
		}
		if l.URL != links[i].URL || l.TenantID != tn.ID || l.ID == 0 || l.CreatedAt.IsZero() ||
			!l.UpdatedAt.Equal(l.CreatedAt) || l.Tags == nil || l.CreatedAt.Location() != time.UTC {
			t.Errorf("LinkBySlug(%q) = %+v", links[i].Slug, l)
		}
	}
	l7, err := db.LinkBySlug(t.Context(), linkforge.PublicDomainID, "imp-00007")
	if err != nil {
		t.Fatal(err)
	}
	wantExpires := expires.UTC().Truncate(time.Microsecond)
	if l7.ExpiresAt == nil || !l7.ExpiresAt.Equal(wantExpires) || l7.ExpiresAt.Location() != time.UTC ||
		l7.MaxClicks == nil || *l7.MaxClicks != 9 || l7.FallbackURL != "https://example.com/fallback" ||
		strings.Join(l7.Tags, ",") != "a,b" {
		t.Errorf("imported optional fields = expires %v max %v fallback %q tags %q; want %v 9 fallback [a b]",
			l7.ExpiresAt, l7.MaxClicks, l7.FallbackURL, l7.Tags, wantExpires)
	}

	// A batch with one slug in use inserts nothing.
	err = db.ImportLinks(t.Context(), []linkforge.Link{
		{TenantID: tn.ID, Slug: "fresh-1", URL: "https://example.com/"},
		{TenantID: tn.ID, Slug: "imp-00042", URL: "https://example.com/"},
	})
	if code := linkforge.ErrorCode(err); code != linkforge.EConflict {
		t.Errorf("import of a taken slug: %v (code %q), want %q", err, code, linkforge.EConflict)
	}
	if got := mustQueryInt(t, db, `SELECT count(*) FROM links`); got != n {
		t.Errorf("%d links after a failed import, want %d", got, n)
	}
}

// queryCounter is a pgx tracer counting the statements sent that contain a
// substring.
type queryCounter struct {
	substr string
	n      atomic.Int64
}

func (c *queryCounter) TraceQueryStart(ctx context.Context, _ *pgx.Conn, d pgx.TraceQueryStartData) context.Context {
	if strings.Contains(d.SQL, c.substr) {
		c.n.Add(1)
	}
	return ctx
}

func (c *queryCounter) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

// The statements of a batch count as well (pgx.BatchTracer).
func (c *queryCounter) TraceBatchStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceBatchStartData) context.Context {
	return ctx
}

func (c *queryCounter) TraceBatchQuery(_ context.Context, _ *pgx.Conn, d pgx.TraceBatchQueryData) {
	if strings.Contains(d.SQL, c.substr) {
		c.n.Add(1)
	}
}

func (c *queryCounter) TraceBatchEnd(context.Context, *pgx.Conn, pgx.TraceBatchEndData) {}

func TestUpsertRollupIsOneStatement(t *testing.T) {
	t.Parallel()
	url := pgtest.New(t)
	mustOpenURL(t, url) // migrate
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		t.Fatal(err)
	}
	counter := &queryCounter{substr: "INSERT INTO click_rollup"}
	cfg.ConnConfig.Tracer = counter
	db, err := postgres.OpenConfig(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()

	const n = 5000
	base := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	rows := make([]linkforge.RollupRow, n)
	var sum int64
	for i := range rows {
		rows[i] = linkforge.RollupRow{LinkID: int64(i%50 + 1), Bucket: base.Add(time.Duration(i/50) * time.Minute), Count: int64(i + 1)}
		sum += int64(i + 1)
	}
	for attempt := range 2 { // the second is a replay: nothing changes
		before := counter.n.Load()
		if err := db.UpsertRollup(t.Context(), "node-a", rows); err != nil {
			t.Fatal(err)
		}
		// A replay writes nothing: the stored counts are read first.
		if sent, want := counter.n.Load()-before, int64(1-attempt); sent != want {
			t.Errorf("attempt %d: UpsertRollup of %d rows sent %d writes of click_rollup, want %d", attempt, n, sent, want)
		}
		if got := mustQueryInt(t, db, `SELECT count(*) FROM click_rollup WHERE node_id = 'node-a'`); got != n {
			t.Errorf("attempt %d: %d rollup rows, want %d", attempt, got, n)
		}
		if got := mustQueryInt(t, db, `SELECT sum(count) FROM click_rollup`); got != sum {
			t.Errorf("attempt %d: rollup sum %d, want %d", attempt, got, sum)
		}
	}
}

func TestUpsertRollupDuplicateKeyLastWins(t *testing.T) {
	t.Parallel()
	db := mustOpen(t)
	b := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	// The same minute in another zone is the same key.
	err := db.UpsertRollup(t.Context(), "n", []linkforge.RollupRow{
		{LinkID: 1, Bucket: b, Count: 3},
		{LinkID: 2, Bucket: b, Count: 1},
		{LinkID: 1, Bucket: b.In(time.FixedZone("Y", -5*3600)), Count: 7},
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := mustQueryInt(t, db, `SELECT count FROM click_rollup WHERE link_id = 1`); got != 7 {
		t.Errorf("count of the duplicated key = %d, want the last one, 7", got)
	}
	if got := mustQueryInt(t, db, `SELECT count(*) FROM click_rollup`); got != 2 {
		t.Errorf("%d rows, want 2", got)
	}
}

// TestStatsIgnoreSessionTimeZone checks that buckets are UTC intervals even
// when the connection's TimeZone is not UTC (Newfoundland is UTC-3:30, so an
// hour or a day truncated in local time would start on another instant).
func TestStatsIgnoreSessionTimeZone(t *testing.T) {
	t.Parallel()
	url := pgtest.New(t)
	mustOpenURL(t, url)
	db := mustOpenURL(t, withParam(t, url, "timezone", "America/St_Johns"))
	if tz := mustQueryText(t, db, "SHOW TimeZone"); tz != "America/St_Johns" {
		t.Fatalf("session TimeZone = %q; the test needs a non-UTC one", tz)
	}
	tn := mustTenant(t, db, "tz")
	l, err := db.CreateLink(t.Context(), linkforge.Link{TenantID: tn.ID, Slug: "tz", URL: "https://example.com/"})
	if err != nil {
		t.Fatal(err)
	}
	bucket := func(start time.Time, n int64) linkforge.StatsBucket {
		return linkforge.StatsBucket{Start: start, Count: n, Human: n} // unclassified clicks are human
	}
	at := func(h, m int) time.Time { return time.Date(2026, 6, 1, h, m, 0, 0, time.UTC) }
	if err := db.UpsertRollup(t.Context(), "n", []linkforge.RollupRow{
		{LinkID: l.ID, Bucket: at(1, 59), Count: 1},
		{LinkID: l.ID, Bucket: at(2, 0), Count: 2},
		{LinkID: l.ID, Bucket: at(2, 31), Count: 4},
		{LinkID: l.ID, Bucket: at(23, 59), Count: 8},
	}); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name     string
		interval linkforge.Interval
		linkID   int64
		want     []linkforge.StatsBucket
	}{
		{"hour of link", linkforge.Hour, l.ID, []linkforge.StatsBucket{bucket(at(1, 0), 1), bucket(at(2, 0), 6), bucket(at(23, 0), 8)}},
		{"day of tenant", linkforge.Day, 0, []linkforge.StatsBucket{bucket(at(0, 0), 15)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st, err := db.Stats(t.Context(), linkforge.StatsQuery{TenantID: tn.ID, LinkID: tt.linkID,
				From: at(0, 0), To: at(0, 0).Add(24 * time.Hour), Interval: tt.interval})
			if err != nil {
				t.Fatal(err)
			}
			if st.Total != 15 {
				t.Errorf("Total = %d, want 15", st.Total)
			}
			if fmt.Sprint(st.Buckets) != fmt.Sprint(tt.want) {
				t.Errorf("Buckets = %v, want %v", st.Buckets, tt.want)
			}
			for _, b := range st.Buckets {
				if b.Start.Location() != time.UTC {
					t.Errorf("bucket start %v not in UTC", b.Start)
				}
			}
		})
	}
}

// withParam adds a connection parameter to a URL or keyword/value string.
func withParam(t *testing.T, conn, key, value string) string {
	t.Helper()
	if !strings.Contains(conn, "://") {
		return conn + " " + key + "=" + value
	}
	u, err := neturl.Parse(conn)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	q.Set(key, value)
	u.RawQuery = q.Encode()
	return u.String()
}

func mustQueryText(t *testing.T, db *postgres.DB, sql string) string {
	t.Helper()
	var s string
	if err := db.Pool().QueryRow(t.Context(), sql).Scan(&s); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	return s
}

// BenchmarkOpenMigrate measures what a test pays for a fresh migrated
// database.
func BenchmarkOpenMigrate(b *testing.B) {
	for b.Loop() {
		url := pgtest.New(b)
		db, err := postgres.Open(b.Context(), url)
		if err != nil {
			b.Fatal(err)
		}
		if err := db.Migrate(b.Context()); err != nil {
			b.Fatal(err)
		}
		db.Close()
	}
}

// BenchmarkImportLinks loads links with COPY, per link.
func BenchmarkImportLinks(b *testing.B) {
	db, err := postgres.Open(b.Context(), pgtest.New(b))
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	if err := db.Migrate(b.Context()); err != nil {
		b.Fatal(err)
	}
	tn, err := db.EnsureTenant(b.Context(), "bench")
	if err != nil {
		b.Fatal(err)
	}
	const batch = 100000
	links := make([]linkforge.Link, batch)
	for i := 0; b.Loop(); i++ {
		for j := range links {
			links[j] = linkforge.Link{TenantID: tn.ID, Slug: fmt.Sprintf("b%d-%d", i, j), URL: "https://example.com/"}
		}
		if err := db.ImportLinks(b.Context(), links); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*batch), "ns/link")
}

// TestOutage stops the database under an open store: Ping (readiness) and
// queries fail while it is down, and the pool recovers by itself once it is
// back, with the data intact.
func TestOutage(t *testing.T) {
	t.Parallel()
	srv := pgtest.NewServer(t)
	db := mustOpenURL(t, srv.NewDatabase(t))
	tn := mustTenant(t, db, "outage")

	srv.Stop()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	if err := db.Ping(ctx); err == nil {
		t.Error("Ping succeeded while the database was stopped")
	}
	if _, err := db.TenantByName(ctx, "outage"); err == nil || linkforge.ErrorCode(err) != linkforge.EInternal {
		t.Errorf("TenantByName while stopped: %v (code %q), want an internal error", err, linkforge.ErrorCode(err))
	}

	srv.Start()
	if err := db.Ping(t.Context()); err != nil {
		t.Errorf("Ping after restart: %v", err)
	}
	got, err := db.TenantByName(t.Context(), "outage")
	if err != nil || got.ID != tn.ID {
		t.Errorf("TenantByName after restart = %+v, %v; want id %d", got, err, tn.ID)
	}
}

func TestClickTotal(t *testing.T) {
	t.Parallel()
	db := mustOpen(t)
	b := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	for node, rows := range map[string][]linkforge.RollupRow{
		"a": {{LinkID: 1, Bucket: b, Count: 3}, {LinkID: 1, Bucket: b.Add(time.Minute), Count: 4}, {LinkID: 2, Bucket: b, Count: 100}},
		"b": {{LinkID: 1, Bucket: b, Count: 5}},
	} {
		if err := db.UpsertRollup(t.Context(), node, rows); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		name string
		link int64
		want int64
	}{
		{"summed over buckets and nodes", 1, 12},
		{"other link", 2, 100},
		{"no rows", 3, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := db.ClickTotal(t.Context(), tt.link)
			if err != nil || got != tt.want {
				t.Errorf("ClickTotal(%d) = %d, %v; want %d", tt.link, got, err, tt.want)
			}
		})
	}
}

// BenchmarkFlushOneOff measures one flush of 1,000 one-off links
// (storetest.BenchmarkFlushOneOff), as SQLite's:
//
//	go test -run '^$' -bench 'FlushOneOff$' -benchtime 10x ./store/postgres/
func BenchmarkFlushOneOff(b *testing.B) {
	storetest.BenchmarkFlushOneOff(b, testdb.Postgres(b))
}
