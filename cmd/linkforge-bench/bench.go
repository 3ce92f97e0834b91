package main

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/store/postgres"
	"github.com/linkforge/linkforge/store/sqlite"
)

// benchTenant is the tenant the tool's links and tokens belong to.
const benchTenant = "bench"

// sqliteFile is linkforge's database name inside its data dir
// (cmd/linkforge/store.go).
const sqliteFile = "linkforge.db"

// bench is the state of one run shared by the scenarios: where LinkForge
// comes from, the PostgreSQL for the postgres rows, and the temporary files.
type bench struct {
	cfg    config
	log    *slog.Logger
	client *http.Client // API calls and scrapes; never follows redirects
	tmp    string       // removed by close
	bin    string       // linkforge binary; empty with --target
	runID  string       // slug prefix, unique per run
	seq    int          // instances started so far

	pg       *pgServer // the throwaway server, if one was started
	pgURL    string
	pgSkip   string // why there is no PostgreSQL, once known
	pgLoaded bool
}

func newBench(ctx context.Context, cfg config, log *slog.Logger) (*bench, error) {
	b := &bench{
		cfg: cfg,
		log: log,
		client: &http.Client{
			Timeout:       30 * time.Second,
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		},
		runID: randomID(4),
	}
	var err error
	if b.tmp, err = os.MkdirTemp(cfg.workDir, "linkforge-bench-"); err != nil {
		return nil, fmt.Errorf("create temp dir: %w", err)
	}
	if cfg.target != "" {
		if err := b.checkTarget(ctx); err != nil {
			b.close()
			return nil, err
		}
		return b, nil
	}
	b.bin = cfg.linkforgeBin
	if b.bin == "" {
		log.Info("building linkforge", "dir", b.tmp)
		if b.bin, err = buildLinkForge(ctx, b.tmp); err != nil {
			b.close()
			return nil, err
		}
	}
	return b, nil
}

// checkTarget makes sure the running server answers and takes the token.
func (b *bench) checkTarget(ctx context.Context) error {
	inst := &instance{b: b, base: b.cfg.target, token: b.cfg.token}
	var page struct{}
	if err := inst.api(ctx, http.MethodGet, "/api/v1/links?limit=1", nil, &page); err != nil {
		return fmt.Errorf("--target %s with --token: %w", b.cfg.target, err)
	}
	return nil
}

// close stops the throwaway PostgreSQL and removes the temporary files.
func (b *bench) close() {
	if b.pg != nil {
		if err := b.pg.close(); err != nil {
			b.log.Error("stop postgres", "error", err)
		}
	}
	if err := os.RemoveAll(b.tmp); err != nil {
		b.log.Error("remove temp dir", "dir", b.tmp, "error", err)
	}
}

// postgresURL returns the PostgreSQL to use, starting the throwaway server on
// first use; skip says why there is none.
func (b *bench) postgresURL(ctx context.Context) (dbURL, skip string, err error) {
	if b.pgLoaded {
		return b.pgURL, b.pgSkip, nil
	}
	switch {
	case b.cfg.databaseURL != "":
		b.pgURL = b.cfg.databaseURL
	case !b.cfg.startPG:
		b.pgSkip = "no --database-url and --start-postgres=false"
	default:
		if _, _, ok := findPostgres(); !ok {
			b.pgSkip = "no --database-url, and no PostgreSQL server binaries to start one (apt-get install postgresql)"
			break
		}
		b.log.Info("starting a throwaway PostgreSQL")
		pg, err := startPostgres(ctx)
		if err != nil {
			return "", "", err
		}
		b.pg, b.pgURL = pg, pg.url(pgDatabase)
	}
	b.pgLoaded = true
	return b.pgURL, b.pgSkip, nil
}

// benchLink is a link the tool creates.
type benchLink struct {
	slug, url string
	// host is the tenant's domain the link lives on; empty: the public
	// host. importLinks creates each such domain, verified.
	host string
}

// onHost returns links moved to the domain host.
func onHost(links []benchLink, host string) []benchLink {
	out := make([]benchLink, len(links))
	for i, l := range links {
		l.host = host
		out[i] = l
	}
	return out
}

// newLinks returns n links with slugs unique to this run and instance, so
// that runs sharing a database (--database-url, --target) never collide.
func (b *bench) newLinks(n int) []benchLink {
	b.seq++
	links := make([]benchLink, n)
	for i := range links {
		links[i] = benchLink{
			slug: fmt.Sprintf("b%s%d-%06d", b.runID, b.seq, i),
			url:  fmt.Sprintf("https://example.com/landing/%d?utm_source=linkforge-bench", i),
		}
	}
	return links
}

