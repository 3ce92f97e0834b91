package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"golang.org/x/net/netutil"
	"golang.org/x/term"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/blocklist"
	"github.com/linkforge/linkforge/classify"
	"github.com/linkforge/linkforge/dashboard"
	"github.com/linkforge/linkforge/domain"
	"github.com/linkforge/linkforge/expiry"
	"github.com/linkforge/linkforge/health"
	"github.com/linkforge/linkforge/internal/clusterfeed"
	"github.com/linkforge/linkforge/internal/wake"
	"github.com/linkforge/linkforge/linkcache"
	"github.com/linkforge/linkforge/linkcounter"
	"github.com/linkforge/linkforge/linkcounter/clicklog"
	"github.com/linkforge/linkforge/links"
	"github.com/linkforge/linkforge/natsbus"
	"github.com/linkforge/linkforge/password"
	"github.com/linkforge/linkforge/people"
	"github.com/linkforge/linkforge/quota"
	"github.com/linkforge/linkforge/safety"
	"github.com/linkforge/linkforge/schedule"
	"github.com/linkforge/linkforge/store/postgres"
	"github.com/linkforge/linkforge/visitor"
	"github.com/linkforge/linkforge/web"
	"github.com/linkforge/linkforge/webhook"
)

// Stop budgets. Each step of the graceful stop gets its own deadline, so
// that a step that runs out of time (a slow client holding its request
// open) cannot eat the time of the steps after it: above all, the counter's
// final flush always has its full budget. Together they stay under the 30 s
// that container orchestrators usually wait between SIGTERM and SIGKILL
// (TestStopBudgetsFitTheGracePeriod).
const (
	// httpDrainBudget bounds the wait for in-flight requests; then the
	// remaining connections are cut.
	httpDrainBudget = 10 * time.Second
	// counterFlushBudget is the final flush of every counter's clicks.
	counterFlushBudget = 15 * time.Second
	// componentStopBudget is each of the other components' stop: the
	// dashboards, the cluster bus.
	componentStopBudget = time.Second
	// expiryStopBudget lets a running alarm's hook finish.
	expiryStopBudget = 2 * time.Second
)

// httpLimits are the HTTP server's timeouts. Together with the listener's
// connection cap they bound what a client can hold without a token.
type httpLimits struct {
	// readHeader bounds the request line and headers (slow-loris).
	readHeader time.Duration
	// read bounds the whole request, body included: a body trickled a byte
	// at a time is cut. Admin API bodies are at most 64 KiB.
	read time.Duration
	// write bounds the handler and the answer, from the end of the
	// headers: a client that does not read its answer is cut. WebSocket
	// upgrades are hijacked and clear it (gorilla/websocket resets the
	// connection's deadlines), so it does not cut live dashboards.
	write time.Duration
	// idle closes keep-alive connections with no request; longer than the
	// 60 s idle timeout of common load balancers, so that the balancer, not
	// this server, closes the connections it reuses.
	idle time.Duration
}

var defaultHTTPLimits = httpLimits{
	readHeader: 10 * time.Second,
	read:       15 * time.Second,
	write:      30 * time.Second,
	idle:       75 * time.Second,
}

// newHTTPServer returns the server of h with limits.
func newHTTPServer(h http.Handler, log *slog.Logger, limits httpLimits) *http.Server {
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: limits.readHeader,
		ReadTimeout:       limits.read,
		WriteTimeout:      limits.write,
		IdleTimeout:       limits.idle,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
}

// listen opens the listening socket, capped at maxConns open connections
// (0: no cap). Connections past the cap wait in the kernel's backlog until
// one closes, which the timeouts above guarantee.
func listen(addr string, maxConns int) (net.Listener, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	if maxConns > 0 {
		ln = netutil.LimitListener(ln, maxConns)
	}
	return ln, nil
}

// stopper is one step of the shutdown.
type stopper struct {
	name   string
	budget time.Duration // 0: no deadline of its own (closing a file)
	stop   func(context.Context) error
}

