package main

// The link commands (linkforge link create|list|get|update|delete|stats)
// are clients of a running server's admin API, through package client:
// they need a server URL and a token, not the database, so that scripts
// can run them from anywhere the API is reachable.

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/pflag"

	"github.com/linkforge/linkforge/client"
)

var (
	serverFlag = flagSpec{"server", "URL", "http://localhost:8080", "link commands: the LinkForge server whose admin API they use"}
	tokenFlag  = flagSpec{"token", "TOKEN", "", "link commands: an API token of the tenant (linkforge token create); required"}
	// linkFlags are the env-backed flags of every link command; the
	// others are registered by linkExtra, without environment variables:
	// an exported LINKFORGE_URL must not become every new link's target.
	linkFlags = []flagSpec{serverFlag, tokenFlag}
)

// linkOptions are the parsed flags of a link command.
type linkOptions struct {
	client *client.Client
	server string // the server URL the client calls
	json   bool
	set    map[string]bool // the link flags given
	// archive is --archive of create and update (set["archive"]: given).
	archive bool
	// utm-template add, stats campaigns (utmcmd.go)
	utm       client.UTM
	campaigns client.CampaignOptions

	// create, update
	newLink client.NewLink
	update  client.LinkUpdate
	// list
	list client.ListOptions
	all  bool
	// stats
	stats client.StatsOptions
	empty bool   // the intervals without clicks too
	by    string // a dimension: a breakdown instead of the time series
	limit int
	// link qr, qr logo, qr defaults (qrcmd.go)
	qr qrOptions
	// link share, tag share
	share client.NewShare
}

// linkFieldFlags are the flags of a link's fields (create, update).
var linkFieldFlags = []struct{ name, arg, usage string }{
	{"url", "URL", "the target: absolute http or https (create: required)"},
	{"slug", "SLUG", "the slug, [A-Za-z0-9_-]{1,64} (default: generated)"},
	{"title", "TEXT", "a title, up to 200 characters"},
	{"expires-at", "TIME", "when the link starts answering 410 (or its fallback): an RFC 3339 time, a date (midnight UTC) or a duration from now (24h); not in the past"},
	{"max-clicks", "N", "clicks after which the link answers 410 (or its fallback)"},
	{"fallback-url", "URL", "where an expired link redirects instead of 410"},
	{"password", "TEXT", "visitors must enter it before the redirect"},
	{"notes", "TEXT", "the team's notes, up to 2,000 characters (searched by list --q)"},
	{"valid-since", "TIME", "before it the link answers 404: an RFC 3339 time, a date (midnight UTC) or a duration from now (24h)"},
}

// clearable are the fields update --clear removes.
var clearable = append([]string{"title", "expires-at", "max-clicks", "fallback-url", "password", "tags", "device-urls", "notes", "valid-since"}, routingClearable...)

// dimensions are the values of stats --by.
var dimensions = []string{client.DimCountry, client.DimReferrer, client.DimDevice, client.DimBrowser, client.DimOS, client.DimUTMSource,
	client.DimVariant, client.DimSource}

// linkListFlags and linkStatsFlags are the other flags of list and stats.
var (
	linkListFlags = []struct{ name, arg, usage string }{
		{"q", "TEXT", "substring of slug, url, title or notes, case-insensitive"},
		{"state", "STATE", "active, expired, disabled, blocked or all (default)"},
		{"archived", "WHICH", "false (default: unarchived links), true or all"},
		{"sort", "ORDER", "-created (default), created, -clicks, clicks or slug"},
		{"limit", "N", "links per page (default 50)"},
		{"cursor", "C", "continue where a previous page ended"},
	}
	linkStatsFlags = []struct{ name, arg, usage string }{
		{"from", "T", "RFC 3339 time, a date (midnight UTC) or a duration ago (24h); default: 60 intervals ago, or 24 h ago with --by"},
		{"to", "T", "as --from; default: now"},
		{"interval", "I", "minute (default), hour or day"},
		{"by", "DIMENSION", strings.Join(dimensions, ", ") + ": clicks by value instead of over time"},
		{"limit", "N", "with --by: values shown (default 10)"},
	}
)