// instance is one LinkForge under test: started by the tool, or the
// running server of --target.
type instance struct {
	b    *bench
	base string // http://127.0.0.1:port
	// httpsBase is https://127.0.0.1:port when started with --tls.
	httpsBase string
	token     string
	backend   string // sqlite or postgres; empty with --target
	dataDir   string
	dbURL     string
	proc      *lfProcess // nil with --target
}

// label names the instance in the table.
func (in *instance) label() string {
	if in.proc == nil {
		return "linkforge (--target)"
	}
	return "linkforge " + in.backend
}

// pid returns the server's process id; 0 with --target.
func (in *instance) pid() int {
	if in.proc == nil {
		return 0
	}
	return in.proc.cmd.Process.Pid
}

// start returns a LinkForge serving links. Without --target it starts a
// fresh one on backend, with the links bulk-loaded into its store before it
// starts; with --target the links are created through the API.
func (b *bench) start(ctx context.Context, backend string, links []benchLink) (*instance, error) {
	return b.startFlushing(ctx, backend, links, b.cfg.flushEvery)
}

// startFlushing is start with a --flush-interval of its own for the
// server (recovery wants clicks to stay unflushed).
func (b *bench) startFlushing(ctx context.Context, backend string, links []benchLink, flush time.Duration) (*instance, error) {
	return b.startWith(ctx, backend, links, flush)
}

// startWith is startFlushing with more flags of serve (extra); with
// --target they are not the tool's to give, so it refuses them.
func (b *bench) startWith(ctx context.Context, backend string, links []benchLink, flush time.Duration, extra ...string) (*instance, error) {
	if b.cfg.target != "" && len(extra) > 0 {
		return nil, fmt.Errorf("this scenario starts linkforge with %q: not with --target", extra)
	}
	if b.cfg.target != "" {
		in := &instance{b: b, base: b.cfg.target, token: b.cfg.token}
		if err := in.createLinks(ctx, links); err != nil {
			return nil, err
		}
		return in, nil
	}
	in := &instance{b: b, backend: backend}
	var err error
	if in.dataDir, err = os.MkdirTemp(b.tmp, "data-"); err != nil {
		return nil, fmt.Errorf("create data dir: %w", err)
	}
	if backend == "postgres" {
		dbURL, skip, err := b.postgresURL(ctx)
		if err != nil {
			return nil, err
		}
		if skip != "" {
			return nil, errors.New(skip)
		}
		in.dbURL = dbURL
	}
	start := time.Now()
	if err := in.importLinks(ctx, links); err != nil {
		return nil, err
	}
	b.log.Info("links loaded", "backend", backend, "links", len(links), "took", time.Since(start).Round(time.Millisecond))
	if in.token, err = createToken(ctx, b.bin, in.dataDir, in.dbURL, benchTenant); err != nil {
		return nil, err
	}
	if in.proc, err = startLinkForge(ctx, b.bin, in.dataDir, in.dbURL, flush, b.cfg.journalSync, extra...); err != nil {
		return nil, err
	}
	in.base = "http://" + in.proc.addr
	if in.proc.httpsAddr != "" {
		in.httpsBase = "https://" + in.proc.httpsAddr
	}
	return in, nil
}

// stop stops a server the tool started, gracefully (SIGTERM flushes every
// counter), and returns how long that took. With --target it does nothing.
func (in *instance) stop() (time.Duration, error) {
	if in.proc == nil {
		return 0, nil
	}
	p := in.proc
	in.proc = nil
	return p.stop()
}

// close is stop for deferred clean-up after a failure: errors are logged.
func (in *instance) close() {
	if in.proc == nil {
		return
	}
	if _, err := in.stop(); err != nil {
		in.b.log.Error("stop linkforge", "error", err)
	}
}

// store opens the instance's main store, migrated. The caller closes it.
func (in *instance) store(ctx context.Context) (linkforge.Store, error) {
	if in.dbURL != "" {
		db, err := postgres.Open(ctx, in.dbURL)
		if err != nil {
			return nil, err
		}
		if err := db.Migrate(ctx); err != nil {
			db.Close()
			return nil, err
		}
		return db, nil
	}
	db, err := sqlite.Open(ctx, filepath.Join(in.dataDir, sqliteFile))
	if err != nil {
		return nil, err
	}
	if err := db.Migrate(ctx); err != nil {
		db.Close()
		return nil, err
	}
	return db, nil
}

// importBatch bounds one ImportLinks transaction.
const importBatch = 50_000

