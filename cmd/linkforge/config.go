package main

import (
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net"
	"net/netip"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/dustin/go-humanize"
	"github.com/spf13/pflag"
	"golang.org/x/time/rate"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/classify"
	"github.com/linkforge/linkforge/domain"
)

// config is the whole configuration of one linkforge process. It is built
// once, here, from the command line and the environment, and passed down:
// no other package reads flags or environment variables.
type config struct {
	Addr          string
	DataDir       string
	DatabaseURL   string   // empty: embedded SQLite in DataDir
	PublicURL     *url.URL // absolute http(s), no trailing slash, query or fragment
	FlushInterval time.Duration
	NodeID        string // empty: the node journal generates one and keeps it
	LogFormat     string // "json" or "text"
	LogLevel      slog.Level
	JournalSync   string // "full" or "normal": whether the click log fdatasyncs each group commit
	// RateLimit and RateBurst are the admin API's per-token token bucket;
	// rate.Inf: no limit.
	RateLimit   rate.Limit
	RateBurst   int
	RootURL     string // where GET / redirects; empty: the dashboard
	NotFoundURL string // where unknown slugs redirect; empty: the 404 page
	// RobotsAllow and AbuseContact: /robots.txt and security.txt.
	RobotsAllow  bool
	AbuseContact string
	// Blocklists are the --blocklist files: the targets no link may
	// point to (package blocklist).
	Blocklists     []string
	MaxConnections int // open client connections at most; 0: no limit
	// TrustedProxies are the peers whose X-Forwarded-For names the client
	// (the country dimension); nil: the peer is always the client.
	TrustedProxies []netip.Prefix
	GeoIPDB        string // MaxMind-format .mmdb for countries; empty: the embedded table
	// WebhookAllowPrivate accepts webhook URLs on private addresses.
	WebhookAllowPrivate bool
	// DomainVerify is how tenants' new domains are verified.
	DomainVerify domain.VerifyMode
	// LinkCacheBytes bounds the bytes of the redirect cache's entries.
	LinkCacheBytes int
	// AdminOnDomains answers the admin routes on the domains too.
	AdminOnDomains bool
	// MaxDomainsPerTenant bounds a tenant's domains (1 or more).
	MaxDomainsPerTenant int
	// AllowPublicSubdomains lets tenants add subdomains of the public host.
	AllowPublicSubdomains bool
	// Bus is how the nodes on one PostgreSQL tell each other of clicks,
	// link writes and expiries: busPostgres, or a NATS URL.
	Bus string
	// NATS is the NATS bus's credentials and TLS (busnats.go).
	NATS natsAuthConfig
	// TLS is --tls and its flags (tls.go).
	TLS tlsConfig
	// SessionTTL ends a dashboard sign-in session unused that long.
	SessionTTL time.Duration
	// SessionMaxAge ends a dashboard sign-in session that long after it
	// began, however used.
	SessionMaxAge time.Duration
	// Retention is the retention flags (retention.go).
	Retention retentionConfig
	// Safety is the threat check's flags (safety.go).
	Safety safetyConfig
	// OIDC is single sign-on's flags (oidc.go).
	OIDC oidcConfig
	// GCHeadroom is --gc-headroom in bytes; 0: the collector's own pacing
	// (memory.go).
	GCHeadroom uint64
	// given names, by flag, where each instance setting given to this
	// process came from; the settings not in it are serve's, once the
	// database is open (instance.go).
	given map[string]string
}

// usesPostgres reports whether the main store is PostgreSQL.
func (c config) usesPostgres() bool { return c.DatabaseURL != "" }

// invocation is a parsed command line: which command runs, with what.
type invocation struct {
	cmd    *command
	cfg    config
	tenant string         // token create, token list, import, export
	name   string         // token create
	role   linkforge.Role // token create, user add; empty: owner
	email  string         // user commands
	// operator: user add --operator makes the user an operator.
	operator bool
	format   string // import, export
	// domain add: the app-link documents read from --aasa and
	// --asset-links; nil: none.
	aasa, assetLinks []byte
	quota            linkforge.QuotaChange // tenant quota: the limits given
	args             []string
	// backup and restore (backup.go)
	out   string
	force bool
	from  string
	link  linkOptions // link commands (linkcmd.go)
	// import's --domain-map (porting.ParseDomainMap)
	domainMap map[string]string
	// import's --slug, the link of a per-visit file's lines
	slug string
}

// flagSpec describes one flag. Every flag has an environment variable,
// derived from its name, so that containers can be configured without a
// command line (linkforge serve --help lists both).
type flagSpec struct {
	name  string // without the leading dashes
	arg   string // placeholder in the help text
	def   string
	usage string
}

// env returns the flag's environment variable: LINKFORGE_<UPPER_SNAKE>.
func (f flagSpec) env() string {
	return "LINKFORGE_" + strings.ToUpper(strings.ReplaceAll(f.name, "-", "_"))
}

