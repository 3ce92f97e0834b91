package porting

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/classify"
)

// HistoryStore is what ImportVisits needs of a store. Both store/sqlite
// and store/postgres implement it. History is written only through the
// rollup's own methods, so that whatever keeps the aggregates up keeps
// the imported rows too.
type HistoryStore interface {
	TenantLink(ctx context.Context, tenantID, domainID int64, slug string) (linkforge.Link, error)
	UpdateLink(ctx context.Context, tenantID, domainID int64, slug string, fn func(*linkforge.Link) error) (linkforge.Link, error)
	UpsertClicks(ctx context.Context, nodeID string, rows []linkforge.RollupRow, dims []linkforge.DimRow) error
	NodeLinkClicks(ctx context.Context, nodeID string, linkID int64, from, to time.Time) ([]linkforge.RollupRow, []linkforge.DimRow, error)
	NodeClickTotal(ctx context.Context, linkID int64, nodeID string) (int64, error)
	Prune(ctx context.Context, p linkforge.Prune) (linkforge.PruneResult, error)
}

// HistoryOptions configure one ImportVisits.
type HistoryOptions struct {
	TenantID int64
	// Domain and DomainMap resolve a visit's host as Options' do.
	Domain    func(host string) (int64, error)
	DomainMap map[string]string
	// Slug is the short code of the visits of a file that names none
	// (Shlink's CSV before 4.1 has no visitedUrl): "" refuses them.
	Slug string
	// Minutes and Hours are the server's retention of minute buckets
	// and hourly dimension rows (--retention-minutes, --retention-hours;
	// 0: the defaults, 35 and 400 days). History older lands in the hourly
	// and daily aggregates only, as retention would leave it.
	Minutes, Hours time.Duration
	// Now is the clock of those bounds; nil: time.Now.
	Now       func() time.Time
	MaxErrors int // 0: DefaultMaxErrors
	// Progress, if set, is called every DefaultBatchSize lines read and
	// after each write of history.
	Progress func()
}

// The retention defaults (package retention's), repeated here so that
// porting does not import the job.
const (
	defaultMinutes = 35 * 24 * time.Hour
	defaultHours   = 400 * 24 * time.Hour
)

// maxRowsPerWrite bounds the minute rows of one UpsertClicks: a year of
// a busy link's history is written in several transactions, each short.
const maxRowsPerWrite = 2000

// HistoryNode is the node id the rollup keeps the history of format f
// under. Counts per node are absolute (RollupStore.UpsertClicks), so a
// second import of the same visits writes the same counts again and
// changes nothing.
func HistoryNode(f Format) string { return "import:" + string(f) }

// linkHistory is what a file holds of one link, counted.
type linkHistory struct {
	link    linkforge.Link
	minutes map[time.Time]*minuteCount
	dims    map[dimKey]int64
	// first is the file's first line of the link; visits counts its
	// lines, for the report.
	first, visits int
	oldest        time.Time
}

type minuteCount struct{ n, automated int64 }

type dimKey struct {
	hour      time.Time
	dim       linkforge.Dimension
	automated bool
	value     string
}

// ImportVisits reads a per-visit file of format f (ShlinkVisits, YOURLSLog,
// DubEvents) and loads its visits into the click history of the tenant's
// links they name, at their own times: minute buckets (and hourly
// dimension rows) inside the retention window, and only the hourly and
// daily aggregates beyond it, as retention leaves older clicks. Each visit
// is classified as a live click is: its user agent gives the device,
// browser, OS and whether it is automated (also when the file marks it a
// bot); its referrer, country and utm_source come from the file. No
// address is kept.
//
// Importing the same file again changes nothing: the history is written
// under HistoryNode(f) as absolute counts. History beyond the minute
// window is taken once per link and format: a link that has some already
// skips the file's visits older than the window (reported Skipped), whose
// minute rows retention has folded away. Clicks the link import counted
// (ImportedClicks) that the history now holds in buckets are moved out of
// ImportedClicks, so that a link's total counts each visit once.
//
// Result counts lines: Created the visits counted, Skipped those older
// than the window of a link that had them already, Failed the error lines
// (a line that names no link of the tenant among them).
func ImportVisits(ctx context.Context, st HistoryStore, f Format, r io.Reader, opt HistoryOptions) (Result, error) {
	res := Result{Errors: []LineError{}, Notes: []LineError{}}
	p, err := newVisitParser(f, r)
	if err != nil {
		return res, err
	}
	if opt.MaxErrors <= 0 {
		opt.MaxErrors = DefaultMaxErrors
	}
	if opt.Minutes <= 0 {
		opt.Minutes = defaultMinutes
	}
	if opt.Hours <= 0 {
		opt.Hours = defaultHours
	}
	now := time.Now()
	if opt.Now != nil {
		now = opt.Now()
	}
	h := &historian{ctx: ctx, st: st, opt: opt, res: &res, links: map[linkKey]*linkHistory{},
		im: &importer{ctx: ctx, opt: Options{Domain: opt.Domain, DomainMap: opt.DomainMap}, domains: map[string]domainAnswer{}}}
	last, read := 0, 0
	for {
		v, err := p.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			var ae *linkforge.Error
			if !errors.As(err, &ae) {
				return res, fmt.Errorf("import visits: read: %w", err)
			}
			h.fail(last+1, &linkforge.Error{Code: ae.Code, Message: ae.Message + "; the rest of the file was not read", Fields: ae.Fields, Err: ae.Err})
			break
		}
		last = v.Line
		if err := h.add(v); err != nil {
			return res, err
		}
		if read++; read%DefaultBatchSize == 0 && opt.Progress != nil {
			opt.Progress()
		}
	}
	return res, h.write(now, f)
}

