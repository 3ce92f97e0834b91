package clienttest_test

import (
	"bytes"
	"context"
	"errors"
	"maps"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/linkforge/linkforge/client"
)

func mustClient(t *testing.T, s *server, opts ...client.Option) *client.Client {
	t.Helper()
	c, err := client.New(s.URL, s.Token, opts...)
	if err != nil {
		t.Fatalf("client.New: %v", err)
	}
	return c
}

// sleepVia is a client's wait that calls *f: a test sets f to record the
// waits, or move the server's clock, instead of waiting.
func sleepVia(f *func(context.Context, time.Duration) error) client.Option {
	return client.WithSleep(func(ctx context.Context, d time.Duration) error { return (*f)(ctx, d) })
}

// roundTripFunc is an http.RoundTripper of a function.
type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// mustAPIError returns err as *client.Error with the status and code.
func mustAPIError(t *testing.T, err error, status int, code string) *client.Error {
	t.Helper()
	var e *client.Error
	if !errors.As(err, &e) {
		t.Fatalf("error %v (%T), want *client.Error %d %s", err, err, status, code)
	}
	if e.Status != status || e.Code != code || e.Title == "" {
		t.Fatalf("error %+v, want status %d, code %q and a title", e, status, code)
	}
	return e
}

func ptr[T any](v T) *T { return &v }

func slugsOf(links []client.Link) []string {
	var s []string
	for _, l := range links {
		s = append(s, l.Slug)
	}
	return s
}