// The defaults of the flags, as linkforge serve --help shows them.
const (
	defaultAddr          = ":8080"
	defaultDataDir       = "./linkforge-data"
	defaultPublicURL     = "http://localhost:8080"
	defaultFlushInterval = "30s"
	defaultLogFormat     = "json"
	defaultLogLevel      = "info"
	defaultJournalSync   = "full"
	defaultRateLimit     = "20/s:40"
	// defaultMaxConnections leaves room for thousands of dashboard
	// WebSockets (each holds a connection) besides the redirect traffic,
	// and stays far below the file descriptor limit Go raises itself to.
	defaultMaxConnections = "20000"
)

// globalFlags are accepted by every command, before or after its name.
var globalFlags = []flagSpec{
	{"addr", "ADDR", defaultAddr, "listen address"},
	{"data-dir", "DIR", defaultDataDir, "node journal, and the SQLite database when no database URL is given"},
	{"database-url", "URL", "", "empty: embedded SQLite in the data dir; postgres://...: PostgreSQL"},
	{"public-url", "URL", defaultPublicURL, "base of the short URLs the API returns"},
	{"flush-interval", "DURATION", defaultFlushInterval, "LinkCounter debounce: time from the first unflushed click to its flush"},
	{"node-id", "ID", "", "this node's id in the rollup (empty: generated once, kept in the journal)"},
	{"log-format", "FORMAT", defaultLogFormat, "json or text"},
	{"log-level", "LEVEL", defaultLogLevel, "debug, info, warn or error"},
	{"journal-sync", "MODE", defaultJournalSync, "click log durability: full (fdatasync per group commit: an acknowledged click survives a power loss) or normal (write, and fdatasync in the background every 100 ms: survives a process crash; a power loss costs at most the last 100 ms of clicks; docs/adr/014-click-log.md)"},
	{"rate-limit", "RATE", defaultRateLimit, "admin API requests per token: N/s or N/m, optionally :BURST (default burst N); 0: no limit"},
	{"root-url", "URL", "", "where GET / redirects: an absolute http(s) URL or a path (empty: /dashboard)"},
	{"not-found-url", "URL", "", "where unknown slugs redirect (302): an absolute http(s) URL or a path (empty: the 404 page)"},
	{"robots-allow", "", "false", "/robots.txt allows every crawler (default: disallows all)"},
	{"abuse-contact", "URI", "", "Contact of /.well-known/security.txt: a mailto: or https URI (empty: 404)"},
	{"blocklist", "FILE", "", "a file of targets no link may point to (domains, hosts-file lines, URLhaus CSV, PhishTank CSV or JSON; reloaded when it changes); repeat for several (the variable: comma-separated)"},
	{"max-connections", "N", defaultMaxConnections, "open client connections at most (WebSockets included); more wait to be accepted; 0: no limit"},
	{"admin-on-domains", "", "false", "answer the sign-in pages, the dashboard and the admin API on the tenants' domains too (by default on the public URL's host only; a domain serves its links, its root and not-found URLs and its verification)"},
	{"link-cache-bytes", "SIZE", "256MiB", "memory the redirect cache's links may take (a link with many rules and variants takes a few hundred KB, a plain one under 1 KB); the least recently used go past it"},
	{"max-domains-per-tenant", "N", strconv.Itoa(domain.DefaultMaxPerTenant), "domains a tenant may have at most (API and domain add answer quota_exceeded past it): each costs verification attempts and a certificate order"},
	{"trusted-proxies", "CIDRS", "", "comma-separated CIDRs (or addresses) of the reverse proxies in front; only from these peers is X-Forwarded-For taken as the client address (rightmost untrusted hop); empty: the peer is the client"},
	{"geoip-db", "FILE", "", "MaxMind-format .mmdb (GeoLite2 or DB-IP, country or city) for the country of clicks; empty: the embedded IP2Location LITE table"},
	{"webhook-allow-private", "", "false", "allow webhook URLs, and --domain-verify http fetches, on loopback/private/link-local addresses (refused by default)"},
	{"domain-verify", "MODE", "dns", "how tenants' domains are verified: dns (the TXT record _linkforge.HOST must hold the domain's verification_token: proof the tenant controls the domain), http (the server fetches http://HOST/.well-known/linkforge-domain/ID and expects its own answer: proof only that the DNS reaches this server, for single-team installs) or none (verified at once); a domain pending 7 days is deleted"},
	{"allow-public-subdomains", "", "false", "let tenants add subdomains of the public URL's host (refused by default)"},
	{"bus", "BUS", busPostgres, "how the nodes on one PostgreSQL tell each other of clicks, link writes and expiries: postgres (LISTEN/NOTIFY) or a NATS URL nats://host:4222 (comma-separated for a NATS cluster; docs/adr/004-scale-out.md); unused on SQLite"},
	{"session-ttl", "DURATION", "168h", "a dashboard sign-in session ends after this long without use"},
	{"session-max-age", "DURATION", "720h", "a dashboard sign-in session ends this long after the sign-in, however used"},
	{"gc-headroom", "SIZE", defaultGCHeadroom, "once the live heap is larger than this, the Go runtime's soft memory limit follows it at the live heap plus this much, so that the process grows by about this rather than doubling its heap (a burst's memory for GC CPU; docs/performance.md); 0: Go's own pacing; off when GOGC or GOMEMLIMIT is set"},
}

// busPostgres is --bus's default: the cluster bus on the database's
// LISTEN/NOTIFY.
const busPostgres = "postgres"

