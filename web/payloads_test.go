package web_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/internal/testdb"
	"github.com/linkforge/linkforge/web"
)

// payloadEvent is a delivered webhook body, with the fields that name its
// link: link.* events say slug, the click events say link.
type payloadEvent struct {
	Type string `json:"type"`
	Data struct {
		Slug     string  `json:"slug"`
		Link     string  `json:"link"`
		Domain   *string `json:"domain"`
		ShortURL *string `json:"short_url"`
	} `json:"data"`
}

// recorder is a webhook receiver on 127.0.0.1 that keeps every body.
type recorder struct {
	mu     sync.Mutex
	events []payloadEvent
	raw    []string
}

func newRecorder(t *testing.T) (*recorder, string) {
	t.Helper()
	rec := &recorder{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		var ev payloadEvent
		if err := json.Unmarshal(b, &ev); err != nil {
			t.Errorf("receiver: %v: %s", err, b)
		}
		rec.mu.Lock()
		rec.events, rec.raw = append(rec.events, ev), append(rec.raw, string(b))
		rec.mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(srv.Close)
	return rec, srv.URL
}

// wait returns the bodies once n have arrived.
func (r *recorder) wait(t *testing.T, n int) ([]payloadEvent, []string) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		r.mu.Lock()
		evs, raw := append([]payloadEvent(nil), r.events...), append([]string(nil), r.raw...)
		r.mu.Unlock()
		if len(evs) >= n {
			return evs, raw
		}
		if time.Now().After(deadline) {
			t.Fatalf("the receiver got %d events, want %d: %q", len(evs), n, raw)
		}
		time.Sleep(10 * time.Millisecond) // the receiver has no event to wait on but the next request
	}
}

// TestWebhookPayloadsNameDomain (issue 39, item 23): the same slug on the
// public host and on a tenant's domain are two links; their link.created,
// link.clicks and link.limit_reached deliveries carry domain and short_url
// beside the slug, exactly as the API's link body says them, so that a
// receiver can tell them apart.
func TestWebhookPayloadsNameDomain(t *testing.T) {
	testdb.Each(t, func(t *testing.T, st linkforge.Store) {
		rec, hook := newRecorder(t)
		e := newEnv(t, st, verifyNone, func(c *web.Config) { c.Now = time.Now; c.WebhookAllowPrivate = true })
		tenant, tok := mustTenantToken(t, st, "acme")
		mustStatus(t, e.do(http.MethodPost, "/api/v1/domains", tok, `{"host":"go.acme.com"}`), http.StatusCreated)
		mustStatus(t, e.do(http.MethodPost, "/api/v1/webhooks", tok,
			`{"url":"`+hook+`/hook","events":["link.created","link.clicks","link.limit_reached"]}`), http.StatusCreated)

		pub := mustJSON[domainLink](t, e.do(http.MethodPost, "/api/v1/links", tok, `{"slug":"launch","url":"https://example.com/pub"}`))
		dom := mustJSON[domainLink](t, e.do(http.MethodPost, "/api/v1/links", tok,
			`{"slug":"launch","url":"https://example.com/dom","domain":"go.acme.com","max_clicks":2}`))
		if pub.Domain == dom.Domain || pub.ShortURL == dom.ShortURL {
			t.Fatalf("the API tells the links apart no better: %+v %+v", pub, dom)
		}
		byDomain := map[string]domainLink{pub.Domain: pub, dom.Domain: dom}

		links := mustTenantLinks(t, st, tenant)
		if len(links) != 2 {
			t.Fatalf("%d links stored, want 2", len(links))
		}
		bucket := time.Now().UTC().Truncate(time.Minute)
		var rows []linkforge.RollupRow
		for _, l := range links {
			rows = append(rows, linkforge.RollupRow{LinkID: l.ID, Bucket: bucket, Count: 3})
		}
		if err := st.UpsertClicks(t.Context(), "node-1", rows, nil); err != nil {
			t.Fatal(err)
		}
		startDeliveries(t, st)

		evs, raw := rec.wait(t, 5) // two link.created, two link.clicks, one link.limit_reached
		seen := map[string]int{}
		for i, ev := range evs {
			slug := ev.Data.Slug
			if ev.Type != linkforge.EventLinkCreated {
				slug = ev.Data.Link
			}
			if ev.Data.Domain == nil || ev.Data.ShortURL == nil {
				t.Errorf("%s without domain or short_url: %s", ev.Type, raw[i])
				continue
			}
			want, ok := byDomain[*ev.Data.Domain]
			if !ok || slug != "launch" || *ev.Data.ShortURL != want.ShortURL {
				t.Errorf("%s names domain %q, short_url %q, slug %q; want one of %+v: %s",
					ev.Type, *ev.Data.Domain, *ev.Data.ShortURL, slug, byDomain, raw[i])
				continue
			}
			seen[ev.Type+" "+*ev.Data.Domain]++
		}
		for _, k := range []string{"link.created " + pub.Domain, "link.created " + dom.Domain,
			"link.clicks " + pub.Domain, "link.clicks " + dom.Domain, "link.limit_reached " + dom.Domain} {
			if seen[k] != 1 {
				t.Errorf("%s: %d events, want 1 (all: %q)", k, seen[k], raw)
			}
		}
	})
}