type historian struct {
	ctx   context.Context
	st    HistoryStore
	opt   HistoryOptions
	res   *Result
	links map[linkKey]*linkHistory
	// im resolves domains as the link import does.
	im *importer
	// missing caches the links the tenant does not have.
	missing map[linkKey]bool
}

func (h *historian) fail(line int, err error) {
	h.res.Failed++
	if len(h.res.Errors) < h.opt.MaxErrors {
		h.res.Errors = append(h.res.Errors, LineError{Line: line, Err: err})
	}
}

// add counts one visit into its link's history.
func (h *historian) add(v Visit) error {
	if v.Err != nil {
		h.fail(v.Line, v.Err)
		return nil //nolint:nilerr // a bad line is reported in the result, not an error of the import
	}
	if v.Slug == "" {
		if h.opt.Slug == "" {
			h.fail(v.Line, linkforge.InvalidField("slug", "the line names no short code (a visitedUrl or shortCode); "+
				"give the link of the file with slug (linkforge import: --slug)"))
			return nil
		}
		v.Slug = h.opt.Slug
	}
	domainID, err := h.im.domainOf(v.Domain)
	if err != nil {
		if linkforge.ErrorCode(err) != linkforge.EInvalid {
			return fmt.Errorf("import visits: domain %q: %w", v.Domain, err)
		}
		h.fail(v.Line, linkforge.InvalidField(fDomain, detailOf(err)))
		return nil
	}
	key := linkKey{domainID, v.Slug}
	lh := h.links[key]
	if lh == nil {
		if h.missing[key] {
			h.fail(v.Line, noSuchLink(v.Slug))
			return nil
		}
		l, err := h.st.TenantLink(h.ctx, h.opt.TenantID, domainID, v.Slug)
		if linkforge.ErrorCode(err) == linkforge.ENotFound {
			if h.missing == nil {
				h.missing = map[linkKey]bool{}
			}
			h.missing[key] = true
			h.fail(v.Line, noSuchLink(v.Slug))
			return nil
		}
		if err != nil {
			return fmt.Errorf("import visits: link %q: %w", v.Slug, err)
		}
		lh = &linkHistory{link: l, minutes: map[time.Time]*minuteCount{}, dims: map[dimKey]int64{}}
		h.links[key] = lh
	}
	lh.count(v)
	return nil
}

func noSuchLink(slug string) error {
	return linkforge.InvalidField("slug", fmt.Sprintf("the tenant has no link %q; import the links first (their own export), then their visits",
		truncate(slug, 80)))
}