// flagArgs are the placeholders of the flags without an environment
// variable, for the help.
var flagArgs = func() map[string]string {
	m := map[string]string{"tag": "TAG", "clear": "FIELD", "rule": "RULE", "variant": "URL=WEIGHT", "domain-map": "FROM=TO"}
	maps.Copy(m, qrFlagArgs)
	for _, l := range [][]struct{ name, arg, usage string }{linkFieldFlags, linkListFlags, linkStatsFlags, routingFieldFlags} {
		for _, f := range l {
			m[f.name] = f.arg
		}
	}
	return m
}()

// linkExtra registers the flags of link action on fs and returns their
// check.
func linkExtra(action string) func(fs *pflag.FlagSet) func(*invocation, func(flagSpec) (string, string)) error {
	return func(fs *pflag.FlagSet) func(*invocation, func(flagSpec) (string, string)) error {
		jsonOut := fs.Bool("json", false, "print the API's JSON instead of a table")
		str := map[string]*string{}
		var tags, clear *[]string
		var all, empty, archive, find *bool
		var routing *routingFlags
		switch action {
		case "create", "update":
			for _, f := range linkFieldFlags {
				if f.name == "slug" && action == "update" {
					continue
				}
				str[f.name] = fs.String(f.name, "", f.usage)
			}
			tags = fs.StringArray("tag", nil, "a tag; repeat for several (update: replaces the tags)")
			archive = fs.Bool("archive", false, "archive the link: it still redirects, but leaves the default listing and top links (update: --archive=false unarchives)")
			if action == "create" {
				find = fs.Bool("find-if-exists", false, "print the tenant's link of the same URL and domain when no flag given differs, instead of creating one")
			}
			routing = addRoutingFlags(fs)
			if action == "update" {
				clear = fs.StringArray("clear", nil, "remove a field: "+strings.Join(clearable, ", ")+"; repeatable")
			}
		case "list":
			for _, f := range linkListFlags {
				str[f.name] = fs.String(f.name, "", f.usage)
			}
			tags = fs.StringArray("tag", nil, "only links with this tag; repeat: all must match")
			all = fs.Bool("all", false, "every matching link, page after page")
		case "stats":
			for _, f := range linkStatsFlags {
				str[f.name] = fs.String(f.name, "", f.usage)
			}
			empty = fs.Bool("empty", false, "also print the intervals without clicks")
		case "share":
			str["expires"] = fs.String("expires", "", "when the page starts answering 410: an RFC 3339 time, a date (midnight UTC) or a duration from now (720h); not given: never")
			str["password"] = fs.String("password", "", "the password the page asks for; not given: none")
		}

		return func(inv *invocation, value func(flagSpec) (string, string)) error {
			o := &inv.link
			o.json = *jsonOut
			o.set = map[string]bool{}
			fs.VisitAll(func(f *pflag.Flag) {
				if f.Changed {
					o.set[f.Name] = true
				}
			})
			if all != nil {
				o.all = *all
			}
			if empty != nil {
				o.empty = *empty
			}
			if archive != nil {
				o.archive = *archive
			}
			if find != nil {
				o.newLink.FindIfExists = *find
			}
			name := inv.cmd.name
			if err := o.connect(name, value); err != nil {
				return err
			}
			get := func(n string) string { return *str[n] }
			list := func(p *[]string) []string {
				if p == nil {
					return nil
				}
				return *p
			}
			switch action {
			case "create", "update":
				if err := checkLinkFields(inv, action, get, list(tags), list(clear)); err != nil {
					return err
				}
				return checkRoutingFlags(inv, action, routing, list(clear))
			case "list":
				return checkListFlags(inv, get, list(tags))
			case "stats":
				return checkStatsFlags(inv, get)
			case "share":
				return checkShareFlags(inv, get)
			}
			return nil
		}
	}
}

