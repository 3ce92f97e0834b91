package storetest

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/linkforge/linkforge"
)

// Run runs the conformance cases as subtests of t. open is called once per
// case, one case after the other, and returns a fresh, migrated, empty
// store; it registers the store's cleanup with the t it is given.
func Run(t *testing.T, open func(t *testing.T) linkforge.Store) {
	t.Helper()
	cases := []struct {
		name string
		run  func(t *testing.T, s linkforge.Store)
	}{
		{"Ping", testPing},
		{"QRSettings", testQRSettings}, // qrsettings.go
		{"Tenants", testTenants},
		{"Tokens", testTokens},
		{"TokenRoles", testTokenRoles}, // people.go
		{"TenantTokens", testTenantTokens},
		{"Audit", testAudit},             // audit.go
		{"Users", testUsers},             // users.go
		{"Invitations", testInvitations}, // users.go
		{"Links", testLinks},
		{"TenantIsolation", testTenantIsolation},
		{"Pagination", testPagination},
		{"UpdateLink", testUpdateLink},
		{"DeleteLink", testDeleteLink},
		{"Rollup", testRollup},
		{"Stats", testStats},
		{"ClickDims", testClickDims},
		{"Concurrency", testConcurrency},
		{"AlarmsFollowLinks", testAlarmsFollowLinks},
		{"ClaimAlarms", testClaimAlarms},
		{"FailAndRetryAlarm", testFailAndRetryAlarm},
		{"FailAlarmsBatch", testFailAlarmsBatch},
		{"ListAlarms", testListAlarms},
		{"ExpireLinks", testExpireLinks},
		{"ClaimConcurrency", testClaimConcurrency},
		{"ImportLinksSchedulesAlarms", testImportLinksSchedulesAlarms},
		{"Breakdown", testBreakdown},
		{"TopLinks", testTopLinks},
		{"TopLinksTieAtCut", testTopLinksTieAtCut},
		{"AggregatesAgree", testAggregatesAgree},
		{"AggregatesRecompute", testAggregatesRecompute},
		{"AggregatesAreSums", testAggregatesAreSums}, // aggregatesums.go
		{"ExportLinks", testExportLinks},
		{"QueryLinksSorts", testQueryLinksSorts},
		{"QueryLinksClicksFollowRollup", testQueryLinksClicksFollowRollup},
		{"QueryLinksFilters", testQueryLinksFilters},
		{"TagCounts", testTagCounts},
		{"TagCountsConcurrent", testTagCountsConcurrent},
		{"CreateLinks", testCreateLinks},
		{"LinkFields", testLinkFields},
		{"LinkNotesArchive", testLinkNotesArchive}, // linkextras.go
		{"LinkUTM", testLinkUTM},                   // utm.go
		{"UTMTemplates", testUTMTemplates},
		{"Campaigns", testCampaigns},
		{"Tags", testTags},
		{"LinksByURL", testLinksByURL},
		{"RenameLink", testRenameLink},
		{"AliasSlugsTaken", testAliasSlugsTaken},
		{"TenantQuota", testTenantQuota},
		{"MaxLinks", testMaxLinks},
		{"MaxLinksConcurrent", testMaxLinksConcurrent},
		{"ClickGrants", testClickGrants},
		{"NodeUniques", testNodeUniques}, // uniques.go
		// traffic.go
		{"TrafficStats", testTrafficStats},
		{"TrafficBreakdown", testTrafficBreakdown},
		{"SourceBreakdown", testSourceBreakdown}, // source.go
		{"RollupAutomated", testRollupAutomated},
		{"ExportDailyDims", testExportDailyDims},
		// webhooks.go
		{"WebhookOutbox", testWebhookOutbox},
		{"ClickEventsOfOneFlush", testClickEventsOfOneFlush},
		{"ClaimDeliveries", testClaimDeliveries},
		{"ClaimRoundRobin", testClaimRoundRobin},
		{"WebhookQuota", testWebhookQuota},
		{"WebhookState", testWebhookState},
		{"EventsNameLinkAddress", testEventsNameLinkAddress},
		{"EnqueueDelivery", testEnqueueDelivery}, // webhooktest.go
		// domains.go
		{"Domains", testDomains},
		{"DomainLinks", testDomainLinks},
		{"DomainBulkAndList", testDomainBulkAndList},
		{"DeleteDomain", testDeleteDomain},
		{"ImportOnDomains", testImportOnDomains},
		{"DomainVerifications", testDomainVerifications},
		{"DomainQuota", testDomainQuota}, // domainlimits.go
		{"DomainByID", testDomainByID},
		{"DomainDocuments", testDomainDocuments}, // deeplinks.go
		{"Shares", testShares},                   // shares.go
		{"ShareQuota", testShareQuota},
		{"TargetSchemes", testTargetSchemes}, // schemes.go
		// retention.go
		{"Retention", testRetention},
		{"RetentionTraffic", testRetentionTraffic},
		{"RetentionDeliveriesAudit", testRetentionDeliveriesAudit},
		{"RetentionSessions", testRetentionSessions},
		{"RetentionExactBound", testRetentionExactBound},
		// operator.go
		{"LinkStates", testLinkStates},
		{"UnsafeLinks", testUnsafeLinks},
		{"LinkHealth", testLinkHealth},
		{"Reports", testReports},
		{"Operator", testOperator},
		{"TargetEntries", testTargetEntries},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			c.run(t, open(t))
		})
	}
}

