package main

import (
	"context"
	"net/url"
	"strings"
	"time"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/blocklist"
	"github.com/linkforge/linkforge/health"
	"github.com/linkforge/linkforge/safety"
	"github.com/linkforge/linkforge/web"
	"github.com/linkforge/linkforge/webhook"
)

// safetyConfig is the threat check's flags (package safety).
type safetyConfig struct {
	// Recheck is how often every link's targets are checked again; 0:
	// never (the blocklist still refuses new targets).
	Recheck time.Duration
	// ThreatDNS is the filtering resolver (host:port or a DoH URL); "":
	// none, and nothing is sent anywhere.
	ThreatDNS string
	// ReportWebhook and ReportSecret are the operator's receiver of
	// report.created; "": none.
	ReportWebhook, ReportSecret string
	// HealthEvery is how often every link's targets are checked (package
	// health); 0: never (POST /api/v1/links/{slug}/check still works).
	HealthEvery time.Duration
}

// safetyFlags are global flags, as the others serve reads.
var safetyFlags = []flagSpec{
	{"health-check-interval", "DURATION", "0", "how often the scheduler checks every link's targets (HEAD then GET, redirects followed, 1 request a second per host, the webhooks' address policy) and marks the links broken or ok (link.broken); one node at a time; 0: never (opt-in: it contacts every target; 24h is a good value)"},
	{"report-webhook", "URL", "", "the operator's receiver of report.created (a POST for each abuse report, up to 3 attempts; the webhooks' address policy applies); empty: none"},
	{"report-webhook-secret", "SECRET", "", "whsec_... secret that signs report.created as tenants' webhooks are signed (webhook-signature); empty: unsigned"},
	{"threat-dns", "ADDR", "", "a filtering DNS resolver (HOST:PORT, or an https:// DNS-over-HTTPS URL) asked about every target host: its sinkhole answer (0.0.0.0, ::, NXDOMAIN) refuses a create (422 unsafe_target) and makes an existing or updated link unsafe; empty: none, nothing is sent anywhere"},
	{"threat-recheck", "DURATION", "24h", "how often the scheduler checks every link's targets again against the blocklist (and --threat-dns): a flagged target makes the link unsafe (a warning page before it), a check's flag whose target is clear again is lifted; one node at a time; 0: never"},
}

func init() { globalFlags = append(globalFlags, safetyFlags...) }

// buildSafetyConfig validates the threat check's flags into cfg.Safety.
func buildSafetyConfig(cfg *config, get func(string) (string, string)) error {
	raw, source := get("threat-recheck")
	d, err := parseDays(raw)
	if err != nil || d < 0 || (d > 0 && d < time.Minute) {
		return usagef("invalid %s %q: a duration of at least 1m (examples: 24h, 7d), or 0 to never re-check", source, strings.TrimSpace(raw))
	}
	cfg.Safety.Recheck = d
	raw, source = get("health-check-interval")
	if d, err = parseDays(raw); err != nil || d < 0 || (d > 0 && d < time.Minute) {
		return usagef("invalid %s %q: a duration of at least 1m (examples: 24h, 7d), or 0 to never check", source, strings.TrimSpace(raw))
	}
	cfg.Safety.HealthEvery = d
	raw, source = get("threat-dns")
	if raw = strings.TrimSpace(raw); raw != "" {
		if err := safety.ValidateDNSAddr(raw); err != nil {
			return usagef("invalid %s %q: %v", source, raw, err)
		}
	}
	cfg.Safety.ThreatDNS = raw
	raw, source = get("report-webhook")
	if raw = strings.TrimSpace(raw); raw != "" {
		if u, err := url.Parse(raw); err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
			return usagef("invalid %s %q: want an absolute http(s) URL", source, raw)
		}
	}
	cfg.Safety.ReportWebhook = raw
	raw, source = get("report-webhook-secret")
	if raw != "" && !strings.HasPrefix(raw, webhook.SecretPrefix) {
		return usagef("invalid %s: want a whsec_ secret (as a webhook's)", source)
	}
	cfg.Safety.ReportSecret = raw
	return nil
}

// lateFlagger is the links service's SetUnsafe, which is built after the
// scheduler (newWebServer): the scheduler starts after both.
type lateFlagger struct {
	set func(ctx context.Context, id int64, reason string) (linkforge.Link, error)
}

func (f *lateFlagger) flag(ctx context.Context, id int64, reason string) (linkforge.Link, error) {
	return f.set(ctx, id, reason)
}

// reportWebhook is web's Config.ReportWebhook of the flags.
func (a *app) reportWebhook() web.ReportWebhook {
	return web.ReportWebhook{URL: a.cfg.Safety.ReportWebhook, Secret: a.cfg.Safety.ReportSecret}
}

// safetyChecker is the target check of targets and --threat-dns.
func (a *app) safetyChecker(targets *blocklist.Files) *safety.Checker {
	c := &safety.Checker{Targets: targets}
	if a.cfg.Safety.ThreatDNS != "" {
		c.DNS = &safety.DNSFilter{Addr: a.cfg.Safety.ThreatDNS}
	}
	return c
}

// healthJob is the scheduler's check of every link's targets, or nil with
// --health-check-interval 0.
func (a *app) healthJob(st store, checker *health.Checker) (*health.Job, error) {
	if a.cfg.Safety.HealthEvery == 0 {
		return nil, nil
	}
	j, err := health.NewJob(health.JobConfig{Store: st, Checker: checker, Every: a.cfg.Safety.HealthEvery, Logger: a.log})
	if err != nil {
		return nil, failed("cannot create the health check", err)
	}
	return j, nil
}

// safetyJob is the scheduler's re-check of every link's targets, or nil
// with --threat-recheck 0.
func (a *app) safetyJob(st store, check *safety.Checker, flag *lateFlagger) (*safety.Job, error) {
	if a.cfg.Safety.Recheck == 0 {
		return nil, nil
	}
	j, err := safety.New(safety.Config{Store: st, Flag: flag.flag, Check: check,
		Every: a.cfg.Safety.Recheck, Logger: a.log})
	if err != nil {
		return nil, failed("cannot create the target check", err)
	}
	return j, nil
}