// lifecycle stops what serve started, in reverse order: a component is
// stopped before what it depends on (HTTP before the counters that requests
// feed, counters before the store they flush into). Later components
// (LinkCounter, dashboards, expiry alarms) register their Stop here right
// after their Start.
type lifecycle struct {
	log      *slog.Logger
	stoppers []stopper
}

func (l *lifecycle) add(name string, budget time.Duration, stop func(context.Context) error) {
	l.stoppers = append(l.stoppers, stopper{name, budget, stop})
}

// stopAll runs every stop, last added first, each within its own budget,
// even after a failure, and returns the failures joined.
func (l *lifecycle) stopAll(parent context.Context) error {
	var errs []error
	for i := len(l.stoppers) - 1; i >= 0; i-- {
		s := l.stoppers[i]
		ctx, cancel := parent, context.CancelFunc(func() {})
		if s.budget > 0 {
			ctx, cancel = context.WithTimeout(parent, s.budget)
		}
		start := time.Now()
		err := s.stop(ctx)
		cancel()
		if err != nil {
			l.log.Error("stop failed", "component", s.name, "error", err, "budget", s.budget.String())
			errs = append(errs, fmt.Errorf("stop %s: %w", s.name, err))
			continue
		}
		l.log.Info("stopped", "component", s.name, "took", time.Since(start).Round(time.Millisecond).String())
	}
	return errors.Join(errs...)
}

// serve runs the server until ctx is cancelled, then shuts down gracefully.
func (a *app) serve(invocation) int {
	lc := &lifecycle{log: a.log}
	code := a.serveUntilDone(lc)

	// The parent context is cancelled by now: each step of the stop gets
	// its own deadline.
	if err := lc.stopAll(context.WithoutCancel(a.ctx)); err != nil {
		return exitFailure
	}
	if code == exitOK {
		a.log.Info("shutdown complete")
	}
	return code
}

// serveUntilDone starts everything, registering each stop with lc, and
// returns when the server should shut down: on cancellation of a.ctx
// (exitOK), or when something failed (exitFailure).
func (a *app) serveUntilDone(lc *lifecycle) int {
	id, handler, err := a.startNode(lc)
	if err != nil {
		var se *startError
		if errors.As(err, &se) {
			return a.fail(se.msg, se.err)
		}
		return a.fail("cannot start", err)
	}
	ln, err := listen(a.cfg.Addr, a.cfg.MaxConnections)
	if err != nil {
		return a.fail("cannot listen", err)
	}
	serveErr := a.serveHTTP(lc, ln, a.front.plainHandler(handler))
	httpsErr, err := a.serveHTTPS(lc, a.front, handler)
	if err != nil {
		return a.fail("cannot listen (--https-addr)", err)
	}
	a.announce(ln.Addr().String(), id)

	select {
	case <-a.ctx.Done():
		a.log.Info("shutting down", "reason", context.Cause(a.ctx).Error())
		return exitOK
	case err := <-serveErr:
		// Serve only returns on its own if the listener broke; hand the
		// error back for the http stopper to report.
		serveErr <- err
		a.log.Error("server stopped unexpectedly", "error", err)
		return exitFailure
	case err := <-httpsErr:
		httpsErr <- err
		a.log.Error("HTTPS server stopped unexpectedly", "error", err)
		return exitFailure
	}
}

// startError is a step of the start that failed: msg says which, as the
// log record's message.
type startError struct {
	msg string
	err error
}

func (e *startError) Error() string { return e.msg + ": " + e.err.Error() }
func (e *startError) Unwrap() error { return e.err }

func failed(msg string, err error) error { return &startError{msg: msg, err: err} }