var (
	tenantFlag = flagSpec{"tenant", "NAME", "", "the tenant (token create makes it if needed)"}
	nameFlag   = flagSpec{"name", "LABEL", "", "a label for the token, shown by token list"}
	roleFlag   = flagSpec{"role", "ROLE", "owner", "token create, user add: the role in the tenant: owner, editor or viewer"}
	emailFlag  = flagSpec{"email", "E", "", "user add, user remove, user reset-password: the user's email"}
	// operatorFlag: user add --operator (the role above tenants).
	operatorFlag = flagSpec{"operator", "", "false", "user add: also make the user an operator (/api/v1/operator/*)"}
	// formatFlag is the file format of import and export (package porting).
	formatFlag = flagSpec{"format", "FORMAT", "", "import: csv, json, yourls, shlink, bitly, dub, kutt, rebrandly, or the visits of shlink-visits, yourls-log, dub-events (required); export: csv (default) or json"}
	// The tenant quotas (ADR 016): N (0: none allowed) or none (no limit);
	// not given: unchanged.
	maxLinksFlag = flagSpec{"max-links", "N|none", "", "the tenant's link quota: N links at most (0: none allowed), or none; not given: unchanged"}
	// The app-link documents of domain add (docs/domains.md, "Deep links").
	aasaFlag       = flagSpec{"aasa", "FILE", "", "domain add: apple_app_site_association (JSON object file)"}
	assetLinksFlag = flagSpec{"asset-links", "FILE", "", "domain add: asset_links (JSON array file)"}
	maxClicksFlag  = flagSpec{"max-clicks-per-month", "N|none", "", "the tenant's clicks per UTC month it may exceed only as reported (links keep redirecting), or none; not given: unchanged"}
)

// command is one subcommand. Its flags come on top of globalFlags.
type command struct {
	name     string // as typed: "serve", "token create"
	synopsis string
	summary  string
	flags    []flagSpec
	nargs    int // exact number of positional arguments
	run      func(*app, invocation) int
	// extra registers flags that are not plain strings with an
	// environment variable (booleans, repeatable ones) on the command's
	// flag set, and returns what checks them into the invocation once
	// parsed; nil: none (linkcmd.go).
	extra func(fs *pflag.FlagSet) func(inv *invocation, value func(flagSpec) (v, source string)) error
}