// connect reads --server and --token into the client.
func (o *linkOptions) connect(name string, value func(flagSpec) (string, string)) error {
	server, source := value(serverFlag)
	if isDefault(source) {
		addr, addrSource := value(globalFlags[0])
		server = followAddr(addr, addrSource, server)
	}
	token, tokenSource := value(tokenFlag)
	if token == "" {
		return usagef("%s: --token is required (or %s)", name, tokenFlag.env())
	}
	if strings.ContainsAny(token, " \t\r\n") {
		return usagef("invalid %s: a token has no spaces", tokenSource)
	}
	c, err := client.New(server, token)
	if err != nil {
		return usagef("invalid %s %q: want http(s)://host[:port]", source, server)
	}
	o.client, o.server = c, server
	return nil
}

// intFlag reads a whole-number flag of at least min; 0 when not given.
func (o *linkOptions) intFlag(cmd, n, v string, min int) (int, error) {
	if !o.set[n] {
		return 0, nil
	}
	i, err := strconv.Atoi(v)
	if err != nil || i < min {
		return 0, usagef("%s: invalid --%s %q: want a whole number of at least %d", cmd, n, v, min)
	}
	return i, nil
}

func checkListFlags(inv *invocation, get func(string) string, tags []string) error {
	o, name := &inv.link, inv.cmd.name
	o.list = client.ListOptions{Q: get("q"), Tags: tags, State: get("state"), Archived: get("archived"), Sort: get("sort"), Cursor: get("cursor")}
	var err error
	if o.list.Limit, err = o.intFlag(name, "limit", get("limit"), 1); err != nil {
		return err
	}
	if o.all && (o.set["limit"] || o.set["cursor"]) {
		return usagef("%s: --all lists every link: no --limit or --cursor with it", name)
	}
	if o.all {
		o.list.Limit = 100 // a page
	}
	return nil
}

func checkStatsFlags(inv *invocation, get func(string) string) error {
	o, name := &inv.link, inv.cmd.name
	o.by = get("by")
	if o.by != "" && !slices.Contains(dimensions, o.by) {
		return usagef("%s: invalid --by %q: want one of %s", name, o.by, strings.Join(dimensions, ", "))
	}
	if o.by != "" && o.set["interval"] {
		return usagef("%s: --interval is for the time series, --by for a breakdown: not both", name)
	}
	if o.by == "" && o.set["limit"] {
		return usagef("%s: --limit needs --by", name)
	}
	o.stats.Interval = get("interval")
	now := time.Now()
	var err error
	for _, f := range []struct {
		name string
		dst  *time.Time
	}{{"from", &o.stats.From}, {"to", &o.stats.To}} {
		if o.set[f.name] {
			if *f.dst, err = parseCLITime(name, f.name, get(f.name), now, false); err != nil {
				return err
			}
		}
	}
	o.limit, err = o.intFlag(name, "limit", get("limit"), 1)
	return err
}

// checkShareFlags reads --expires and --password of link share and tag
// share.
func checkShareFlags(inv *invocation, get func(string) string) error {
	o := &inv.link
	o.share.Password = get("password")
	if o.set["expires"] {
		t, err := parseCLITime(inv.cmd.name, "expires", get("expires"), time.Now(), true)
		if err != nil {
			return err
		}
		o.share.ExpiresAt = &t
	}
	return nil
}

