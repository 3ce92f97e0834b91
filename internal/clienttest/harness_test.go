package clienttest_test

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/classify"
	"github.com/linkforge/linkforge/dashboard"
	"github.com/linkforge/linkforge/internal/pgtest"
	"github.com/linkforge/linkforge/linkcounter"
	"github.com/linkforge/linkforge/linkcounter/clicklog"
	"github.com/linkforge/linkforge/people"
	"github.com/linkforge/linkforge/store/sqlite"
	"github.com/linkforge/linkforge/web"
)

func TestMain(m *testing.M) { pgtest.MainNoLeaks(m) }

// publicURL is the --public-url of the test servers.
const publicURL = "http://lf.test:8080"

// guard bounds every wait of a test; a healthy run needs a fraction.
const guard = 15 * time.Second

// harnessT is what the harness needs of a *testing.T; examples, which have
// none, pass an exampleT.
type harnessT interface {
	Helper()
	Fatalf(format string, args ...any)
	Errorf(format string, args ...any)
	Cleanup(func())
	TempDir() string
}

// clock is a settable time source for the server's Config.Now.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// server is the real LinkForge HTTP handler on a real SQLite store, with a
// real LinkCounter (journal in a temp dir) and a real live dashboard hub,
// over real HTTP.
type server struct {
	t        harnessT
	URL      string
	store    *sqlite.DB
	tenantID int64
	Token    string
	tokenIDs map[string]int64 // by secret
	hub      *dashboard.Hub
	counter  *linkcounter.Counter
	http     *httptest.Server
	stopOnce sync.Once
}

type serverOpts struct {
	web  func(*web.Config)
	hub  func(*dashboard.Config)
	live bool // start a hub and serve the feed
}

// newServer starts a server with tenant "acme" and a token of it.
func newServer(t harnessT, o serverOpts) *server {
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	st, err := sqlite.Open(ctx, filepath.Join(dir, "linkforge.db"))
	if err != nil {
		t.Fatalf("open store: %v", err)
	}
	t.Cleanup(func() { st.Close() })
	if err := st.Migrate(ctx); err != nil {
		t.Fatalf("migrate: %v", err)
	}
	s := &server{t: t, store: st, tokenIDs: map[string]int64{}}
	s.tenantID, s.Token = s.newToken("acme")

	pub, _ := url.Parse(publicURL)
	cfg := web.Config{Store: st, PublicURL: pub, Classifier: classify.New(classify.Config{}),
		RateLimit: 1e6, RateBurst: 1e6, Logger: slog.New(slog.DiscardHandler)}
	var sub linkcounter.Subscriber
	if o.live {
		hc := dashboard.Config{Tokens: people.FeedChecker{Store: st}, Logger: slog.New(slog.DiscardHandler)}
		if o.hub != nil {
			o.hub(&hc)
		}
		s.hub, err = dashboard.New(hc)
		if err != nil {
			t.Fatalf("dashboard.New: %v", err)
		}
		if err := s.hub.Start(ctx); err != nil {
			t.Fatalf("start hub: %v", err)
		}
		t.Cleanup(func() {
			ctx, cancel := context.WithTimeout(context.Background(), guard)
			defer cancel()
			if err := s.hub.Stop(ctx); err != nil {
				t.Errorf("stop hub: %v", err)
			}
		})
		cfg.Live, cfg.LinkFeed, sub = s.hub, s.hub, s.hub
	}
	j, err := clicklog.Open(ctx, dir)
	if err != nil {
		t.Fatalf("open journal: %v", err)
	}
	t.Cleanup(func() { j.Close() })
	s.counter, err = linkcounter.New(ctx, linkcounter.Config{Store: st, Journal: j, Subscriber: sub,
		FlushInterval: time.Hour, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatalf("linkcounter.New: %v", err)
	}
	if err := s.counter.Start(ctx); err != nil {
		t.Fatalf("start counter: %v", err)
	}
	t.Cleanup(s.flush)
	cfg.Counter, cfg.Exhaustion, cfg.Skips, cfg.Readiness = s.counter, s.counter, s.counter, s.counter
	if o.web != nil {
		o.web(&cfg)
	}
	h, err := web.New(cfg)
	if err != nil {
		t.Fatalf("web.New: %v", err)
	}
	s.http = httptest.NewServer(h)
	t.Cleanup(s.http.Close)
	s.URL = s.http.URL
	return s
}

// newToken creates tenant name if needed and a token of it.
func (s *server) newToken(name string) (int64, string) {
	s.t.Helper()
	ctx := context.Background()
	tenant, err := s.store.EnsureTenant(ctx, name)
	if err != nil {
		s.t.Fatalf("EnsureTenant: %v", err)
	}
	secret, hash, display := linkforge.NewToken()
	tok, err := s.store.CreateToken(ctx, linkforge.Token{TenantID: tenant.ID, Name: "test", Hash: hash, Display: display})
	if err != nil {
		s.t.Fatalf("CreateToken: %v", err)
	}
	s.tokenIDs[secret] = tok.ID
	return tenant.ID, secret
}

// flush stops the counter, which flushes every click to the store, where
// the stats read them. The redirects count no more clicks afterwards.
func (s *server) flush() {
	s.stopOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), guard)
		defer cancel()
		if err := s.counter.Stop(ctx); err != nil {
			s.t.Errorf("stop counter: %v", err)
		}
	})
}

// click follows the short link as a browser would, from referrer.
func (s *server) click(slug, referrer string) {
	s.t.Helper()
	req, _ := http.NewRequest(http.MethodGet, s.URL+"/"+slug, nil)
	req.Header.Set("User-Agent", "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36")
	if referrer != "" {
		req.Header.Set("Referer", referrer)
	}
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err != nil {
		s.t.Fatalf("click %s: %v", slug, err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusFound {
		s.t.Fatalf("click %s: %d, want 302", slug, resp.StatusCode)
	}
}

// exampleT runs the harness for an example: a failure panics, and cleanups
// run at close.
type exampleT struct {
	dir      string
	cleanups []func()
}

func newExampleT() *exampleT {
	dir, err := os.MkdirTemp("", "linkforge-example-")
	if err != nil {
		panic(err)
	}
	return &exampleT{dir: dir}
}

func (e *exampleT) Helper()                           {}
func (e *exampleT) Fatalf(format string, args ...any) { panic(fmt.Sprintf(format, args...)) }
func (e *exampleT) Errorf(format string, args ...any) { panic(fmt.Sprintf(format, args...)) }
func (e *exampleT) Cleanup(f func())                  { e.cleanups = append(e.cleanups, f) }
func (e *exampleT) TempDir() string                   { return e.dir }
func (e *exampleT) close() {
	for i := len(e.cleanups) - 1; i >= 0; i-- {
		e.cleanups[i]()
	}
	os.RemoveAll(e.dir)
}