// commands lists the subcommands in the order the help shows them. run is
// filled in init to break the initialization cycle with the help printer.
var commands = []*command{
	{name: "serve", synopsis: "linkforge [serve]", summary: "run the server (the default command)"},
	{name: "migrate", synopsis: "linkforge migrate", summary: "apply database migrations and exit"},
	{name: "token create", synopsis: "linkforge token create --tenant NAME [--name LABEL] [--role owner|editor|viewer]",
		summary: "create the tenant if needed, print a new API token on stdout (only the token, one line)",
		flags:   []flagSpec{tenantFlag, nameFlag, roleFlag}},
	{name: "token list", synopsis: "linkforge token list --tenant NAME",
		summary: "list a tenant's tokens: id, name, role, display prefix, created, revoked",
		flags:   []flagSpec{tenantFlag}},
	{name: "token revoke", synopsis: "linkforge token revoke ID", summary: "revoke a token; the API refuses it at once", nargs: 1},
	{name: "import", synopsis: "linkforge import --tenant NAME --format FORMAT FILE",
		summary: "import links from FILE (- for stdin) into the tenant (created if needed), or their visits (shlink-visits, yourls-log, dub-events) into their stats; prints the summary as JSON; exit 1 if a line failed",
		flags:   []flagSpec{tenantFlag, formatFlag}, nargs: 1, extra: importExtra},
	{name: "export", synopsis: "linkforge export --tenant NAME [--format csv|json]",
		summary: "write every link of the tenant to stdout, as CSV (default) or JSON",
		flags:   []flagSpec{tenantFlag, formatFlag}},
	{name: "backup", synopsis: "linkforge backup --out FILE [--force]",
		summary: "write a consistent copy of the embedded SQLite database to FILE while the server runs; prints its summary as JSON (PostgreSQL: use pg_dump)",
		flags:   []flagSpec{outFlag, forceFlag}},
	{name: "restore", synopsis: "linkforge restore --from FILE",
		summary: "put a backup in place of the data dir's SQLite database (the server must be stopped); the old one is kept aside",
		flags:   []flagSpec{fromFlag}},
	// Link commands: clients of a running server's admin API (linkcmd.go).
	{name: "link create", synopsis: "linkforge link create --url URL [--slug S] [--title T] [--tag T]... [--expires-at TIME] [--max-clicks N] [--fallback-url URL] [--password P] [--notes TEXT] [--archive] [--valid-since TIME] [--find-if-exists] [routing flags] [--utm-source|medium|campaign|term|content TEXT]... [--json]", summary: "create a link; prints it", flags: linkFlags, extra: linkExtra("create")},
	{name: "link list", synopsis: "linkforge link list [--q TEXT] [--tag T]... [--state active|expired|disabled|blocked|all] [--archived false|true|all] [--sort -created|created|-clicks|clicks|slug] [--limit N] [--cursor C | --all] [--json]", summary: "list the tenant's links, newest first", flags: linkFlags, extra: linkExtra("list")},
	{name: "link get", synopsis: "linkforge link get SLUG [--json]", summary: "print one link", flags: linkFlags, extra: linkExtra("get"), nargs: 1},
	{name: "link update", synopsis: "linkforge link update SLUG [field flags as create, but --slug] [--clear FIELD]... [--json]", summary: "change a link; prints it", flags: linkFlags, extra: linkExtra("update"), nargs: 1},
	{name: "link delete", synopsis: "linkforge link delete SLUG", summary: "delete a link", flags: linkFlags, extra: linkExtra("delete"), nargs: 1},
	{name: "link stats", synopsis: "linkforge link stats SLUG [--from T] [--to T] [--interval minute|hour|day [--empty] | --by DIMENSION [--limit N]] [--json]", summary: "print a link's clicks over time (the intervals with clicks; --empty: all), or by country, referrer, device, browser, os, utm_source, variant or source", flags: linkFlags, extra: linkExtra("stats"), nargs: 1},
	{name: "link rename", synopsis: "linkforge link rename SLUG NEW [--json]", summary: "rename a link; the old slug keeps redirecting to it (an alias); prints it", flags: linkFlags, extra: linkExtra("rename"), nargs: 2},
	{name: "link qr", synopsis: "linkforge link qr SLUG --out FILE [--format png|svg] [--size PIXELS] [--fg COLOUR] [--bg COLOUR] [--ec L|M|Q|H] [--margin N] [--domain HOST]", summary: "write the link's QR code (its short URL with ?qr=1) to FILE (-: stdout); unset options follow the QR defaults", flags: linkFlags, extra: qrExtra("image"), nargs: 1},
	{name: "link share", synopsis: "linkforge link share SLUG [--expires TIME] [--password P] [--json]", summary: "share a link's stats on a read-only page; prints its URL (shown this once)", flags: linkFlags, extra: linkExtra("share"), nargs: 1},
	{name: "link shares", synopsis: "linkforge link shares SLUG [--json]", summary: "list a link's shares: id, created, expiry, password (never the URL)", flags: linkFlags, extra: linkExtra("shares"), nargs: 1},
	{name: "link unshare", synopsis: "linkforge link unshare SLUG ID [--json]", summary: "delete a link's share: its page answers 404", flags: linkFlags, extra: linkExtra("unshare"), nargs: 2},
	{name: "tag share", synopsis: "linkforge tag share TAG [--expires TIME] [--password P] [--json]", summary: "share the stats of the links carrying a tag, summed, on a read-only page; prints its URL", flags: linkFlags, extra: linkExtra("share"), nargs: 1},
	{name: "tag shares", synopsis: "linkforge tag shares TAG [--json]", summary: "list a tag's shares", flags: linkFlags, extra: linkExtra("shares"), nargs: 1},
	{name: "tag unshare", synopsis: "linkforge tag unshare TAG ID [--json]", summary: "delete a tag's share", flags: linkFlags, extra: linkExtra("unshare"), nargs: 2},
	{name: "tag rename", synopsis: "linkforge tag rename TAG NEW [--json]", summary: "rename a tag on every link carrying it (merging it into NEW where a link has both)", flags: linkFlags, extra: linkExtra("tag"), nargs: 2},
	{name: "tag delete", synopsis: "linkforge tag delete TAG [--json]", summary: "remove a tag from every link carrying it", flags: linkFlags, extra: linkExtra("tag"), nargs: 1},
	{name: "qr logo set", synopsis: "linkforge qr logo set FILE [--domain HOST] [--json]", summary: "set the tenant's (or the domain's) QR logo: PNG or SVG, at most 256 KiB", flags: linkFlags, extra: qrExtra("logo"), nargs: 1},
	{name: "qr logo delete", synopsis: "linkforge qr logo delete [--domain HOST] [--json]", summary: "remove the tenant's (or the domain's) QR logo", flags: linkFlags, extra: qrExtra("logo")},
	{name: "qr defaults", synopsis: "linkforge qr defaults [--fg COLOUR|none] [--bg COLOUR|none] [--ec L|M|Q|H|none] [--margin N|none] [--domain HOST] [--json]", summary: "print the tenant's (or the domain's) QR defaults, after setting those given (none: unset)", flags: linkFlags, extra: qrExtra("defaults")},
	{name: "utm-template list", synopsis: "linkforge utm-template list [--json]", summary: "list the tenant's UTM templates", flags: linkFlags, extra: utmExtra("list")},
	{name: "utm-template add", synopsis: "linkforge utm-template add NAME [--utm-source S] [--utm-medium M] [--utm-campaign C] [--utm-term T] [--utm-content C] [--json]", summary: "add a UTM template (a name in use is refused)", flags: linkFlags, extra: utmExtra("add"), nargs: 1},
	{name: "utm-template delete", synopsis: "linkforge utm-template delete ID", summary: "delete a UTM template; links keep their utm", flags: linkFlags, extra: utmExtra("delete"), nargs: 1},
	{name: "stats campaigns", synopsis: "linkforge stats campaigns [--from T] [--to T] [--traffic human|automated] [--json]", summary: "print the tenant's clicks by the links' utm campaign, source and medium", flags: linkFlags, extra: utmExtra("campaigns")},
	{name: "domain add", synopsis: "linkforge domain add --tenant NAME [--aasa FILE] [--asset-links FILE] HOST",
		summary: "add a domain of the tenant's own (go.acme.com); prints it as JSON; pending until verified (--domain-verify)",
		flags:   []flagSpec{tenantFlag, aasaFlag, assetLinksFlag}, nargs: 1},
	{name: "domain list", synopsis: "linkforge domain list --tenant NAME",
		summary: "list the tenant's domains as JSON: state, default, verification URL",
		flags:   []flagSpec{tenantFlag}},
	{name: "domain verify", synopsis: "linkforge domain verify --tenant NAME HOST",
		summary: "fetch the domain's verification URL now; prints it as JSON; exit 1 while it stays pending",
		flags:   []flagSpec{tenantFlag}, nargs: 1},
	{name: "domain remove", synopsis: "linkforge domain remove --tenant NAME HOST",
		summary: "remove a domain; refused while links are on it",
		flags:   []flagSpec{tenantFlag}, nargs: 1},
	{name: "tenant schemes set", synopsis: "linkforge tenant schemes set SCHEME[,SCHEME]...|none [--json]", summary: "set the extra schemes the token's tenant's link targets may use besides http(s) (mailto,tel,myapp; none: only http(s)); owners; prints them", flags: linkFlags, extra: linkExtra("tenant"), nargs: 1},
	{name: "tenant quota", synopsis: "linkforge tenant quota --tenant NAME [--max-links N|none] [--max-clicks-per-month N|none]",
		summary: "set the tenant's quotas (one given leaves the other), then print its usage as JSON (no limit flag: just print it)",
		flags:   []flagSpec{tenantFlag, maxLinksFlag, maxClicksFlag}},
	// Users (users.go): there is no mail server, the URLs are printed.
	{name: "user add", synopsis: "linkforge user add --tenant NAME --email E [--role owner|editor|viewer] [--operator]",
		summary: "make the user a member of the tenant (both created if needed), and with --operator an operator; prints the one-time URL that sets the password (24 h), or nothing for a user who has one",
		flags:   []flagSpec{tenantFlag, emailFlag, roleFlag, operatorFlag}},
	{name: "user list", synopsis: "linkforge user list --tenant NAME",
		summary: "list the tenant's users: id, email, role, last sign-in", flags: []flagSpec{tenantFlag}},
	{name: "user remove", synopsis: "linkforge user remove --tenant NAME --email E",
		summary: "take the user out of the tenant (not its last owner)", flags: []flagSpec{tenantFlag, emailFlag}},
	{name: "user reset-password", synopsis: "linkforge user reset-password --email E",
		summary: "print a one-time URL that sets the user's password (24 h); using it ends the user's sessions", flags: []flagSpec{emailFlag}},
	// The operator (operator.go).
	{name: "operator token create", synopsis: "linkforge operator token create [--name LABEL]",
		summary: "print a new operator token on stdout (only the token, one line): it reaches /api/v1/operator/* and no tenant's API",
		flags:   []flagSpec{nameFlag}},
	{name: "operator token revoke", synopsis: "linkforge operator token revoke ID",
		summary: "revoke an operator token (its id is in operator token create's log); the API refuses it at once", nargs: 1},
	{name: "healthcheck", synopsis: "linkforge healthcheck",
		summary: "exit 0 if the server at --addr answers GET /healthz with 200 (for container health checks)"},
	{name: "version", synopsis: "linkforge version",
		summary: "print the version, the commit and its date, and the Go version it was built with (also --version)"},
	// Made by cobra (its run stays nil): the script, and the hidden
	// command the script calls back.
	{name: "completion", synopsis: "linkforge completion bash|zsh|fish",
		summary: "print a shell completion script (for example: source <(linkforge completion bash))"},
}