// startNode builds the node's parts in the order they depend on each
// other, starts those that run, and registers each stop with lc. Its order
// of registration is the reverse of the graceful stop's (see lifecycle).
// The parts every other one shares (the link cache, the password hasher,
// the dashboards' feed of link writes) come first; each later part is
// handed what it calls, so that nothing needs the web server, which comes
// last.
func (a *app) startNode(lc *lifecycle) (id string, handler *web.Server, err error) {
	// First, so that a wrong --geoip-db stops the start before anything
	// else is opened; closed last, after HTTP.
	classifier, err := a.newClassifier(lc)
	if err != nil {
		return "", nil, failed("cannot open geoip database (--geoip-db)", err)
	}
	// The outbox writes of this node wake its scheduler at once, and on a
	// cluster the other nodes' through the bus (webhook.Announce): the
	// store tells deliveriesDue, the scheduler listens on schedDue, which
	// the bus's handler tells of the other nodes' deliveries.
	deliveriesDue, schedDue := new(wake.Hook), new(wake.Hook)
	st, registry, hub, err := a.openNodeStore(lc, deliveriesDue)
	if err != nil {
		return "", nil, err
	}
	targets, err := a.startBlocklist(lc, st)
	if err != nil {
		return "", nil, failed("cannot load the target blocklist (--blocklist)", err)
	}
	journal, id, err := a.openJournal(lc)
	if err != nil {
		return "", nil, err
	}
	shared, err := a.newShared(st, hub, registry)
	if err != nil {
		return "", nil, err
	}
	cl, err := a.newCluster(lc, st, id, hub, shared, registry, schedDue)
	if err != nil {
		return "", nil, err
	}
	counter, err := a.startCounter(lc, st, journal, id, cl.live, registry)
	if err != nil {
		return "", nil, err
	}
	if err := hub.Start(a.ctx); err != nil {
		return "", nil, failed("cannot start live dashboards", err)
	}
	// Stopped after HTTP, whose Shutdown leaves hijacked WebSocket
	// connections alone, and before the counter: its last deltas then
	// reach nobody, which is fine.
	lc.add("dashboard", componentStopBudget, hub.Stop)
	shared.targets = targets
	shared.checker = a.safetyChecker(targets)
	shared.health = health.New(health.Config{AllowPrivate: a.cfg.WebhookAllowPrivate})
	sched, stopSched, err := a.newScheduler(st, schedDue, id, hub, shared, cl, registry)
	if err != nil {
		return "", nil, err
	}
	deliveriesDue.Set(webhook.Announce(schedDue.Tell, cl.deliveries()))
	quotas, err := a.startQuotas(lc, st, counter, registry)
	if err != nil {
		return "", nil, err
	}
	if a.front, err = a.newTLSFront(lc, st, id, registry); err != nil {
		return "", nil, err
	}
	if handler, err = a.newWebServer(st, counter, hub, sched, cl, shared, quotas, classifier, registry, targets); err != nil {
		return "", nil, failed("cannot build web server", err)
	}
	a.startBackground(shared)
	if err := a.startRunning(lc, cl, sched, stopSched); err != nil {
		return "", nil, err
	}
	return id, handler, nil
}

// openNodeStore opens the store (stopped last), records the instance settings
// the commands read, and makes the metrics registry and the live
// dashboards' hub: the tenants' live dashboards, to which the counter
// hands its live deltas and HTTP the WebSocket upgrades of /api/v1/live;
// a session's feed closes when the session ends.
func (a *app) openNodeStore(lc *lifecycle, deliveriesDue *wake.Hook) (store, *prometheus.Registry, *dashboard.Hub, error) {
	st, err := a.openStore(deliveriesDue)
	if err != nil {
		return nil, nil, nil, failed("cannot open store", err)
	}
	lc.add("store", 0, func(context.Context) error { return st.Close() })
	// For the commands run beside this server (instance.go); on a
	// cluster, the last node started says.
	if err := st.SetInstanceSettings(a.ctx, a.instanceValues()); err != nil {
		return nil, nil, nil, failed("cannot store the instance settings", err)
	}
	registry := prometheus.NewRegistry()
	if err := registerBuildInfo(registry, readBuildInfo()); err != nil {
		return nil, nil, nil, failed("cannot register metrics", err)
	}
	hub, err := dashboard.New(dashboard.Config{Logger: a.log, Registerer: registry, Tokens: people.FeedChecker{Store: st}})
	if err != nil {
		return nil, nil, nil, failed("cannot create live dashboards", err)
	}
	return st, registry, hub, nil
}

