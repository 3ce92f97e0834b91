package main

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/linkforge/linkforge/retention"
)

// retentionConfig is how long each kind of row is kept (package retention).
type retentionConfig struct {
	Minutes, Hours, Deliveries, Audit time.Duration
}

// retentionFlags are global flags, as the others serve reads, appended to
// globalFlags in init so that they keep their own file.
var retentionFlags = []flagSpec{
	{"retention-minutes", "DURATION", "35d", "minute click buckets older than this are removed by the daily retention job (totals and daily aggregates are kept); at least 1d"},
	{"retention-hours", "DURATION", "400d", "hourly dimension rows (countries, referrers, ... per hour) older than this are removed by the daily retention job; at least 1d"},
	{"delivery-retention", "DURATION", "7d", "delivered webhook deliveries older than this are removed by the daily retention job"},
	{"audit-retention", "DURATION", "400d", "audit log events older than this are removed by the daily retention job; at least 1d"},
}

func init() { globalFlags = append(globalFlags, retentionFlags...) }

// buildRetentionConfig validates the retention flags into cfg.Retention.
func buildRetentionConfig(cfg *config, get func(string) (string, string)) error {
	for _, f := range []struct {
		name string
		min  time.Duration
		dst  *time.Duration
	}{
		{"retention-minutes", 24 * time.Hour, &cfg.Retention.Minutes},
		{"retention-hours", 24 * time.Hour, &cfg.Retention.Hours},
		{"delivery-retention", time.Minute, &cfg.Retention.Deliveries},
		{"audit-retention", 24 * time.Hour, &cfg.Retention.Audit},
	} {
		raw, source := get(f.name)
		d, err := parseDays(raw)
		if err != nil || d < f.min {
			return usagef("invalid %s %q: a duration of at least %s, in days or Go units (examples: 35d, 1d12h, 36h)",
				source, raw, strings.TrimSuffix(f.min.String(), "0m0s"))
		}
		*f.dst = d
	}
	return nil
}

// parseDays parses a Go duration that may start with whole days: "35d",
// "1d12h", "90m".
func parseDays(s string) (time.Duration, error) {
	days, rest, ok := strings.Cut(s, "d")
	if !ok {
		return time.ParseDuration(s)
	}
	n, err := strconv.ParseUint(days, 10, 16)
	if err != nil {
		return 0, fmt.Errorf("days %q: %w", days, err)
	}
	d := time.Duration(n) * 24 * time.Hour
	if rest != "" {
		r, err := time.ParseDuration(rest)
		if err != nil || r < 0 {
			return 0, fmt.Errorf("after the days %q: %w", rest, err)
		}
		d += r
	}
	return d, nil
}

// retentionJob is the daily retention job of the node's scheduler.
func (a *app) retentionJob(st store, registry prometheus.Registerer) (*retention.Job, error) {
	j, err := retention.New(retention.Config{
		Store:      st,
		Minutes:    a.cfg.Retention.Minutes,
		Hours:      a.cfg.Retention.Hours,
		Deliveries: a.cfg.Retention.Deliveries,
		Audit:      a.cfg.Retention.Audit,
		// Sessions and one-time URLs go once past both of a session's
		// ends: no live one is removed.
		Sessions: max(a.cfg.SessionTTL, a.cfg.SessionMaxAge),
		Logger:   a.log,
		Registry: registry,
	})
	if err != nil {
		return nil, failed("cannot create retention job", err)
	}
	return j, nil
}