func init() {
	runs := map[string]func(*app, invocation) int{
		"serve":                 (*app).serve,
		"migrate":               (*app).migrate,
		"token create":          (*app).tokenCreate,
		"token list":            (*app).tokenList,
		"token revoke":          (*app).tokenRevoke,
		"import":                (*app).importLinks,
		"export":                (*app).exportLinks,
		"backup":                (*app).backup,
		"restore":               (*app).restore,
		"tenant quota":          (*app).tenantQuota,
		"user add":              (*app).userAdd,
		"user list":             (*app).userList,
		"user remove":           (*app).userRemove,
		"user reset-password":   (*app).userResetPassword,
		"operator token create": (*app).operatorTokenCreate,
		"operator token revoke": (*app).operatorTokenRevoke,
		// domaincmd.go
		"domain add":    (*app).domainAdd,
		"domain list":   (*app).domainList,
		"domain verify": (*app).domainVerify,
		"domain remove": (*app).domainRemove,
		"healthcheck":   (*app).healthcheck,
		"link create":   (*app).linkCreate,
		"link list":     (*app).linkList,
		"link get":      (*app).linkGet,
		"link update":   (*app).linkUpdate,
		"link delete":   (*app).linkDelete,
		"link stats":    (*app).linkStats,
		"link rename":   (*app).linkRename,
		"tag rename":    (*app).tagRename,
		// qrcmd.go
		"link qr":        (*app).linkQR,
		"qr logo set":    (*app).qrLogoSet,
		"qr logo delete": (*app).qrLogoDelete,
		"qr defaults":    (*app).qrDefaults,
		"tag delete":     (*app).tagDelete,
		// utmcmd.go
		"utm-template list":   (*app).utmTemplateList,
		"utm-template add":    (*app).utmTemplateAdd,
		"utm-template delete": (*app).utmTemplateDelete,
		"stats campaigns":     (*app).statsCampaigns,
		"link share":          (*app).linkShare,
		"tag share":           (*app).tagShare,
		"link shares":         (*app).linkShares,
		"link unshare":        (*app).linkUnshare,
		"tag shares":          (*app).tagShares,
		"tag unshare":         (*app).tagUnshare,
		"tenant schemes set":  (*app).tenantSchemesSet,
		"version":             (*app).version,
	}
	for _, c := range commands {
		c.run = runs[c.name]
	}
}