// importLinks bulk-loads links into the store, before the server starts:
// ImportLinks is one transaction (a COPY on PostgreSQL) per batch, where
// the API would take one rate-limited request per link.
func (in *instance) importLinks(ctx context.Context, links []benchLink) error {
	st, err := in.store(ctx)
	if err != nil {
		return fmt.Errorf("open store: %w", err)
	}
	defer st.Close()
	imp, ok := st.(interface {
		ImportLinks(context.Context, []linkforge.Link) error
	})
	if !ok {
		return fmt.Errorf("%T has no ImportLinks", st)
	}
	tenant, err := st.EnsureTenant(ctx, benchTenant)
	if err != nil {
		return fmt.Errorf("ensure tenant: %w", err)
	}
	domains, err := createDomains(ctx, st, tenant.ID, links)
	if err != nil {
		return err
	}
	batch := make([]linkforge.Link, 0, min(len(links), importBatch))
	for i, l := range links {
		batch = append(batch, linkforge.Link{TenantID: tenant.ID, DomainID: domains[l.host], Slug: l.slug, URL: l.url, Tags: []string{}})
		if len(batch) == cap(batch) || i == len(links)-1 {
			if err := imp.ImportLinks(ctx, batch); err != nil {
				return fmt.Errorf("import links: %w", err)
			}
			batch = batch[:0]
		}
	}
	return nil
}

// createDomains creates the links' domains for the tenant, verified (as
// --domain-verify none would), and returns their ids by host; the public
// host, "", is linkforge.PublicDomainID.
func createDomains(ctx context.Context, st linkforge.Store, tenantID int64, links []benchLink) (map[string]int64, error) {
	ids := map[string]int64{"": linkforge.PublicDomainID}
	now := time.Now()
	for _, l := range links {
		if _, ok := ids[l.host]; ok {
			continue
		}
		// A database shared by two servers of a run (--backend postgres)
		// or by runs (--database-url) holds the domain already.
		d, err := st.TenantDomain(ctx, tenantID, l.host)
		if linkforge.ErrorCode(err) == linkforge.ENotFound {
			d, err = st.CreateDomain(ctx, linkforge.Domain{TenantID: tenantID, Host: l.host, State: linkforge.DomainVerified,
				VerifiedAt: &now, VerifyToken: randomID(22)})
		}
		if err != nil {
			return nil, fmt.Errorf("create domain %s: %w", l.host, err)
		}
		ids[l.host] = d.ID
	}
	return ids, nil
}

// storedClicks reads each link's flushed total from the store: after a
// graceful stop, the truth the tool compares with the 302s it received.
func (in *instance) storedClicks(ctx context.Context, links []benchLink) (map[string]int64, error) {
	st, err := in.store(ctx)
	if err != nil {
		return nil, fmt.Errorf("open store: %w", err)
	}
	defer st.Close()
	tenant, err := st.TenantByName(ctx, benchTenant)
	if err != nil {
		return nil, fmt.Errorf("tenant %q: %w", benchTenant, err)
	}
	clicks := make(map[string]int64, len(links))
	for _, l := range links {
		got, err := st.TenantLink(ctx, tenant.ID, linkforge.PublicDomainID, l.slug)
		if err != nil {
			return nil, fmt.Errorf("link %s: %w", l.slug, err)
		}
		clicks[l.slug] = got.Clicks
	}
	return clicks, nil
}

// urls returns the short URLs of links on the instance.
func (in *instance) urls(links []benchLink) []string {
	u := make([]string, len(links))
	for i, l := range links {
		u[i] = in.base + "/" + l.slug
	}
	return u
}

// randomID returns n base-62 characters.
func randomID(n int) string {
	const alphabet = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
	b := make([]byte, n)
	rand.Read(b)
	for i := range b {
		b[i] = alphabet[int(b[i])%len(alphabet)]
	}
	return string(b)
}

// storedTraffic reads the tenant's clicks of the hours [from, to) by
// traffic, from the traffic dimension's rows (not from the totals, of which
// human is the rest): what the counting scenario checks against the 302s.
func (in *instance) storedTraffic(ctx context.Context, from, to time.Time) (human, automated int64, err error) {
	st, err := in.store(ctx)
	if err != nil {
		return 0, 0, fmt.Errorf("open store: %w", err)
	}
	defer st.Close()
	tenant, err := st.TenantByName(ctx, benchTenant)
	if err != nil {
		return 0, 0, fmt.Errorf("tenant %q: %w", benchTenant, err)
	}
	b, err := st.Breakdown(ctx, linkforge.BreakdownQuery{TenantID: tenant.ID, Dimension: linkforge.DimTraffic,
		From: from.UTC().Truncate(time.Hour), To: to.UTC().Truncate(time.Hour).Add(time.Hour), Limit: 10})
	if err != nil {
		return 0, 0, fmt.Errorf("traffic breakdown: %w", err)
	}
	for _, v := range b.Values {
		switch v.Value {
		case linkforge.TrafficHuman:
			human = v.Count
		case linkforge.TrafficAutomated:
			automated = v.Count
		}
	}
	return human, automated, nil
}