// TestClientLinks: create, get, update (set and clear), list with its
// filters and sorts, iterate page by page, delete; bad input and conflicts
// come back as *client.Error with the problem's code and fields.
func TestClientLinks(t *testing.T) {
	s := newServer(t, serverOpts{})
	c := mustClient(t, s)
	ctx := context.Background()

	exp := time.Now().Add(48 * time.Hour).UTC().Truncate(time.Second)
	l, err := c.CreateLink(ctx, client.NewLink{URL: "https://example.com/spring", Slug: "spring", Title: "Spring sale",
		ExpiresAt: &exp, MaxClicks: ptr(int64(100)), FallbackURL: "https://example.com/over",
		Tags: []string{"launch", "sale"}, Password: "s3cret", DeviceURLs: &client.DeviceURLs{IOS: "https://apps.apple.com/x"}})
	if err != nil {
		t.Fatalf("CreateLink: %v", err)
	}
	if l.Slug != "spring" || l.ShortURL != publicURL+"/spring" || l.URL != "https://example.com/spring" ||
		l.Title == nil || *l.Title != "Spring sale" || l.ExpiresAt == nil || !l.ExpiresAt.Equal(exp) ||
		l.MaxClicks == nil || *l.MaxClicks != 100 || l.FallbackURL == nil || *l.FallbackURL != "https://example.com/over" ||
		!slices.Equal(l.Tags, []string{"launch", "sale"}) || !l.PasswordProtected ||
		l.DeviceURLs == nil || l.DeviceURLs.IOS != "https://apps.apple.com/x" || l.ID == "" || l.CreatedAt.IsZero() {
		t.Fatalf("created %+v", l)
	}
	got, err := c.Link(ctx, "spring")
	if err != nil || got.ID != l.ID || !got.UpdatedAt.Equal(l.UpdatedAt) {
		t.Fatalf("Link = %+v, %v; want %+v", got, err, l)
	}

	up, err := c.UpdateLink(ctx, "spring", client.LinkUpdate{URL: ptr("https://example.com/summer"), Tags: []string{"summer"},
		ClearExpiresAt: true, ClearMaxClicks: true, ClearPassword: true, ClearTitle: true})
	if err != nil {
		t.Fatalf("UpdateLink: %v", err)
	}
	if up.URL != "https://example.com/summer" || up.ExpiresAt != nil || up.MaxClicks != nil || up.PasswordProtected ||
		up.Title != nil || !slices.Equal(up.Tags, []string{"summer"}) ||
		// untouched
		up.FallbackURL == nil || *up.FallbackURL != "https://example.com/over" || up.DeviceURLs == nil {
		t.Fatalf("updated %+v", up)
	}

	// Bad input: the field named, nothing changed.
	_, err = c.UpdateLink(ctx, "spring", client.LinkUpdate{URL: ptr("ftp://example.com/")})
	e := mustAPIError(t, err, http.StatusBadRequest, client.CodeInvalid)
	if len(e.Fields) == 0 || e.Fields[0].Field != "url" || e.Method != http.MethodPatch || e.Path != "/api/v1/links/spring" {
		t.Errorf("bad url: %+v, want the field url", e)
	}
	if !strings.Contains(e.Error(), "url") {
		t.Errorf("Error() = %q, want the field named", e.Error())
	}
	if got, _ := c.Link(ctx, "spring"); got.URL != "https://example.com/summer" {
		t.Errorf("after a refused update the url is %q", got.URL)
	}
	_, err = c.CreateLink(ctx, client.NewLink{URL: "https://example.com/", Slug: "spring"})
	mustAPIError(t, err, http.StatusConflict, client.CodeConflict)

	// Listing: five more links, created in order.
	for _, slug := range []string{"alpha", "beta", "gamma", "delta", "epsilon"} {
		if _, err := c.CreateLink(ctx, client.NewLink{URL: "https://example.com/" + slug, Slug: slug, Tags: []string{"greek"}}); err != nil {
			t.Fatalf("CreateLink %s: %v", slug, err)
		}
	}
	page, err := c.ListLinks(ctx, client.ListOptions{Limit: 2})
	if err != nil || !slices.Equal(slugsOf(page.Links), []string{"epsilon", "delta"}) || page.NextCursor == "" {
		t.Fatalf("first page = %v %q, %v; want epsilon, delta and a cursor", slugsOf(page.Links), page.NextCursor, err)
	}
	var all []string
	for l, err := range c.Links(ctx, client.ListOptions{Limit: 2, Tags: []string{"greek"}, Sort: "slug"}) {
		if err != nil {
			t.Fatalf("Links: %v", err)
		}
		all = append(all, l.Slug)
	}
	if want := []string{"alpha", "beta", "delta", "epsilon", "gamma"}; !slices.Equal(all, want) {
		t.Errorf("iterated %v, want %v", all, want)
	}
	page, err = c.ListLinks(ctx, client.ListOptions{Q: "SUMMER", State: "active"})
	if err != nil || !slices.Equal(slugsOf(page.Links), []string{"spring"}) || page.NextCursor != "" {
		t.Errorf("q=SUMMER: %v %q, %v", slugsOf(page.Links), page.NextCursor, err)
	}
	_, err = c.ListLinks(ctx, client.ListOptions{Sort: "sideways"})
	if e := mustAPIError(t, err, http.StatusBadRequest, client.CodeInvalid); len(e.Fields) == 0 || e.Fields[0].Field != "sort" {
		t.Errorf("bad sort: %+v", e)
	}
	// Stopping the iteration early stops fetching.
	n := 0
	for range c.Links(ctx, client.ListOptions{Limit: 1}) { //nolint:errcheck // only the number of pages fetched is asserted
		n++
		if n == 2 {
			break
		}
	}
	if n != 2 {
		t.Errorf("broke out after %d links", n)
	}

	if err := c.DeleteLink(ctx, "spring"); err != nil {
		t.Fatalf("DeleteLink: %v", err)
	}
	_, err = c.Link(ctx, "spring")
	mustAPIError(t, err, http.StatusNotFound, client.CodeNotFound)
	if !client.IsStatus(err, http.StatusNotFound) {
		t.Errorf("IsStatus(%v, 404) = false", err)
	}
	mustAPIError(t, c.DeleteLink(ctx, "spring"), http.StatusNotFound, client.CodeNotFound)

	// A token of another tenant sees none of it.
	_, other := s.newToken("globex")
	oc, _ := client.New(s.URL, other)
	_, err = oc.Link(ctx, "alpha")
	mustAPIError(t, err, http.StatusNotFound, client.CodeNotFound)
	// And a wrong token nothing at all.
	bad, _ := client.New(s.URL, "lf_nope")
	_, err = bad.ListLinks(ctx, client.ListOptions{})
	mustAPIError(t, err, http.StatusUnauthorized, client.CodeUnauthorized)
}