func lookupCommand(name string) *command {
	for _, c := range commands {
		if c.name == name {
			return c
		}
	}
	return nil
}

// errHelp is returned by parseArgs when the user asked for a help text
// (or another text cobra prints itself, such as a completion script).
var errHelp = errors.New("help requested")

// errVersion is returned by parseArgs for --version: like the help, it
// needs no valid configuration.
var errVersion = errors.New("version requested")

// usageError is a mistake on the command line or in the environment: the
// process exits 2, the convention for bad usage.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error {
	return &usageError{msg: fmt.Sprintf(format, args...)}
}

// buildConfig validates the global flags' values into a config.
func buildConfig(value func(flagSpec) (string, string)) (config, error) {
	get := func(name string) (string, string) {
		for _, f := range globalFlags {
			if f.name == name {
				return value(f)
			}
		}
		panic("no global flag " + name) // a typo in this file
	}
	var cfg config

	addr, addrSource := get("addr")
	source := addrSource
	if _, port, err := net.SplitHostPort(addr); err != nil {
		return config{}, usagef("invalid %s %q: want host:port or :port", source, addr)
	} else if _, err := strconv.ParseUint(port, 10, 16); err != nil {
		return config{}, usagef("invalid %s %q: port must be a number from 0 to 65535", source, addr)
	}
	cfg.Addr = addr

	cfg.DataDir, source = get("data-dir")
	if cfg.DataDir == "" {
		return config{}, usagef("invalid %s: must not be empty", source)
	}

	dbURL, source := get("database-url")
	if dbURL != "" {
		u, err := url.Parse(dbURL)
		if err != nil {
			// url.Error quotes the whole URL, password included: keep it out.
			return config{}, usagef("invalid %s: not a URL", source)
		}
		if u.Scheme != "postgres" && u.Scheme != "postgresql" {
			return config{}, usagef("invalid %s: scheme %q is not supported (want postgres:// or postgresql://, or empty for embedded SQLite)", source, u.Scheme)
		}
	}
	cfg.DatabaseURL = dbURL

	raw, source := get("public-url")
	if isDefault(source) {
		raw = followAddr(addr, addrSource, raw)
	}
	pub, err := parsePublicURL(raw)
	if err != nil {
		return config{}, usagef("invalid %s %q: %v", source, raw, err)
	}
	cfg.PublicURL = pub

	raw, source = get("flush-interval")
	d, err := time.ParseDuration(raw)
	if err != nil {
		return config{}, usagef("invalid %s %q: not a duration (examples: 30s, 1m30s)", source, raw)
	}
	if d <= 0 {
		return config{}, usagef("invalid %s %q: must be positive", source, raw)
	}
	cfg.FlushInterval = d

	cfg.NodeID, source = get("node-id")
	if cfg.NodeID != "" && !nodeIDPattern.MatchString(cfg.NodeID) {
		return config{}, usagef("invalid %s %q: want 1 to 64 of A-Z a-z 0-9 . _ : -", source, cfg.NodeID)
	}

	cfg.LogFormat, source = get("log-format")
	if cfg.LogFormat != "json" && cfg.LogFormat != "text" {
		return config{}, usagef("invalid %s %q: want json or text", source, cfg.LogFormat)
	}

	cfg.JournalSync, source = get("journal-sync")
	if cfg.JournalSync != "full" && cfg.JournalSync != "normal" {
		return config{}, usagef("invalid %s %q: want full or normal", source, cfg.JournalSync)
	}

	raw, source = get("log-level")
	if err := cfg.LogLevel.UnmarshalText([]byte(raw)); err != nil || !slices.Contains([]string{"debug", "info", "warn", "error"}, strings.ToLower(raw)) {
		return config{}, usagef("invalid %s %q: want debug, info, warn or error", source, raw)
	}

	raw, source = get("rate-limit")
	if cfg.RateLimit, cfg.RateBurst, err = parseRateLimit(raw); err != nil {
		return config{}, usagef("invalid %s %q: %v", source, raw, err)
	}

	if err := buildServeConfig(&cfg, get); err != nil {
		return config{}, err
	}
	cfg.given = givenInstanceFlags(get)
	return cfg, nil
}