// RunSearch runs the listing filter cases alone, for a store configured to
// take another search path than Run's.
func RunSearch(t *testing.T, open func(t *testing.T) linkforge.Store) {
	t.Helper()
	testQueryLinksFilters(t, open(t))
}

func testPing(t *testing.T, s linkforge.Store) {
	if err := s.Ping(t.Context()); err != nil {
		t.Fatalf("Ping of an open store: %v", err)
	}
}

// t0 is the start of a UTC minute, two minutes before an hour boundary;
// the rollup and stats cases count from it.
var t0 = time.Date(2026, 11, 30, 10, 58, 0, 0, time.UTC)

// minute returns the start of the i-th minute after t0.
func minute(i int) time.Time { return t0.Add(time.Duration(i) * time.Minute) }

func ptr[T any](v T) *T { return &v }

// newLink returns a link with only its required fields set.
func newLink(tenantID int64, slug string) linkforge.Link {
	return linkforge.Link{TenantID: tenantID, Slug: slug, URL: "https://example.com/" + slug}
}

func mustTenant(t *testing.T, s linkforge.Store, name string) linkforge.Tenant {
	t.Helper()
	tn, err := s.EnsureTenant(t.Context(), name)
	if err != nil {
		t.Fatalf("EnsureTenant(%q): %v", name, err)
	}
	return tn
}

func mustCreateLink(t *testing.T, s linkforge.Store, l linkforge.Link) linkforge.Link {
	t.Helper()
	got, err := s.CreateLink(t.Context(), l)
	if err != nil {
		t.Fatalf("CreateLink(%q): %v", l.Slug, err)
	}
	return got
}

func mustTenantLink(t *testing.T, s linkforge.Store, tenantID int64, slug string) linkforge.Link {
	t.Helper()
	l, err := s.TenantLink(t.Context(), tenantID, linkforge.PublicDomainID, slug)
	if err != nil {
		t.Fatalf("TenantLink(%d, %q): %v", tenantID, slug, err)
	}
	return l
}

func mustUpsert(t *testing.T, s linkforge.Store, nodeID string, rows ...linkforge.RollupRow) {
	t.Helper()
	if err := s.UpsertRollup(t.Context(), nodeID, rows); err != nil {
		t.Fatalf("UpsertRollup(%q, %d rows): %v", nodeID, len(rows), err)
	}
}

func mustStats(t *testing.T, s linkforge.Store, q linkforge.StatsQuery) linkforge.Stats {
	t.Helper()
	st, err := s.Stats(t.Context(), q)
	if err != nil {
		t.Fatalf("Stats(%+v): %v", q, err)
	}
	return st
}

// wantCode fails unless err carries the application error code.
func wantCode(t *testing.T, err error, code, what string) {
	t.Helper()
	if got := linkforge.ErrorCode(err); got != code {
		t.Errorf("%s: error %v (code %q), want code %q", what, err, got, code)
	}
}

func sameTime(a, b *time.Time) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return a.Equal(*b)
}

func fmtTime(p *time.Time) string {
	if p == nil {
		return "nil"
	}
	return p.Format(time.RFC3339Nano)
}

func fmtInt(p *int64) string {
	if p == nil {
		return "nil"
	}
	return fmt.Sprint(*p)
}

// checkTime reports a time that a store returned other than in UTC, to the
// microsecond: both backends must return equal values.
func checkTime(t *testing.T, what string, v time.Time) {
	t.Helper()
	if v.Location() != time.UTC {
		t.Errorf("%s: time %v is in %v, want UTC", what, v, v.Location())
	}
	if !v.Equal(v.Truncate(time.Microsecond)) {
		t.Errorf("%s: time %v has sub-microsecond digits", what, v)
	}
}