// checkLinkFields reads the field flags of create and update.
func checkLinkFields(inv *invocation, action string, get func(string) string, tags, clear []string) error {
	o := &inv.link
	name := inv.cmd.name
	var expires time.Time
	if o.set["expires-at"] {
		var err error
		if expires, err = parseCLITime(name, "expires-at", get("expires-at"), time.Now(), true); err != nil {
			return err
		}
	}
	maxClicks, err := o.intFlag(name, "max-clicks", get("max-clicks"), 0)
	if err != nil {
		return err
	}
	var since time.Time
	if o.set["valid-since"] {
		if since, err = parseValidSince(name, get("valid-since"), time.Now()); err != nil {
			return err
		}
	}
	if action == "create" {
		if !o.set["url"] {
			return usagef("%s: --url is required", name)
		}
		o.newLink = client.NewLink{URL: get("url"), Slug: get("slug"), Title: get("title"), FallbackURL: get("fallback-url"),
			Tags: tags, Password: get("password"), FindIfExists: o.newLink.FindIfExists}
		if o.set["expires-at"] {
			o.newLink.ExpiresAt = &expires
		}
		if o.set["max-clicks"] {
			o.newLink.MaxClicks = client.Ptr(int64(maxClicks))
		}
		o.newLink.Notes, o.newLink.Archived = get("notes"), o.archive
		if o.set["valid-since"] {
			o.newLink.ValidSince = &since
		}
		return nil
	}

	u := &o.update
	strField := func(n string) *string {
		if !o.set[n] {
			return nil
		}
		return client.Ptr(get(n))
	}
	u.URL, u.Title, u.FallbackURL, u.Password = strField("url"), strField("title"), strField("fallback-url"), strField("password")
	if o.set["expires-at"] {
		u.ExpiresAt = &expires
	}
	if o.set["max-clicks"] {
		u.MaxClicks = client.Ptr(int64(maxClicks))
	}
	if o.set["tag"] {
		u.Tags = tags
	}
	u.Notes = strField("notes")
	if o.set["archive"] {
		u.Archived = client.Ptr(o.archive)
	}
	if o.set["valid-since"] {
		u.ValidSince = &since
	}
	for _, f := range clear {
		if o.set[f] || (f == "tags" && o.set["tag"]) {
			return usagef("%s: --clear %s and --%s: choose one", name, f, strings.TrimSuffix(f, "s"))
		}
		switch f {
		case "title":
			u.ClearTitle = true
		case "expires-at":
			u.ClearExpiresAt = true
		case "max-clicks":
			u.ClearMaxClicks = true
		case "fallback-url":
			u.ClearFallbackURL = true
		case "password":
			u.ClearPassword = true
		case "tags":
			u.Tags = []string{}
		case "device-urls":
			u.ClearDeviceURLs = true
		case "notes":
			u.ClearNotes = true
		case "valid-since":
			u.ClearValidSince = true
		default:
			if slices.Contains(routingClearable, f) {
				continue // checkRoutingFlags
			}
			return usagef("%s: invalid --clear %q: want one of %s", name, f, strings.Join(clearable, ", "))
		}
	}
	return nil
}

// parseValidSince reads --valid-since: an RFC 3339 time, a date (its
// midnight UTC) or a duration from now. Unlike an expiry it may be in
// the past: the link is valid already.
func parseValidSince(cmd, v string, now time.Time) (time.Time, error) {
	if t, err := time.Parse(time.RFC3339, v); err == nil {
		return t, nil
	}
	if t, err := time.Parse(time.DateOnly, v); err == nil {
		return t, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil {
		return time.Time{}, usagef("%s: invalid --valid-since %q: want an RFC 3339 time (2026-12-01T00:00:00Z), a date (2026-12-01) or a duration from now (24h)", cmd, v)
	}
	return now.Add(d).Truncate(time.Second), nil
}

// parseCLITime reads a time flag: RFC 3339, a date (its midnight UTC), or
// a duration: that long ago for a range (--from 24h), that long from now
// for an expiry (--expires-at 24h). An expiry must be in the future: a
// link created already expired is a typo, not an intent.
func parseCLITime(cmd, flagName, v string, now time.Time, future bool) (time.Time, error) {
	t, err := time.Parse(time.RFC3339, v)
	if err != nil {
		t, err = time.Parse(time.DateOnly, v)
	}
	if err != nil {
		d, derr := time.ParseDuration(v)
		switch {
		case derr != nil || (!future && d < 0):
			when := "a duration ago (24h)"
			if future {
				when = "a duration from now (24h)"
			}
			return time.Time{}, usagef("%s: invalid --%s %q: want an RFC 3339 time (2026-12-01T00:00:00Z), a date (2026-12-01) or %s", cmd, flagName, v, when)
		case future:
			t = now.Add(d)
		default:
			t = now.Add(-d)
		}
	}
	if future && !t.After(now) {
		return time.Time{}, usagef("%s: invalid --%s %q: %s is in the past; give a later time or a duration from now (24h)",
			cmd, flagName, v, t.UTC().Format(time.RFC3339))
	}
	return t, nil
}

// apiFailed reports a failed call: a problem answer as its title, detail
// and field errors on stderr, anything else (the server unreachable) as a
// logged failure. Both exit 1.
func (a *app) apiFailed(op string, err error) int {
	var e *client.Error
	if !errors.As(err, &e) {
		return a.fail(op, err)
	}
	msg := e.Title
	if e.Detail != "" {
		msg += ": " + e.Detail
	}
	fmt.Fprintf(a.stderr, "linkforge: %s (HTTP %d", msg, e.Status)
	if e.Code != "" {
		fmt.Fprintf(a.stderr, ", %s", e.Code)
	}
	fmt.Fprintln(a.stderr, ")")
	for _, f := range e.Fields {
		fmt.Fprintf(a.stderr, "  %s: %s\n", f.Field, f.Detail)
	}
	return exitFailure
}

// printJSON writes v indented, for scripts (jq).
func (a *app) printJSON(v any) int {
	enc := json.NewEncoder(a.stdout)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return a.fail("cannot print", err)
	}
	return exitOK
}