// buildServeConfig validates the global flags only serve reads.
func buildServeConfig(cfg *config, get func(string) (string, string)) error {
	var raw, source string
	var err error
	for _, f := range []struct {
		name string
		dst  *string
	}{{"root-url", &cfg.RootURL}, {"not-found-url", &cfg.NotFoundURL}} {
		raw, source = get(f.name)
		if raw != "" {
			if err := checkRedirectURL(raw); err != nil {
				return usagef("invalid %s %q: %v", source, raw, err)
			}
		}
		*f.dst = raw
	}

	raw, source = get("robots-allow")
	if cfg.RobotsAllow, err = strconv.ParseBool(raw); err != nil {
		return usagef("invalid %s %q: want true or false", source, raw)
	}
	raw, source = get("abuse-contact")
	if raw != "" && !strings.HasPrefix(raw, "mailto:") && !strings.HasPrefix(raw, "https://") {
		return usagef("invalid %s %q: want mailto:ADDRESS or an https:// URL", source, raw)
	}
	if strings.ContainsAny(raw, "\r\n \t") {
		return usagef("invalid %s %q: one line", source, raw)
	}
	cfg.AbuseContact = raw

	raw, _ = get("blocklist")
	cfg.Blocklists = nil
	for _, p := range strings.FieldsFunc(raw, func(r rune) bool { return r == ',' || r == '\n' }) {
		if p = strings.TrimSpace(p); p != "" {
			cfg.Blocklists = append(cfg.Blocklists, p)
		}
	}

	raw, source = get("gc-headroom")
	if cfg.GCHeadroom, err = humanize.ParseBytes(raw); err != nil {
		return usagef("invalid %s %q: want a size such as 256MiB or 1GB, or 0", source, raw)
	}

	raw, source = get("max-connections")
	n, err := strconv.Atoi(raw)
	if err != nil || n < 0 {
		return usagef("invalid %s %q: want a number of connections, or 0 for no limit", source, raw)
	}
	cfg.MaxConnections = n

	raw, source = get("link-cache-bytes")
	cacheBytes, err := humanize.ParseBytes(raw)
	if err != nil || cacheBytes < 1<<20 || cacheBytes > math.MaxInt64 {
		return usagef("invalid %s %q: want a size of 1MiB or more, such as 256MiB or 1GB", source, raw)
	}
	cfg.LinkCacheBytes = int(cacheBytes)
	raw, source = get("admin-on-domains")
	if cfg.AdminOnDomains, err = strconv.ParseBool(raw); err != nil {
		return usagef("invalid %s %q: want true or false", source, raw)
	}
	raw, source = get("max-domains-per-tenant")
	if n, err = strconv.Atoi(raw); err != nil || n < 1 {
		return usagef("invalid %s %q: want a number of domains, 1 or more", source, raw)
	}
	cfg.MaxDomainsPerTenant = n

	raw, source = get("trusted-proxies")
	if cfg.TrustedProxies, err = classify.ParseTrustedProxies(raw); err != nil {
		return usagef("invalid %s %q: %v", source, raw, err)
	}
	// Opened by serve, which says so if the file is not a country database:
	// the other commands never read it.
	cfg.GeoIPDB, _ = get("geoip-db")

	raw, source = get("webhook-allow-private")
	if cfg.WebhookAllowPrivate, err = strconv.ParseBool(raw); err != nil {
		return usagef("invalid %s %q: want true or false", source, raw)
	}
	raw, source = get("domain-verify")
	if cfg.DomainVerify, err = domain.ParseVerifyMode(raw); err != nil {
		return usagef("invalid %s %q: want dns, http or none", source, raw)
	}
	raw, source = get("allow-public-subdomains")
	if cfg.AllowPublicSubdomains, err = strconv.ParseBool(raw); err != nil {
		return usagef("invalid %s %q: want true or false", source, raw)
	}
	raw, source = get("session-ttl")
	if cfg.SessionTTL, err = time.ParseDuration(raw); err != nil || cfg.SessionTTL <= 0 {
		return usagef("invalid %s %q: a positive duration (examples: 168h, 30m)", source, raw)
	}
	raw, source = get("session-max-age")
	if cfg.SessionMaxAge, err = time.ParseDuration(raw); err != nil || cfg.SessionMaxAge <= 0 {
		return usagef("invalid %s %q: a positive duration (examples: 720h, 24h)", source, raw)
	}

	cfg.Bus, source = get("bus")
	if err := checkBus(cfg.Bus); err != nil {
		// Not quoted: a NATS URL may carry a password.
		return usagef("invalid %s: %v", source, err)
	}
	if err := buildNATSConfig(cfg, get); err != nil {
		return err
	}
	if err := buildSafetyConfig(cfg, get); err != nil {
		return err
	}
	if err := buildRetentionConfig(cfg, get); err != nil {
		return err
	}
	if err := buildOIDCConfig(cfg, get); err != nil {
		return err
	}
	return buildTLSConfig(cfg, get)
}