// count classifies v as the redirect classifies a click and adds it.
func (lh *linkHistory) count(v Visit) {
	at := v.At.UTC()
	minute, hour := at.Truncate(time.Minute), at.Truncate(time.Hour)
	var d linkforge.ClickDims
	if v.UserAgent != "" {
		a := classify.LookupAgent(v.UserAgent)
		d[linkforge.DimDevice], d[linkforge.DimBrowser], d[linkforge.DimOS] = a.Device, a.Browser, a.OS
		v.Bot = v.Bot || a.Automated
	} else {
		d[linkforge.DimDevice] = oneOf(v.Device, classify.Devices[:], nil)
		d[linkforge.DimBrowser] = oneOf(v.Browser, classify.Browsers[:], nil)
		d[linkforge.DimOS] = oneOf(v.OS, classify.OSes[:], osAliases)
	}
	if code := countryCode(v.Country); code != "" {
		d[linkforge.DimCountry] = code
	}
	if v.Referrer != "" {
		ref := v.Referrer
		if !strings.Contains(ref, "://") {
			ref = "https://" + ref // Dub's referer column is a host
		}
		d[linkforge.DimReferrer] = classify.Referrer(ref, v.Domain)
	}
	d[linkforge.DimUTMSource] = classify.UTMSource(v.Query)
	d[linkforge.DimTraffic] = linkforge.TrafficHuman
	if v.Bot {
		d[linkforge.DimTraffic] = linkforge.TrafficAutomated
	}
	m := lh.minutes[minute]
	if m == nil {
		m = &minuteCount{}
		lh.minutes[minute] = m
	}
	m.n++
	if v.Bot {
		m.automated++
	}
	for dim := range linkforge.NumDimensions {
		lh.dims[dimKey{hour, dim, v.Bot, d.Value(dim)}]++
	}
	if lh.visits++; lh.visits == 1 {
		lh.first = v.Line
	}
	if lh.oldest.IsZero() || at.Before(lh.oldest) {
		lh.oldest = at
	}
}

// osAliases are the other names a file gives the OSes LinkForge counts.
var osAliases = map[string]string{"mac os": classify.OSMacOS, "mac os x": classify.OSMacOS, "macos": classify.OSMacOS,
	"os x": classify.OSMacOS, "chrome os": classify.OSChromeOS, "ubuntu": classify.OSLinux}

// oneOf maps a file's own device, browser or OS name onto LinkForge's
// set (case-insensitively), "other" when it is not in it.
func oneOf(s string, set []string, aliases map[string]string) string {
	s = strings.TrimSpace(s)
	if a, ok := aliases[strings.ToLower(s)]; ok {
		return a
	}
	for _, v := range set {
		if strings.EqualFold(v, s) {
			return v
		}
	}
	return classify.Other
}

// write stores every link's history, a link at a time in file order of
// their first visit.
func (h *historian) write(now time.Time, f Format) error {
	node := HistoryNode(f)
	minuteBefore, hourBefore := now.Add(-h.opt.Minutes), now.Add(-h.opt.Hours)
	all := make([]*linkHistory, 0, len(h.links))
	for _, lh := range h.links {
		all = append(all, lh)
	}
	slices.SortFunc(all, func(a, b *linkHistory) int { return cmp.Compare(a.first, b.first) })
	for _, lh := range all {
		if err := h.writeLink(lh, node, minuteBefore, hourBefore); err != nil {
			return err
		}
	}
	return nil
}