// TestClientBulk: each item answered with the status a single create
// would get, in input order, problems decoded.
func TestClientBulk(t *testing.T) {
	s := newServer(t, serverOpts{})
	c := mustClient(t, s)
	res, err := c.CreateLinks(context.Background(), []client.NewLink{
		{URL: "https://example.com/1", Slug: "one"},
		{URL: "not a url", Slug: "two"},
		{URL: "https://example.com/3", Slug: "one"},
	})
	if err != nil {
		t.Fatalf("CreateLinks: %v", err)
	}
	if len(res) != 3 {
		t.Fatalf("%d results, want 3", len(res))
	}
	if res[0].Status != 201 || res[0].Link == nil || res[0].Link.Slug != "one" || res[0].Err != nil {
		t.Errorf("item 0: %+v", res[0])
	}
	if res[1].Status != 400 || res[1].Err == nil || res[1].Err.Code != client.CodeInvalid || len(res[1].Err.Fields) == 0 || res[1].Err.Fields[0].Field != "url" {
		t.Errorf("item 1: %+v", res[1])
	}
	if res[2].Status != 409 || res[2].Err == nil || res[2].Err.Code != client.CodeConflict || res[2].Err.Status != 409 {
		t.Errorf("item 2: %+v", res[2])
	}
	_, err = c.CreateLinks(context.Background(), nil)
	mustAPIError(t, err, http.StatusBadRequest, client.CodeInvalid)
}

// TestClientStats: clicks through the real redirect path, flushed by the
// real counter, read back through every stats method.
func TestClientStats(t *testing.T) {
	s := newServer(t, serverOpts{})
	c := mustClient(t, s)
	ctx := context.Background()
	for _, slug := range []string{"hot", "cold"} {
		if _, err := c.CreateLink(ctx, client.NewLink{URL: "https://example.com/" + slug, Slug: slug}); err != nil {
			t.Fatal(err)
		}
	}
	for range 3 {
		s.click("hot", "https://www.example.org/post")
	}
	s.click("cold", "")
	s.flush()

	st, err := c.LinkStats(ctx, "hot", client.StatsOptions{})
	if err != nil || st.Total != 3 || st.Interval != "minute" || sumBuckets(st.Buckets) != 3 {
		t.Errorf("LinkStats = %+v, %v; want 3 clicks by minute", st, err)
	}
	now := time.Now().UTC()
	st, err = c.TenantStats(ctx, client.StatsOptions{From: now.Add(-2 * time.Hour), To: now.Add(time.Hour), Interval: "hour"})
	if err != nil || st.Total != 4 || st.Interval != "hour" || sumBuckets(st.Buckets) != 4 {
		t.Errorf("TenantStats = %+v, %v; want 4 clicks by hour", st, err)
	}
	b, err := c.LinkBreakdown(ctx, "hot", client.DimReferrer, client.RangeOptions{})
	if err != nil || b.Dimension != "referrer" || b.Total != 3 || b.Rest != 0 ||
		!slices.Equal(b.Values, []client.ValueCount{{Value: "example.org", Count: 3}}) {
		t.Errorf("LinkBreakdown = %+v, %v; want example.org 3", b, err)
	}
	b, err = c.TenantBreakdown(ctx, client.DimReferrer, client.RangeOptions{Limit: 1})
	if err != nil || b.Total != 4 || b.Rest != 1 || !slices.Equal(b.Values, []client.ValueCount{{Value: "example.org", Count: 3}}) {
		t.Errorf("TenantBreakdown = %+v, %v; want example.org 3, rest 1", b, err)
	}
	b, err = c.TenantBreakdown(ctx, client.DimBrowser, client.RangeOptions{})
	if err != nil || !slices.Equal(b.Values, []client.ValueCount{{Value: "Chrome", Count: 4}}) {
		t.Errorf("browsers = %+v, %v", b, err)
	}
	top, err := c.TopLinks(ctx, client.RangeOptions{})
	if err != nil || top.Total != 4 || !slices.Equal(top.Links, []client.SlugCount{
		{Slug: "hot", Domain: "lf.test", ShortURL: publicURL + "/hot", Count: 3},
		{Slug: "cold", Domain: "lf.test", ShortURL: publicURL + "/cold", Count: 1}}) {
		t.Errorf("TopLinks = %+v, %v", top, err)
	}
	_, err = c.LinkBreakdown(ctx, "hot", "shoe-size", client.RangeOptions{})
	mustAPIError(t, err, http.StatusNotFound, client.CodeNotFound)
	if l, _ := c.Link(ctx, "hot"); l.Clicks != 3 {
		t.Errorf("clicks of hot = %d, want 3", l.Clicks)
	}
}