// shared are the parts the others are built on: the redirect path's link
// cache (which the writers, the expiry alarms and the bus invalidate), the
// password hasher and its slots (link creates and unlocks), the
// dashboards' feed of link writes, and the visitor hasher (A/B variants,
// and its daily key job).
type shared struct {
	cache     *linkcache.Cache
	passwords *password.Hasher
	feed      *links.Feed
	addresses links.Addresses
	visitors  *visitor.Hasher
	// verifier is the domains' verification, built with the scheduler
	// whose work it is.
	verifier *domain.Verifier
	// targets is the target policy; flag the links service's SetUnsafe,
	// set once it is built: the target check's (safety.go).
	targets *blocklist.Files
	checker *safety.Checker
	health  *health.Checker
	flag    lateFlagger
}

// expired is the expiry alarms' hook of this node's cache: the link's
// cached copy, which has no expired_at yet, is dropped. The redirect path
// refuses an expired link from its cached copy anyway; this keeps the
// copy's expired_at, and any later change, current.
func (sh *shared) expired(_ context.Context, l linkforge.Link) error {
	sh.cache.Invalidate(l.DomainID, l.Slug)
	return nil
}

func (a *app) newShared(st store, hub *dashboard.Hub, registry prometheus.Registerer) (*shared, error) {
	cache, err := linkcache.New(linkcache.Config{Store: st, Bytes: a.cfg.LinkCacheBytes,
		SelfHosts: []string{linkforge.SelfHost(a.cfg.PublicURL)}, Registerer: registry, Logger: a.log})
	if err != nil {
		return nil, failed("cannot create link cache", err)
	}
	addresses := links.Addresses{Public: a.cfg.PublicURL, Hosts: cache}
	return &shared{cache: cache, passwords: password.NewHasher(password.Params{}), addresses: addresses,
		feed: links.NewFeed(hub, st, addresses.Base, a.log), visitors: visitor.NewHasher(st, time.Now, a.log)}, nil
}

// startBackground starts what keeps the process's memory in shape.
func (a *app) startBackground(sh *shared) {
	// Gives a burst's memory back once it is over (memory.go).
	go newMemoryReturn(a.log, func() (kept, dropped int) {
		return sh.cache.Compact(time.Now().Add(-linkcache.CompactKeep))
	}).run(a.ctx)
	// Keeps a burst's heap goal near its live heap (memory.go). GOGC and
	// GOMEMLIMIT are the Go runtime's own variables, read here only to
	// leave an operator's setting of them alone.
	if p := newGCPacer(a.log, a.cfg.GCHeadroom, os.Getenv); p != nil {
		go p.run(a.ctx)
	}
}

// startRunning starts the cluster bus and the scheduler, once every part
// they call exists.
func (a *app) startRunning(lc *lifecycle, cl clusterParts, sched *schedule.Scheduler, stopSched func(context.Context) error) error {
	if cl.bus != nil {
		// Listening once Start returns: every event another node sends
		// from now on reaches this one.
		if err := cl.bus.Start(a.ctx); err != nil {
			return failed("cannot start cluster bus", err)
		}
	}
	if err := sched.Start(a.ctx); err != nil {
		return failed("cannot start scheduler", err)
	}
	// Stopped after HTTP and before the store its alarms live in.
	// The deliveries in flight share its budget; those cut are taken over
	// when their lease expires.
	lc.add("expiry", expiryStopBudget, stopSched)
	return nil
}