func (a *app) linkCreate(inv invocation) int {
	var (
		l       client.Link
		created = true
		err     error
	)
	if inv.link.newLink.FindIfExists {
		l, created, err = inv.link.client.FindOrCreateLink(a.ctx, inv.link.newLink)
	} else {
		l, err = inv.link.client.CreateLink(a.ctx, inv.link.newLink)
	}
	if err != nil {
		return a.apiFailed("cannot create link", err)
	}
	if !created {
		// On stderr, so that the output is the link's either way.
		fmt.Fprintf(a.stderr, "link %s exists: not created\n", l.Slug)
	}
	return a.printLink(inv, l)
}

func (a *app) linkGet(inv invocation) int {
	l, err := inv.link.client.Link(a.ctx, inv.args[0])
	if err != nil {
		return a.apiFailed("cannot get link", err)
	}
	return a.printLink(inv, l)
}

func (a *app) linkUpdate(inv invocation) int {
	l, err := inv.link.client.UpdateLink(a.ctx, inv.args[0], inv.link.update)
	if err != nil {
		return a.apiFailed("cannot update link", err)
	}
	return a.printLink(inv, l)
}

func (a *app) linkDelete(inv invocation) int {
	if err := inv.link.client.DeleteLink(a.ctx, inv.args[0]); err != nil {
		return a.apiFailed("cannot delete link", err)
	}
	return a.printDeleted(inv, map[string]any{"slug": inv.args[0]}, "link "+inv.args[0]+" deleted")
}

// printDeleted reports a delete that succeeded: the object's keys with
// "deleted": true under --json, else line.
func (a *app) printDeleted(inv invocation, keys map[string]any, line string) int {
	if inv.link.json {
		keys["deleted"] = true
		return a.printJSON(keys)
	}
	fmt.Fprintln(a.stdout, line)
	return exitOK
}

func (a *app) linkList(inv invocation) int {
	o := inv.link
	var page client.LinkPage
	if o.all {
		page.Links = []client.Link{}
		for l, err := range o.client.Links(a.ctx, o.list) {
			if err != nil {
				return a.apiFailed("cannot list links", err)
			}
			page.Links = append(page.Links, l)
		}
	} else {
		var err error
		if page, err = o.client.ListLinks(a.ctx, o.list); err != nil {
			return a.apiFailed("cannot list links", err)
		}
	}
	if o.json {
		return a.printJSON(page)
	}
	tw := tabwriter.NewWriter(a.stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "SLUG\tTITLE\tURL\tCLICKS\tTAGS\tEXPIRES\tCREATED")
	for _, l := range page.Links {
		title := "-"
		if l.Title != nil {
			title = orDash(ellipsis(*l.Title, titleWidth))
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\t%s\t%s\n", l.Slug, title, ellipsis(l.URL, urlWidth), l.Clicks,
			orDash(strings.Join(l.Tags, ",")), timeOrDash(l.ExpiresAt), l.CreatedAt.UTC().Format(time.RFC3339))
	}
	if err := tw.Flush(); err != nil {
		return a.fail("cannot print links", err)
	}
	if page.NextCursor != "" {
		// On stderr, so that the table can be piped as it is.
		fmt.Fprintf(a.stderr, "more links: add --cursor %s (or use --all)\n", page.NextCursor)
	}
	return exitOK
}