// checkBus accepts --bus: postgres, or NATS server URLs (nats:// or
// tls://, with a host), comma-separated as the NATS client takes them.
func checkBus(raw string) error {
	if raw == busPostgres {
		return nil
	}
	for part := range strings.SplitSeq(raw, ",") {
		u, err := url.Parse(strings.TrimSpace(part))
		if err != nil || (u.Scheme != "nats" && u.Scheme != "tls") || u.Hostname() == "" || (u.Path != "" && u.Path != "/") {
			return errors.New("want postgres, or a NATS URL nats://host:4222 (several: comma-separated)")
		}
	}
	return nil
}

// isDefault reports whether a flag's source (value's second result) is
// its default: neither the command line nor the environment gave it.
func isDefault(source string) bool { return strings.HasPrefix(source, "default of ") }

// followAddr is the URL of this server when --addr was given and the URL
// (the public URL, the link commands' --server) was not: a server moved
// to :9090 must not hand out short URLs on :8080. Port 0 is only known
// once listening, so it keeps def.
func followAddr(addr, addrSource, def string) string {
	_, port, err := net.SplitHostPort(addr)
	if isDefault(addrSource) || err != nil || port == "0" {
		return def
	}
	return "http://localhost:" + port
}

// boolFlags are the environment-backed flags that take no value: given
// alone they mean true, --flag=false turns them off.
var boolFlags = map[string]bool{forceFlag.name: true, "webhook-allow-private": true, "admin-on-domains": true,
	"allow-public-subdomains": true, "robots-allow": true, operatorFlag.name: true}

// repeatFlags are the environment-backed flags that may be given several
// times; the value the config reads joins them with newlines (the
// environment variable: commas).
var repeatFlags = map[string]bool{"blocklist": true}

// rateLimitPattern is --rate-limit's syntax: N/s or N/m, then an optional
// :BURST.
var rateLimitPattern = regexp.MustCompile(`^([0-9]+(?:\.[0-9]+)?)/(s|m)(?::([0-9]+))?$`)

// parseRateLimit reads --rate-limit: "20/s:40" is 20 requests a second with
// bursts of 40; "100/m" 100 a minute with bursts of 100 (the burst defaults
// to N); "0" is no limit.
func parseRateLimit(raw string) (rate.Limit, int, error) {
	if raw == "0" {
		return rate.Inf, 0, nil
	}
	m := rateLimitPattern.FindStringSubmatch(raw)
	if m == nil {
		return 0, 0, errors.New("want N/s or N/m, optionally followed by :BURST (examples: 20/s:40, 100/m), or 0 for no limit")
	}
	n, err := strconv.ParseFloat(m[1], 64)
	if err != nil || n <= 0 || n > 1e6 {
		return 0, 0, errors.New("the rate must be above 0 and at most 1000000")
	}
	perSecond := n
	if m[2] == "m" {
		perSecond = n / 60
	}
	burst := int(math.Ceil(n))
	if m[3] != "" {
		if burst, err = strconv.Atoi(m[3]); err != nil || burst < 1 || burst > 1e6 {
			return 0, 0, errors.New("the burst must be from 1 to 1000000")
		}
	}
	return rate.Limit(perSecond), burst, nil
}

// checkRedirectURL accepts what --root-url and --not-found-url may be: an
// absolute http(s) URL, or a path on this server ("/dashboard"). It becomes
// a Location header as it is.
func checkRedirectURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil {
		return errors.New("not a URL")
	}
	if u.Scheme == "" && u.Host == "" {
		if !strings.HasPrefix(raw, "/") || strings.HasPrefix(raw, "//") {
			return errors.New("want an absolute http:// or https:// URL, or a path starting with /")
		}
		return nil
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return errors.New("want an absolute http:// or https:// URL, or a path starting with /")
	}
	if u.Host == "" {
		return errors.New("missing host")
	}
	return nil
}

// nodeIDPattern keeps node ids printable and short: they are a column of
// every rollup row and a label in logs.
var nodeIDPattern = regexp.MustCompile(`^[A-Za-z0-9._:-]{1,64}$`)

// parsePublicURL accepts an absolute http(s) URL without query or fragment
// and drops a trailing slash, so that "<public-url>/<slug>" is well formed.
func parsePublicURL(raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, errors.New("not a URL")
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, errors.New("want an absolute http:// or https:// URL")
	}
	if u.Host == "" {
		return nil, errors.New("missing host")
	}
	if u.User != nil || u.RawQuery != "" || u.ForceQuery || u.Fragment != "" {
		return nil, errors.New("must not have user info, a query or a fragment")
	}
	u.Path = strings.TrimRight(u.Path, "/")
	u.RawPath = ""
	return u, nil
}

// checkLabel accepts tenant names and token labels: short, printable, no
// surrounding spaces (they end up in tables and logs).
func checkLabel(s string) error {
	if len(s) > 64 {
		return errors.New("longer than 64 bytes")
	}
	if strings.TrimSpace(s) != s {
		return errors.New("leading or trailing space")
	}
	for _, r := range s {
		if !unicode.IsPrint(r) {
			return errors.New("contains a control or non-printable character")
		}
	}
	return nil
}

// versionFlag is --version, accepted before or after any command. It has
// no environment variable: it is a question, not configuration.
const versionFlag = "version"