// openJournal opens the node journal, where every click is durable before
// its 302 leaves, and resolves the node's id it keeps (--node-id wins):
// the bus and the counter both need it.
func (a *app) openJournal(lc *lifecycle) (*clicklog.Journal, string, error) {
	opts := []clicklog.Option{clicklog.WithSync(clicklog.SyncEveryCommit), clicklog.WithLogger(a.log)}
	if a.cfg.JournalSync == "normal" {
		// Write only, and an fdatasync behind the commits every 100 ms:
		// a power loss costs at most that much (--journal-sync).
		opts = append(opts, clicklog.WithSync(clicklog.SyncWriteOnly), clicklog.WithBackgroundSync(clicklog.DefaultBackgroundSync))
	}
	journal, err := clicklog.Open(a.ctx, a.cfg.DataDir, opts...)
	if err != nil {
		return nil, "", failed("cannot open click journal", err)
	}
	lc.add("journal", 0, func(context.Context) error { return journal.Close() })
	// The counter resolves the id again from the journal, which then
	// holds it: the same id, nothing written twice.
	id, _, err := journal.NodeID(a.ctx, a.cfg.NodeID)
	if err != nil {
		return nil, "", failed("cannot create click counter", fmt.Errorf("linkcounter: %w", err))
	}
	return journal, id, nil
}

// clusterParts is what the node's parts are given of the cluster: the counter's
// live subscriber, the expiry hooks that tell the other nodes, and the bus
// (nil on SQLite).
type clusterParts struct {
	live  linkcounter.Subscriber
	hooks []expiry.Hook
	bus   clusterBus
	// peers is this node's side of the cluster feed: it tells the other
	// nodes of link and domain writes; nil on SQLite.
	peers *clusterfeed.Local
}

// deliveries is what tells the other nodes of webhook deliveries; nil on
// one node.
func (c clusterParts) deliveries() linkforge.DeliveryPublisher {
	if c.bus == nil {
		return nil
	}
	return c.bus
}

// webPeers is peers as web's (nil stays a nil interface).
func (c clusterParts) webPeers() web.Peers {
	if c.peers == nil {
		return nil
	}
	return c.peers
}

// invalidateHost drops a domain's host from this node's table and tells
// the other nodes: a domain was written (a verification).
func (c clusterParts) invalidateHost(cache *linkcache.Cache) func(linkforge.Domain) {
	return func(d linkforge.Domain) {
		cache.InvalidateHost(d.Host)
		if c.peers != nil {
			c.peers.InvalidateHost(d.Host)
		}
	}
}

// clusterBus is the bus a node of a cluster runs (--bus): *postgres.Bus
// or *natsbus.Bus, which pass the same conformance suite.
type clusterBus interface {
	linkforge.Bus
	linkforge.DeliveryPublisher
	Start(context.Context) error
	Stop(context.Context) error
	Healthy() bool
}

// newCluster joins the nodes that share a PostgreSQL store: the cluster
// feed sits between the counter and the dashboards, and the bus joins the
// nodes (docs/adr/004-scale-out.md). On SQLite there is one node and
// neither exists: the counter feeds hub directly.
func (a *app) newCluster(lc *lifecycle, st store, id string, hub *dashboard.Hub, sh *shared,
	registry prometheus.Registerer, schedDue *wake.Hook) (clusterParts, error) {
	pg, clustered := st.(*postgres.DB)
	if !clustered {
		if a.cfg.Bus != busPostgres {
			a.log.Warn("--bus is unused on SQLite: one node, no cluster bus", "bus", a.cfg.Bus)
		}
		return clusterParts{live: hub}, nil
	}
	feed := clusterfeed.New(clusterfeed.Config{Hub: hub, Cache: sh.cache, Links: sh.feed, Deliveries: schedDue.Tell, Logger: a.log})
	var (
		bus clusterBus
		err error
	)
	kind := "postgres"
	if a.cfg.Bus == busPostgres {
		bus, err = postgres.NewBus(pg, postgres.BusConfig{Node: id, Handler: feed, Logger: a.log, Registerer: registry})
	} else {
		kind = "nats"
		nc := a.cfg.NATS.busConfig(a.cfg.Bus)
		nc.Node, nc.Handler, nc.Logger, nc.Registerer = id, feed, a.log, registry
		bus, err = natsbus.New(nc)
	}
	if err != nil {
		return clusterParts{}, failed("cannot create cluster bus", err)
	}
	// Started once the web server whose cache it invalidates exists;
	// stopped after the counter and the expiry alarms, whose last events
	// it sends, and before the store whose connections it uses.
	lc.add("bus", componentStopBudget, bus.Stop)
	a.log.Info("cluster bus", "bus", kind, "node_id", id)
	// The cache revalidates sooner while this node does not hear the
	// others.
	sh.cache.SetPeerHealth(bus)
	local := feed.Local(id, bus)
	return clusterParts{live: local, hooks: []expiry.Hook{local.PublishExpired}, bus: bus, peers: local}, nil
}