func (a *app) linkStats(inv invocation) int {
	o := inv.link
	slug := inv.args[0]
	if o.by != "" {
		b, err := o.client.LinkBreakdown(a.ctx, slug, o.by, client.RangeOptions{From: o.stats.From, To: o.stats.To, Limit: o.limit})
		if err != nil {
			return a.apiFailed("cannot get stats", err)
		}
		if o.json {
			return a.printJSON(b)
		}
		tw := tabwriter.NewWriter(a.stdout, 0, 0, 2, ' ', 0)
		fmt.Fprintf(tw, "%s\tCLICKS\n", strings.ToUpper(b.Dimension))
		for _, v := range b.Values {
			fmt.Fprintf(tw, "%s\t%d\n", v.Value, v.Count)
		}
		if b.Rest > 0 {
			fmt.Fprintf(tw, "(others)\t%d\n", b.Rest)
		}
		fmt.Fprintf(tw, "total\t%d\n", b.Total)
		if err := tw.Flush(); err != nil {
			return a.fail("cannot print stats", err)
		}
		fmt.Fprintf(a.stdout, "from %s to %s\n", b.From.UTC().Format(time.RFC3339), b.To.UTC().Format(time.RFC3339))
		return exitOK
	}
	s, err := o.client.LinkStats(a.ctx, slug, o.stats)
	if err != nil {
		return a.apiFailed("cannot get stats", err)
	}
	if o.json {
		return a.printJSON(s)
	}
	tw := tabwriter.NewWriter(a.stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "%s\tCLICKS\n", strings.ToUpper(s.Interval))
	hidden := 0
	for _, b := range s.Buckets {
		// Most of 60 minutes have no click: a person wants the others.
		if b.Count == 0 && !o.empty {
			hidden++
			continue
		}
		fmt.Fprintf(tw, "%s\t%d\n", b.Start.UTC().Format(time.RFC3339), b.Count)
	}
	if err := tw.Flush(); err != nil {
		return a.fail("cannot print stats", err)
	}
	if hidden > 0 {
		unit := s.Interval + "s"
		if hidden == 1 {
			unit = s.Interval
		}
		fmt.Fprintf(a.stdout, "%d %s without clicks not shown (--empty shows them)\n", hidden, unit)
	}
	fmt.Fprintf(a.stdout, "total (all time): %d\n", s.Total)
	return exitOK
}

// printLink prints one link as field/value lines, or its JSON.
func (a *app) printLink(inv invocation, l client.Link) int {
	if inv.link.json {
		return a.printJSON(l)
	}
	str := func(p *string) string {
		if p == nil {
			return "-"
		}
		return orDash(*p)
	}
	num := func(p *int64) string {
		if p == nil {
			return "-"
		}
		return strconv.FormatInt(*p, 10)
	}
	devices := "-"
	if d := l.DeviceURLs; d != nil {
		var parts []string
		for _, kv := range [][2]string{{"ios", d.IOS}, {"android", d.Android}, {"desktop", d.Desktop}} {
			if kv[1] != "" {
				parts = append(parts, kv[0]+"="+kv[1])
			}
		}
		devices = orDash(strings.Join(parts, " "))
	}
	password := "no"
	if l.PasswordProtected {
		password = "yes"
	}
	tw := tabwriter.NewWriter(a.stdout, 0, 0, 2, ' ', 0)
	for _, row := range append([][2]string{
		{"slug", l.Slug}, {"short_url", l.ShortURL}, {"url", l.URL}, {"title", str(l.Title)},
		{"tags", orDash(strings.Join(l.Tags, ","))}, {"expires_at", timeOrDash(l.ExpiresAt)},
		{"max_clicks", num(l.MaxClicks)}, {"fallback_url", str(l.FallbackURL)}, {"device_urls", devices},
		{"password", password}, {"clicks", strconv.FormatInt(l.Clicks, 10)},
		{"created_at", l.CreatedAt.UTC().Format(time.RFC3339)}, {"updated_at", l.UpdatedAt.UTC().Format(time.RFC3339)},
		{"expired_at", timeOrDash(l.ExpiredAt)}, {"notes", str(l.Notes)}, {"archived", strconv.FormatBool(l.Archived)},
		{"valid_since", timeOrDash(l.ValidSince)},
	}, routingRows(l)...) {
		fmt.Fprintf(tw, "%s\t%s\n", row[0], row[1])
	}
	if err := tw.Flush(); err != nil {
		return a.fail("cannot print link", err)
	}
	return exitOK
}

