package web

import (
	"cmp"
	"fmt"
	"html"
	"net/netip"
	"slices"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/redirect"
)

// netipAddr is a client address (redirect.Handler.ClientAddr).
type netipAddr = netip.Addr

// sortValues orders values by count descending, then value.
func sortValues(vs []linkforge.ValueCount) {
	slices.SortFunc(vs, func(a, b linkforge.ValueCount) int {
		if c := cmp.Compare(b.Count, a.Count); c != 0 {
			return c
		}
		return strings.Compare(a.Value, b.Value)
	})
}

// readShareForm reads the password form's body (redirect.ReadForm).
func readShareForm(c echo.Context) error {
	if c.Request().PostForm != nil {
		return nil
	}
	return redirect.ReadForm(c, "send the password as an application/x-www-form-urlencoded form with the field password")
}

// shareTitle is the page's heading (HTML, escaped).
func shareTitle(sh linkforge.Share) string {
	if sh.Tag != "" {
		return "Stats of tag " + html.EscapeString(sh.Tag)
	}
	return "Stats of /" + html.EscapeString(sh.Slug)
}

// writeSharePage answers a share page: the visitor pages' document and
// headers (noindex, no script), never stored, since its numbers change
// and may be behind a password; the CSP lets its range form post.
func writeSharePage(c echo.Context, status int, title, inner string) error {
	p := redirect.PageOf(status, redirect.Document(title, `<div class="share-page">`+inner+`</div>`))
	return redirect.WriteForm(c, &p)
}

// writeShareForm answers the password form of a protected share, msg (an
// error) above it.
func writeShareForm(c echo.Context, status, days int, msg string) error {
	var b strings.Builder
	b.WriteString(`<p>These stats are protected by a password.</p>`)
	if msg != "" {
		b.WriteString(`<p class="alert" role="alert" id="share-error">` + html.EscapeString(msg) + `</p>`)
	}
	b.WriteString(`<form method="post"><input type="hidden" name="days" value="` + strconv.Itoa(days) + `">
<label for="password">Password</label><input id="password" name="password" type="password" required autocomplete="current-password" maxlength="200">
<button type="submit" id="share-unlock">Show stats</button></form>`)
	return writeSharePage(c, status, "Protected stats", b.String())
}

// renderShareStats is the page's body: the totals, the chart of the
// range's days and the breakdowns. It names no target URL: a share shows
// counts, and a protected link's target is never to be shown.
func renderShareStats(sh linkforge.Share, st shareStats, days int, pw string) string {
	var b strings.Builder
	if sh.Tag != "" {
		fmt.Fprintf(&b, `<p>Clicks on the %d links tagged <code>%s</code>`, st.links, html.EscapeString(sh.Tag))
		if st.more {
			fmt.Fprintf(&b, ` (the first %d)`, maxShareLinks)
		}
		b.WriteString(`.</p>`)
	} else {
		fmt.Fprintf(&b, `<p>Clicks on the short link <code>/%s</code>.</p>`, html.EscapeString(sh.Slug))
	}
	b.WriteString(`<dl class="share-totals">`)
	total := func(id, label string, n int64) {
		fmt.Fprintf(&b, `<div><dt>%s</dt><dd id="%s">%s</dd></div>`, label, id, formatCount(n))
	}
	total("share-total", "All time", st.total)
	total("share-human", "Human", st.human)
	total("share-automated", "Automated", st.automated)
	b.WriteString(`</dl>`)
	if st.imported > 0 {
		fmt.Fprintf(&b, `<p>All time includes %s clicks imported from another shortener.</p>`, formatCount(st.imported))
	}

	var rangeTotal, rangeHuman int64
	var peak int64 = 1
	for _, d := range st.days {
		rangeTotal += d.Count
		rangeHuman += d.Human
		peak = max(peak, d.Count)
	}
	fmt.Fprintf(&b, `<h2>Last %d days</h2>`, days)
	b.WriteString(`<form method="` + shareFormMethod(sh) + `" class="share-range"><label for="days">Range</label><select id="days" name="days">`)
	for _, n := range []int{7, 30, 90} {
		sel := ""
		if n == days {
			sel = " selected"
		}
		fmt.Fprintf(&b, `<option value="%d"%s>Last %d days</option>`, n, sel, n)
	}
	b.WriteString(`</select>`)
	if sh.PasswordHash != "" {
		// The password again, as typed: the range is a new post.
		b.WriteString(`<input type="hidden" name="password" value="` + html.EscapeString(pw) + `">`)
	}
	b.WriteString(`<button type="submit">Show</button></form>`)
	fmt.Fprintf(&b, `<div class="share-chart" role="img" aria-label="Clicks per day over the last %d days: %s in all">`,
		days, formatCount(rangeTotal))
	for _, d := range st.days {
		h := d.Count * 100 / peak
		fmt.Fprintf(&b, `<span style="height:%d%%" title="%s: %s"></span>`, h, d.Start.Format("2006-01-02"), formatCount(d.Count))
	}
	b.WriteString(`</div>`)
	fmt.Fprintf(&b, `<p id="share-range-total">%s clicks in these %d days, %s of them human.</p>`,
		formatCount(rangeTotal), days, formatCount(rangeHuman))
	b.WriteString(`<div class="share-dims">`)
	for _, d := range st.dims {
		fmt.Fprintf(&b, `<section><h2>%s</h2>`, d.title)
		if d.b.Total == 0 {
			b.WriteString(`<p>No clicks.</p></section>`)
			continue
		}
		b.WriteString(`<table><tbody>`)
		for _, v := range d.b.Values {
			fmt.Fprintf(&b, `<tr><td>%s</td><td>%s</td></tr>`, html.EscapeString(v.Value), formatCount(v.Count))
		}
		if d.b.Rest > 0 {
			fmt.Fprintf(&b, `<tr><td>Other</td><td>%s</td></tr>`, formatCount(d.b.Rest))
		}
		b.WriteString(`</tbody></table></section>`)
	}
	b.WriteString(`</div><p>Read-only stats shared by the link's owner. Times are UTC.</p>`)
	return b.String()
}

// shareFormMethod is the range form's method: a protected share's page
// is only shown to a post that brings the password.
func shareFormMethod(sh linkforge.Share) string {
	if sh.PasswordHash != "" {
		return "post"
	}
	return "get"
}

// formatCount writes n with thousands separators (1,234,567).
func formatCount(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, r := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(r)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}