func sumBuckets(bs []client.Bucket) int64 {
	var n int64
	for _, b := range bs {
		n += b.Count
	}
	return n
}

// TestClientTagsQRImportExport: tags with counts, both QR formats, an
// export streamed into a writer and imported by another tenant from a
// reader, with an error line.
func TestClientTagsQRImportExport(t *testing.T) {
	s := newServer(t, serverOpts{})
	c := mustClient(t, s)
	ctx := context.Background()
	for i, slug := range []string{"a1", "a2", "b1"} {
		tags := []string{"all"}
		if i < 2 {
			tags = append(tags, "a")
		}
		if _, err := c.CreateLink(ctx, client.NewLink{URL: "https://example.com/" + slug, Slug: slug, Tags: tags}); err != nil {
			t.Fatal(err)
		}
	}
	tags, err := c.Tags(ctx)
	if err != nil || !slices.Equal(tags, []client.TagCount{{Tag: "all", Links: 3}, {Tag: "a", Links: 2}}) {
		t.Errorf("Tags = %+v, %v", tags, err)
	}

	svg, ct, err := c.QR(ctx, "a1", client.QROptions{Format: "svg"})
	if err != nil || ct != "image/svg+xml" || !bytes.Contains(svg, []byte("<svg")) {
		t.Errorf("QR svg: %s, %q, %v", svg[:min(len(svg), 40)], ct, err)
	}
	png, ct, err := c.QR(ctx, "a1", client.QROptions{Format: "png", Size: 128})
	if err != nil || ct != "image/png" || !bytes.HasPrefix(png, []byte("\x89PNG\r\n\x1a\n")) {
		t.Errorf("QR png: %q, %v", ct, err)
	}
	_, _, err = c.QR(ctx, "a1", client.QROptions{Size: 10})
	if e := mustAPIError(t, err, http.StatusBadRequest, client.CodeInvalid); len(e.Fields) == 0 || e.Fields[0].Field != "size" {
		t.Errorf("QR size 10: %+v", e)
	}

	var csv bytes.Buffer
	n, err := c.Export(ctx, "csv", &csv)
	lines := strings.Split(strings.TrimSpace(csv.String()), "\n")
	if err != nil || n != int64(csv.Len()) || len(lines) != 4 || lines[0] != "slug,url,title,tags,created_at,expires_at,max_clicks,clicks,fallback_url,device_ios,device_android,device_desktop,password_hash,domain,updated_at,expired_at,redirect_status,forward_query,rules,variants,og,utm" {
		t.Fatalf("Export csv: %d bytes, %q, %v", n, csv.String(), err)
	}
	var js bytes.Buffer
	if _, err := c.Export(ctx, "json", &js); err != nil || !strings.HasPrefix(strings.TrimSpace(js.String()), "[") || !strings.Contains(js.String(), `"slug":"b1"`) {
		t.Errorf("Export json: %s, %v", js.String(), err)
	}

	_, other := s.newToken("globex")
	oc, _ := client.New(s.URL, other)
	file := csv.String() + "bad,not a url,,,,,,\n"
	res, err := oc.Import(ctx, "csv", strings.NewReader(file))
	if err != nil || res.Created != 0 || res.Failed != 4 {
		// a1, a2, b1 are acme's: 409 lines; the last is invalid.
		t.Fatalf("Import = %+v, %v", res, err)
	}
	codes := map[int]string{}
	for _, e := range res.Errors {
		if e.Problem == nil {
			t.Fatalf("error line %d without a problem", e.Line)
		}
		codes[e.Line] = e.Problem.Code
	}
	if want := map[int]string{2: "conflict", 3: "conflict", 4: "conflict", 5: "invalid"}; !maps.Equal(codes, want) {
		t.Errorf("error lines %v, want %v", codes, want)
	}
	// The owner re-imports its own export: skipped, not overwritten.
	res, err = c.Import(ctx, "csv", strings.NewReader(csv.String()))
	if err != nil || res.Created != 0 || res.Skipped != 3 || res.Failed != 0 {
		t.Errorf("re-import = %+v, %v", res, err)
	}
	_, err = c.Import(ctx, "xml", strings.NewReader("<links/>"))
	mustAPIError(t, err, http.StatusBadRequest, client.CodeInvalid)
}