// writeLink writes one link's history: see ImportVisits.
func (h *historian) writeLink(lh *linkHistory, node string, minuteBefore, hourBefore time.Time) error {
	ctx, id := h.ctx, lh.link.ID
	before, err := h.nodeTotal(id, node)
	if err != nil {
		return err
	}
	// Part of the node's history was folded away by retention (or by an
	// earlier import): the file's visits past the window are in the
	// aggregates already.
	folded := before.total > before.rows
	rows := make([]linkforge.RollupRow, 0, len(lh.minutes))
	skipped := int64(0)
	for m, c := range lh.minutes {
		if folded && m.Before(minuteBefore) {
			skipped += c.n
			continue
		}
		rows = append(rows, linkforge.RollupRow{LinkID: id, Bucket: m, Count: c.n, Automated: c.automated})
	}
	dims := boundDims(id, lh.dims, func(hour time.Time) bool { return folded && hour.Before(hourBefore) })
	slices.SortFunc(rows, func(a, b linkforge.RollupRow) int { return a.Bucket.Compare(b.Bucket) })
	slices.SortFunc(dims, func(a, b linkforge.DimRow) int { return a.Hour.Compare(b.Hour) })
	for len(rows) > 0 || len(dims) > 0 {
		// A write takes whole hours, so that an hour's dimension rows
		// commit with its minutes.
		n := min(len(rows), maxRowsPerWrite)
		var end time.Time
		if n < len(rows) {
			end = rows[n].Bucket.Truncate(time.Hour)
			for n > 0 && !rows[n-1].Bucket.Before(end) {
				n--
			}
			if n == 0 { // one hour of more than maxRowsPerWrite minutes cannot be: an hour has 60
				n = len(rows)
				end = time.Time{}
			}
		}
		k := len(dims)
		if !end.IsZero() {
			k = 0
			for k < len(dims) && dims[k].Hour.Before(end) {
				k++
			}
		}
		if err := h.st.UpsertClicks(ctx, node, rows[:n], dims[:k]); err != nil {
			return fmt.Errorf("import visits: link %q: %w", lh.link.Slug, err)
		}
		rows, dims = rows[n:], dims[k:]
		if h.opt.Progress != nil {
			// A link's year of history takes many writes: the API's
			// write deadline moves on with each.
			h.opt.Progress()
		}
	}
	// Retention's own step, for this link only: the minutes and hours
	// past the window leave the raw tables, their counts kept in the
	// aggregates and the pruned totals.
	if !folded && lh.oldest.Before(minuteBefore) {
		for _, p := range []linkforge.Prune{
			{Kind: linkforge.PruneMinutes, Before: minuteBefore, After: id - 1, Limit: 1},
			{Kind: linkforge.PruneLinkHours, Before: hourBefore, After: id - 1, Limit: 1},
		} {
			if _, err := h.st.Prune(ctx, p); err != nil {
				return fmt.Errorf("import visits: link %q: %w", lh.link.Slug, err)
			}
		}
	}
	after, err := h.nodeTotal(id, node)
	if err != nil {
		return err
	}
	if added := after.total - before.total; added > 0 && lh.link.ImportedClicks > 0 {
		// The other shortener's count of these visits came with the
		// link; they are in buckets now. Only what this run added is
		// moved, so that a second run moves nothing.
		if _, err := h.st.UpdateLink(ctx, h.opt.TenantID, lh.link.DomainID, lh.link.Slug, func(l *linkforge.Link) error {
			l.ImportedClicks = max(0, l.ImportedClicks-added)
			return nil
		}); err != nil {
			return fmt.Errorf("import visits: link %q: %w", lh.link.Slug, err)
		}
	}
	h.res.Created += lh.visits - int(skipped)
	h.res.Skipped += int(skipped)
	return nil
}

type nodeTotals struct{ total, rows int64 }

// nodeTotal returns the node's all-time count of the link (its rows and
// what retention folded) and the part still in minute rows.
func (h *historian) nodeTotal(id int64, node string) (nodeTotals, error) {
	var t nodeTotals
	var err error
	if t.total, err = h.st.NodeClickTotal(h.ctx, id, node); err != nil {
		return t, fmt.Errorf("import visits: link %d: %w", id, err)
	}
	rows, _, err := h.st.NodeLinkClicks(h.ctx, node, id, time.Unix(0, 0).UTC(), time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC))
	if err != nil {
		return t, fmt.Errorf("import visits: link %d: %w", id, err)
	}
	for _, r := range rows {
		t.rows += r.Count
	}
	return t, nil
}

// MaxDimValues is the bound of distinct values of one dimension and
// traffic in one hour of a link, as the click journal keeps it
// (clicklog.MaxDimValues): past it, the least counted values go to
// linkforge.MoreValue.
const MaxDimValues = 64

// boundDims turns the counts into rows, keeping each (hour, dimension,
// traffic) within MaxDimValues values: the most counted ones, ties by
// value, so that a second import decides the same. skip leaves out the
// hours already folded away.
func boundDims(id int64, counts map[dimKey]int64, skip func(time.Time) bool) []linkforge.DimRow {
	type group struct {
		hour      time.Time
		dim       linkforge.Dimension
		automated bool
	}
	groups := map[group][]linkforge.DimRow{}
	for k, n := range counts {
		if skip(k.hour) {
			continue
		}
		g := group{k.hour, k.dim, k.automated}
		groups[g] = append(groups[g], linkforge.DimRow{LinkID: id, Hour: k.hour, Dim: k.dim, Automated: k.automated, Value: k.value, Count: n})
	}
	var out []linkforge.DimRow
	for _, rows := range groups {
		if len(rows) <= MaxDimValues {
			out = append(out, rows...)
			continue
		}
		slices.SortFunc(rows, func(a, b linkforge.DimRow) int {
			return cmp.Or(cmp.Compare(b.Count, a.Count), strings.Compare(a.Value, b.Value))
		})
		more := rows[MaxDimValues]
		more.Value, more.Count = linkforge.MoreValue, 0
		for _, r := range rows[MaxDimValues:] {
			more.Count += r.Count
		}
		out = append(out, rows[:MaxDimValues]...)
		out = append(out, more)
	}
	return out
}