// startCounter starts the click counter, which feeds live.
func (a *app) startCounter(lc *lifecycle, st store, journal *clicklog.Journal, id string,
	live linkcounter.Subscriber, registry prometheus.Registerer) (*linkcounter.Counter, error) {
	counter, err := linkcounter.New(a.ctx, linkcounter.Config{
		Store:         st,
		Journal:       journal,
		NodeID:        id,
		FlushInterval: a.cfg.FlushInterval,
		Logger:        a.log,
		Registerer:    registry,
		Subscriber:    live,
	})
	if err != nil {
		return nil, failed("cannot create click counter", err)
	}
	if err := counter.Start(a.ctx); err != nil {
		return nil, failed("cannot start click counter", err)
	}
	// Stopped after HTTP (no more clicks) and before the store it flushes
	// into: Stop flushes every counter.
	lc.add("counter", counterFlushBudget, counter.Stop)
	return counter, nil
}

// newScheduler builds the node's scheduler of due work: the link expiry
// alarms (this node's cache drops the link, the dashboards show it, and on
// a cluster the other nodes hear of it: the alarm runs on one node), the
// webhook deliveries, the domain verifications, the visitor keys' daily
// job and retention. due is the hook it listens on for due deliveries
// (this node's and, on a cluster, the others'); the deliveries given back
// past this node's caps are told to the other nodes. stop stops it and
// the deliveries.
func (a *app) newScheduler(st store, due *wake.Hook, id string, hub *dashboard.Hub, sh *shared, cl clusterParts,
	registry prometheus.Registerer) (*schedule.Scheduler, func(context.Context) error, error) {
	peers := cl.deliveries()
	cfg := webhook.Config{
		Store:        st,
		AllowPrivate: a.cfg.WebhookAllowPrivate,
		Logger:       a.log,
		Registry:     registry,
	}
	if peers != nil {
		// Deliveries given back past this node's caps: another node may
		// have room for them now.
		cfg.Released = peers.PublishDeliveries
	}
	deliveries, err := webhook.New(cfg)
	if err != nil {
		return nil, nil, failed("cannot create webhook dispatcher", err)
	}
	retain, err := a.retentionJob(st, registry)
	if err != nil {
		return nil, nil, err
	}
	verifier, err := domain.NewVerifier(domain.VerifierConfig{Store: st, Mode: a.cfg.DomainVerify,
		AllowPrivate: a.cfg.WebhookAllowPrivate, Changed: cl.invalidateHost(sh.cache), Logger: a.log, Now: time.Now})
	if err != nil {
		return nil, nil, failed("cannot create domain verifier", err)
	}
	sh.verifier = verifier
	alarms, err := expiry.New(expiry.Config{Store: st, OnExpired: append([]expiry.Hook{sh.expired, hub.Expired}, cl.hooks...),
		Logger: a.log, Registry: registry})
	if err != nil {
		return nil, nil, failed("cannot create expiry alarms", err)
	}
	// The alarms first: their claim comes first, their run last.
	work := []schedule.Work{alarms, deliveries, verifier, sh.visitors, retain}
	check, err := a.safetyJob(st, sh.checker, &sh.flag)
	if err != nil {
		return nil, nil, err
	}
	if check != nil {
		work = append(work, check)
	}
	healthJob, err := a.healthJob(st, sh.health)
	if err != nil {
		return nil, nil, err
	}
	if healthJob != nil {
		work = append(work, healthJob)
	}
	sched, err := schedule.New(schedule.Config{
		Owner:    id,
		Logger:   a.log,
		Registry: registry,
		Work:     work,
		Wake:     due,
	})
	if err != nil {
		return nil, nil, failed("cannot create scheduler", err)
	}
	stop := func(ctx context.Context) error {
		err := errors.Join(sched.Stop(ctx), deliveries.Close(ctx))
		retain.Close()
		if check != nil {
			check.Close()
		}
		if healthJob != nil {
			healthJob.Close()
		}
		return err
	}
	return sched, stop, nil
}