// checkLink compares every field of got with want (times by instant), and
// checks the invariants of a link returned by a store.
func checkLink(t *testing.T, what string, got, want linkforge.Link) {
	t.Helper()
	var diffs []string
	add := func(field, g, w string) { diffs = append(diffs, fmt.Sprintf("%s = %s, want %s", field, g, w)) }
	if got.ID != want.ID {
		add("ID", fmt.Sprint(got.ID), fmt.Sprint(want.ID))
	}
	if got.TenantID != want.TenantID {
		add("TenantID", fmt.Sprint(got.TenantID), fmt.Sprint(want.TenantID))
	}
	if got.Slug != want.Slug {
		add("Slug", got.Slug, want.Slug)
	}
	if got.URL != want.URL {
		add("URL", got.URL, want.URL)
	}
	if !sameTime(got.ExpiresAt, want.ExpiresAt) {
		add("ExpiresAt", fmtTime(got.ExpiresAt), fmtTime(want.ExpiresAt))
	}
	if !sameTime(got.ExpiredAt, want.ExpiredAt) {
		add("ExpiredAt", fmtTime(got.ExpiredAt), fmtTime(want.ExpiredAt))
	}
	if (got.MaxClicks == nil) != (want.MaxClicks == nil) || (got.MaxClicks != nil && *got.MaxClicks != *want.MaxClicks) {
		add("MaxClicks", fmtInt(got.MaxClicks), fmtInt(want.MaxClicks))
	}
	if got.FallbackURL != want.FallbackURL {
		add("FallbackURL", got.FallbackURL, want.FallbackURL)
	}
	if !slices.Equal(got.Tags, want.Tags) {
		add("Tags", fmt.Sprintf("%q", got.Tags), fmt.Sprintf("%q", want.Tags))
	}
	if got.Tags == nil {
		diffs = append(diffs, "Tags is nil, want a non-nil slice")
	}
	if !got.CreatedAt.Equal(want.CreatedAt) {
		add("CreatedAt", got.CreatedAt.Format(time.RFC3339Nano), want.CreatedAt.Format(time.RFC3339Nano))
	}
	if !got.UpdatedAt.Equal(want.UpdatedAt) {
		add("UpdatedAt", got.UpdatedAt.Format(time.RFC3339Nano), want.UpdatedAt.Format(time.RFC3339Nano))
	}
	if got.Clicks != want.Clicks {
		add("Clicks", fmt.Sprint(got.Clicks), fmt.Sprint(want.Clicks))
	}
	if got.Title != want.Title {
		add("Title", got.Title, want.Title)
	}
	if got.PasswordHash != want.PasswordHash {
		add("PasswordHash", got.PasswordHash, want.PasswordHash)
	}
	if got.DeviceURLs != want.DeviceURLs {
		add("DeviceURLs", fmt.Sprintf("%+v", got.DeviceURLs), fmt.Sprintf("%+v", want.DeviceURLs))
	}
	if got.ImportedClicks != want.ImportedClicks {
		add("ImportedClicks", fmt.Sprint(got.ImportedClicks), fmt.Sprint(want.ImportedClicks))
	}
	if got.UTMs() != want.UTMs() {
		add("UTM", fmt.Sprintf("%+v", got.UTMs()), fmt.Sprintf("%+v", want.UTMs()))
	}
	if got.Notes != want.Notes {
		add("Notes", fmt.Sprintf("%q", got.Notes), fmt.Sprintf("%q", want.Notes))
	}
	if got.Archived != want.Archived {
		add("Archived", fmt.Sprint(got.Archived), fmt.Sprint(want.Archived))
	}
	if !sameTime(got.ValidSince, want.ValidSince) {
		add("ValidSince", fmtTime(got.ValidSince), fmtTime(want.ValidSince))
	}
	if len(diffs) > 0 {
		t.Errorf("%s: link %q:\n\t%s", what, want.Slug, strings.Join(diffs, "\n\t"))
	}
	checkTime(t, what+": CreatedAt", got.CreatedAt)
	checkTime(t, what+": UpdatedAt", got.UpdatedAt)
	for _, p := range []*time.Time{got.ExpiresAt, got.ExpiredAt} {
		if p != nil {
			checkTime(t, what+": ExpiresAt/ExpiredAt", *p)
		}
	}
}

// withClicks returns l with its Clicks set, for comparisons.
func withClicks(l linkforge.Link, n int64) linkforge.Link {
	l.Clicks = n
	return l
}

// errAbort is what the UpdateLink callbacks of the cases return.
var errAbort = errors.New("storetest: abort the update")