// TestTopLinksNameDomain (issue 39, item 23): the same slug on two domains
// is two entries of the top links, told apart by domain and short_url as
// the link bodies say them.
func TestTopLinksNameDomain(t *testing.T) {
	testdb.Each(t, func(t *testing.T, st linkforge.Store) {
		t.Parallel()
		e := newEnv(t, st, verifyNone)
		tenant, tok := mustTenantToken(t, st, "acme")
		mustStatus(t, e.do(http.MethodPost, "/api/v1/domains", tok, `{"host":"go.acme.com"}`), http.StatusCreated)
		pub := mustJSON[domainLink](t, e.do(http.MethodPost, "/api/v1/links", tok, `{"slug":"launch","url":"https://example.com/pub"}`))
		dom := mustJSON[domainLink](t, e.do(http.MethodPost, "/api/v1/links", tok, `{"slug":"launch","url":"https://example.com/dom","domain":"go.acme.com"}`))

		h := e.clock.Now().UTC().Truncate(time.Hour)
		var (
			rows []linkforge.RollupRow
			dims []linkforge.DimRow
		)
		for _, l := range mustTenantLinks(t, st, tenant) {
			n := int64(4)
			if l.DomainID != linkforge.PublicDomainID {
				n = 9
			}
			rows = append(rows, linkforge.RollupRow{LinkID: l.ID, Bucket: h.Add(5 * time.Minute), Count: n})
			dims = append(dims, linkforge.DimRow{LinkID: l.ID, Hour: h, Dim: linkforge.DimTraffic, Value: linkforge.TrafficHuman, Count: n})
		}
		if err := st.UpsertClicks(t.Context(), "node-1", rows, dims); err != nil {
			t.Fatal(err)
		}
		e.clock.Set(h.Add(10 * time.Minute))
		type entry struct {
			Slug     string  `json:"slug"`
			Domain   *string `json:"domain"`
			ShortURL *string `json:"short_url"`
			Count    int64   `json:"count"`
		}
		check := func(q string, want []domainLink, counts []int64) {
			t.Helper()
			r := e.do(http.MethodGet, "/api/v1/stats/links"+q, tok, "")
			mustStatus(t, r, http.StatusOK)
			got := mustJSON[struct{ Links []entry }](t, r).Links
			if len(got) != len(want) {
				t.Fatalf("top links%s: %s, want %d entries", q, r.body, len(want))
			}
			for i, w := range want {
				g := got[i]
				if g.Slug != w.Slug || g.Domain == nil || *g.Domain != w.Domain || g.ShortURL == nil || *g.ShortURL != w.ShortURL || g.Count != counts[i] {
					t.Errorf("top links%s entry %d: %s, want domain %q short_url %q count %d", q, i, r.body, w.Domain, w.ShortURL, counts[i])
				}
			}
		}
		check("", []domainLink{dom, pub}, []int64{9, 4})
		check("?limit=1", []domainLink{dom}, []int64{9})
		check("?traffic=human", []domainLink{dom, pub}, []int64{9, 4})

		// A tie: one slug with as many clicks on both domains ranks the
		// public host (domain id 0) first, on every path.
		pubLink := mustTenantLink(t, st, tenant, "launch")
		if err := st.UpsertClicks(t.Context(), "node-2",
			[]linkforge.RollupRow{{LinkID: pubLink.ID, Bucket: h.Add(6 * time.Minute), Count: 5}},
			[]linkforge.DimRow{{LinkID: pubLink.ID, Hour: h, Dim: linkforge.DimTraffic, Value: linkforge.TrafficHuman, Count: 5}}); err != nil {
			t.Fatal(err)
		}
		check("", []domainLink{pub, dom}, []int64{9, 9})
		check("?limit=1", []domainLink{pub}, []int64{9})
		// Three days: the whole-day queries (the candidates' on PostgreSQL).
		check("?from="+h.Add(-72*time.Hour).Format(time.RFC3339)+"&to="+h.Add(time.Hour).Format(time.RFC3339),
			[]domainLink{pub, dom}, []int64{9, 9})
		check("?traffic=human", []domainLink{pub, dom}, []int64{9, 9})
	})
}