// The widths at which link list cuts a title and a URL: the table stays
// readable in a terminal; --json has them whole.
const (
	titleWidth = 30
	urlWidth   = 50
)

// ellipsis cuts s to max characters, the last one "…", when it is longer.
func ellipsis(s string, max int) string {
	r := []rune(s)
	if len(r) <= max {
		return s
	}
	return string(r[:max-1]) + "…"
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func timeOrDash(t *time.Time) string {
	if t == nil {
		return "-"
	}
	return t.UTC().Format(time.RFC3339)
}

// printLinkUsage adds the link commands' flags to the help text.
func printLinkUsage(w io.Writer) {
	fmt.Fprint(w, "\nLink command flags (server and token have environment variables, the rest not):\n\n")
	printFlags(w, linkFlags)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "")
	for _, f := range linkFieldFlags {
		used := "create, update"
		if f.name == "slug" {
			used = "create"
		}
		fmt.Fprintf(tw, "  --%s %s\t%s\t%s\n", f.name, f.arg, used, f.usage)
	}
	for _, f := range routingFieldFlags {
		fmt.Fprintf(tw, "  --%s %s\t%s\t%s\n", f.name, f.arg, "create, update", f.usage)
	}
	for _, r := range [][3]string{
		{"--tag TAG", "create, update, list", "a tag, repeatable (update: replaces the tags; list: all must match)"},
		{"--rule RULE", "create, update", "a rule, 'TYPE=VALUE[,TYPE=VALUE]... -> URL', repeatable, in order (update: replaces the rules)"},
		{"--variant URL=WEIGHT", "create, update", "an A/B variant, weight 1..100, repeatable: 2 to 10 (update: replaces them)"},
		{"--forward-query", "create, update", "add the request's query string to the target's; --forward-query=false stops it"},
		{"--clear FIELD", "update", "remove a field: " + strings.Join(clearable, ", ") + "; repeatable"},
		{"--q TEXT", "list", "substring of slug, url or title, case-insensitive"},
		{"--state STATE", "list", "active, expired, disabled, blocked or all (default)"},
		{"--sort ORDER", "list", "-created (default), created, -clicks, clicks or slug"},
		{"--limit N", "list, stats --by", "links per page (default 50); values of a breakdown (default 10)"},
		{"--cursor C", "list", "continue where a previous page ended"},
		{"--all", "list", "every matching link, page after page"},
		{"--from, --to T", "stats", "RFC 3339 time, a date (midnight UTC) or a duration ago (24h); defaults: the last 60 intervals, or 24 h with --by"},
		{"--interval I", "stats", "minute (default), hour or day"},
		{"--empty", "stats", "also print the intervals without clicks"},
		{"--by DIMENSION", "stats", strings.Join(dimensions, ", ") + ": clicks by value instead of over time"},
		{"--json", "all", "print the API's JSON instead of a table"},
	} {
		fmt.Fprintf(tw, "  %s\t%s\t%s\n", r[0], r[1], r[2])
	}
	tw.Flush()
	fmt.Fprint(w, "\nLink commands exit 0 on success, 1 when the server refuses (its problem and\n"+
		"field errors on stderr) or cannot be reached, 2 on bad usage.\n")
}