// startQuotas starts the tenant quotas: the usage GET /api/v1/tenant
// answers, and the over-quota gauge (registered now, refreshed every
// minute).
func (a *app) startQuotas(lc *lifecycle, st store, counter *linkcounter.Counter,
	registry prometheus.Registerer) (*quota.Service, error) {
	quotas, err := quota.New(quota.Config{Store: st, Counter: counter, Registerer: registry, Logger: a.log})
	if err != nil {
		return nil, failed("cannot create tenant quotas", err)
	}
	quotas.Start(a.ctx)
	lc.add("quota", componentStopBudget, quotas.Stop)
	return quotas, nil
}

// newWebServer builds the HTTP handler: the redirects, the admin API and
// the dashboards, on the domain and link services built here.
func (a *app) newWebServer(st store, counter *linkcounter.Counter, hub *dashboard.Hub, sched *schedule.Scheduler,
	cl clusterParts, sh *shared, quotas *quota.Service, classifier *classify.Classifier,
	registry *prometheus.Registry, targets *blocklist.Files) (*web.Server, error) {
	// No bus (nil) must not become a non-nil interface of another type.
	var peerHealth linkcache.PeerHealth
	if cl.bus != nil {
		peerHealth = cl.bus
	}
	domains, err := domain.New(domain.Config{Store: st, PublicHost: a.cfg.PublicURL.Hostname(),
		SelfHosts: []string{linkforge.SelfHost(a.cfg.PublicURL)}, Verify: a.cfg.DomainVerify, Changed: cl.invalidateHost(sh.cache),
		Now: time.Now, Wake: sched.Reschedule, MaxPerTenant: a.cfg.MaxDomainsPerTenant,
		AllowPublicSubdomains: a.cfg.AllowPublicSubdomains})
	if err != nil {
		return nil, fmt.Errorf("domains: %w", err)
	}
	lc := links.Config{Store: st, Hasher: sh.passwords, Cache: sh.cache, Publisher: sh.feed, Alarms: sched,
		SelfHostsOf: sh.cache.LoopHosts, ShortBase: links.ShortBase(a.cfg.PublicURL), BaseOf: sh.addresses.Base,
		Domain: domains.ResolveID, Targets: targets, SchemesOf: st.TargetSchemes,
		Retention: links.Retention{Minutes: a.cfg.Retention.Minutes, Hours: a.cfg.Retention.Hours}}
	if sh.checker != nil && sh.checker.DNS != nil {
		lc.Threats = sh.checker
	}
	if cl.peers != nil {
		lc.Peers = cl.peers
	}
	linkService, err := links.New(lc)
	if err != nil {
		return nil, err
	}
	sh.flag.set = linkService.SetUnsafe
	return web.New(web.Config{
		Store:      st,
		Counter:    counter,
		Exhaustion: counter,
		Skips:      counter,
		Readiness:  counter,
		TLS:        a.front.readiness(),
		// The domains' tls field: off with --tls off (a nil front).
		TLSHostState: func(host string) string { return string(a.front.HostState(host)) },
		PublicURL:    a.cfg.PublicURL,
		Logger:       a.log,
		Registry:     registry,
		Now:          time.Now,
		Live:         hub,
		Alarms:       sched,
		Peers:        cl.webPeers(),
		PeerHealth:   peerHealth,
		Cache:        sh.cache,
		Passwords:    sh.passwords,
		Links:        linkService,
		Domains:      domains,
		Verifier:     sh.verifier,
		Quota:        quotas,
		RateLimit:    a.cfg.RateLimit,
		RateBurst:    a.cfg.RateBurst,

		RootURL:       a.cfg.RootURL,
		NotFoundURL:   a.cfg.NotFoundURL,
		RobotsAllow:   a.cfg.RobotsAllow,
		AbuseContact:  a.cfg.AbuseContact,
		ReportWebhook: a.reportWebhook(),
		Health:        sh.health,
		Targets:       targets,

		WebhookAllowPrivate: a.cfg.WebhookAllowPrivate,
		DomainVerify:        a.cfg.DomainVerify,
		MaxDomainsPerTenant: a.cfg.MaxDomainsPerTenant,
		AdminOnDomains:      a.cfg.AdminOnDomains,
		SessionTTL:          a.cfg.SessionTTL,
		SessionMaxAge:       a.cfg.SessionMaxAge,
		OIDC:                a.cfg.OIDC.login(),
		// The bulk route pushes this deadline forward as it hashes.
		WriteTimeout: defaultHTTPLimits.write,

		// Built once: the User-Agent trie and the country table are
		// loaded at start, not on the first click.
		Classifier: classifier,
		// A/B variants: sticky per visitor and day on every node.
		Visitors: sh.visitors,

		AllowPublicSubdomains: a.cfg.AllowPublicSubdomains,
	})
}

// serveHTTP serves handler on ln until the http stopper shuts it down. The
// channel receives what Serve returned.
func (a *app) serveHTTP(lc *lifecycle, ln net.Listener, handler http.Handler) chan error {
	srv := newHTTPServer(handler, a.log, defaultHTTPLimits)
	serveErr := make(chan error, 1)
	go func() { serveErr <- srv.Serve(ln) }()
	lc.add("http", httpDrainBudget, func(ctx context.Context) error {
		err := srv.Shutdown(ctx)
		if err != nil {
			// Out of time: cut the remaining connections rather than
			// hang, and go on with the steps after this one, which have
			// budgets of their own. Clicks of the requests cut never got
			// their 302: nothing acknowledged is lost.
			a.log.Warn("cutting connections still open after the drain budget", "budget", httpDrainBudget.String())
			srv.Close()
			err = nil
		}
		if serr := <-serveErr; serr != nil && !errors.Is(serr, http.ErrServerClosed) {
			return errors.Join(err, serr)
		}
		return err
	})
	return serveErr
}

// announce logs where the server listens and, for a person at a terminal,
// says it in words.
func (a *app) announce(addr, id string) {
	dashboard := a.cfg.PublicURL.String() + "/dashboard"
	a.log.Info("listening", append([]any{"addr", addr, "node_id", id, "public_url", a.cfg.PublicURL.String(),
		"dashboard", dashboard, "max_connections", a.cfg.MaxConnections}, append(readBuildInfo().logAttrs(), a.storeAttrs()...)...)...)
	if isTerminal(a.stderr) {
		// For a person at a terminal; log collectors get the line above.
		fmt.Fprintf(a.stderr, "LinkForge is listening on %s.\n"+
			"  Dashboard: %s\n"+
			"  Admin API token: linkforge token create --tenant NAME\n"+
			"    (from a source checkout: go run ./cmd/linkforge token create --tenant acme)\n",
			addr, dashboard)
	}
}

// isTerminal reports whether w is a terminal: the banner is for people, and
// would be a line of plain text among the JSON a log collector reads.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// newClassifier builds the click classifier of --trusted-proxies and
// --geoip-db. The database, if any, is closed by lc.
func (a *app) newClassifier(lc *lifecycle) (*classify.Classifier, error) {
	cfg := classify.Config{TrustedProxies: a.cfg.TrustedProxies}
	if a.cfg.GeoIPDB != "" {
		db, err := classify.OpenMMDB(a.cfg.GeoIPDB)
		if err != nil {
			return nil, err
		}
		lc.add("geoip database", 0, func(context.Context) error { return db.Close() })
		cfg.Countries = db
	}
	return classify.New(cfg), nil
}
