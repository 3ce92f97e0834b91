package web_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/dashboard"
	"github.com/linkforge/linkforge/internal/testdb"
	"github.com/linkforge/linkforge/links"
	"github.com/linkforge/linkforge/web"
)

// linkMessage is the feed's link message, its link kept as decoded JSON
// so that it compares with the API's answer field by field.
type linkMessage struct {
	Type string         `json:"type"`
	Op   string         `json:"op"`
	Link map[string]any `json:"link"`
}

// mustReadLinkMessage reads the next message of conn, which must be a link
// message.
func mustReadLinkMessage(t *testing.T, conn *websocket.Conn) linkMessage {
	t.Helper()
	conn.SetReadDeadline(time.Now().Add(liveGuard))
	_, data, err := conn.ReadMessage()
	if err != nil {
		t.Fatalf("read feed: %v", err)
	}
	var m linkMessage
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatalf("feed message %s: %v", data, err)
	}
	if m.Type != "link" {
		t.Fatalf("feed message %s, want a link message", data)
	}
	return m
}

// decoded is an API answer's body as a JSON object.
func decoded(t *testing.T, r response) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(r.body, &m); err != nil {
		t.Fatalf("answer %s: %v", r, err)
	}
	return m
}

// mustWatched waits until the hub has registered a viewer of each tenant:
// the handshake answers before the hub has registered the client.
func mustWatched(t *testing.T, hub *dashboard.Hub, tenants ...int64) {
	t.Helper()
	deadline := time.Now().Add(liveGuard)
	for _, id := range tenants {
		for !hub.Watched(id) {
			if time.Now().After(deadline) {
				t.Fatalf("tenant %d's viewer never registered", id)
			}
			time.Sleep(time.Millisecond)
		}
	}
}

// TestLiveLinkMessages: each successful create, update and delete through
// the API reaches the open feeds of the link's tenant as a link message
// whose link is the API's own answer (for deleted: its id and slug); failed
// writes send nothing, and another tenant's feed hears none of it.
func TestLiveLinkMessages(t *testing.T) {
	testdb.Each(t, func(t *testing.T, st linkforge.Store) {
		tenantA, tokenA := mustTenantToken(t, st, "acme")
		tenantB, tokenB := mustTenantToken(t, st, "globex")
		hub := mustLiveHub(t)
		e := newEnv(t, st, func(c *web.Config) { useHub(c, hub) })
		connA, r, err := e.dialLive(nil, http.Header{"Authorization": {"Bearer " + tokenA}})
		if err != nil {
			t.Fatalf("dial A: %v (%s)", err, r)
		}
		connB, r, err := e.dialLive([]string{"linkforge.v1", "bearer." + tokenB}, http.Header{"Origin": {e.url}})
		if err != nil {
			t.Fatalf("dial B: %v (%s)", err, r)
		}
		mustWatched(t, hub, tenantA, tenantB)

		// Every field the API renders, the round 2 ones included.
		created := e.do(http.MethodPost, "/api/v1/links", tokenA, `{"slug":"launch","url":"https://example.com/a",
			"title":"Launch <day>","tags":["q4","promo"],"max_clicks":100,"fallback_url":"https://example.com/over",
			"expires_at":"2030-01-02T03:04:05Z","password":"hunter2","device_urls":{"ios":"https://apps.example.com/ios"}}`)
		mustStatus(t, created, http.StatusCreated)
		// Failed writes: nothing is sent.
		mustStatus(t, e.do(http.MethodPost, "/api/v1/links", tokenA, `{"slug":"launch","url":"https://example.com/a"}`), http.StatusConflict)
		mustStatus(t, e.do(http.MethodPatch, "/api/v1/links/launch", tokenA, `{"url":"ftp://x"}`), http.StatusBadRequest)
		mustStatus(t, e.do(http.MethodPatch, "/api/v1/links/launch", tokenB, `{"url":"https://example.com/b"}`), http.StatusNotFound)
		mustStatus(t, e.do(http.MethodDelete, "/api/v1/links/nope", tokenA, ""), http.StatusNotFound)
		updated := e.do(http.MethodPatch, "/api/v1/links/launch", tokenA, `{"url":"https://example.com/b","title":null,"tags":["q1"]}`)
		mustStatus(t, updated, http.StatusOK)
		read := e.do(http.MethodGet, "/api/v1/links/launch", tokenA, "")
		mustStatus(t, read, http.StatusOK)
		mustStatus(t, e.do(http.MethodDelete, "/api/v1/links/launch", tokenA, ""), http.StatusNoContent)

		wants := []struct {
			op   string
			link map[string]any
		}{
			{"created", decoded(t, created)},
			{"updated", decoded(t, updated)},
			{"deleted", map[string]any{"id": decoded(t, created)["id"], "slug": "launch"}},
		}
		if !reflect.DeepEqual(wants[1].link, decoded(t, read)) {
			t.Fatalf("PATCH answered %s, GET %s", updated.body, read.body)
		}
		for _, w := range wants {
			m := mustReadLinkMessage(t, connA)
			if m.Op != w.op || !reflect.DeepEqual(m.Link, w.link) {
				t.Errorf("tenant A's feed: %s %v\nwant %s %v", m.Op, m.Link, w.op, w.link)
			}
		}

		// Tenant B's own write is the first message on its feed: had A's
		// writes reached it, they would have been queued before.
		mine := e.mustCreate(tokenB, `{"slug":"sale","url":"https://example.com/s"}`)
		if m := mustReadLinkMessage(t, connB); m.Op != "created" || m.Link["slug"] != mine.Slug {
			t.Fatalf("tenant B's first message %s %v, want its own created %s", m.Op, m.Link, mine.Slug)
		}
	})
}

// TestLiveLinkMessagesOfImport: an import's created links reach the feed,
// read back from the store (the importer does not learn their ids), each
// exactly as GET answers it, and only the first 1,000 of them: more would
// overrun the viewers' send queues.
func TestLiveLinkMessagesOfImport(t *testing.T) {
	testdb.Each(t, func(t *testing.T, st linkforge.Store) {
		tenant, token := mustTenantToken(t, st, "acme")
		hub := mustLiveHub(t)
		e := newEnv(t, st, func(c *web.Config) { useHub(c, hub) })
		conn, r, err := e.dialLive(nil, http.Header{"Authorization": {"Bearer " + token}})
		if err != nil {
			t.Fatalf("dial: %v (%s)", err, r)
		}
		mustWatched(t, hub, tenant)

		const links, announced = 1005, 1000
		var file strings.Builder
		file.WriteString("slug,url,title\n")
		for i := range links {
			fmt.Fprintf(&file, "imp-%04d,https://example.com/%d,Imported %d\n", i, i, i)
		}
		if res := e.mustImport(token, "csv", []byte(file.String())); res.Created != links {
			t.Fatalf("import created %d links, want %d (%+v)", res.Created, links, res)
		}
		// A write after the import: the message that follows the import's.
		after := e.mustCreate(token, `{"slug":"after","url":"https://example.com/after"}`)

		seen := map[string]bool{}
		for n := 0; ; n++ {
			m := mustReadLinkMessage(t, conn)
			if m.Op != "created" {
				t.Fatalf("message %d: op %q, want created", n, m.Op)
			}
			slug, _ := m.Link["slug"].(string)
			if slug == after.Slug {
				if n != announced {
					t.Fatalf("%d messages of the import of %d links, want %d", n, links, announced)
				}
				break
			}
			if seen[slug] || !strings.HasPrefix(slug, "imp-") {
				t.Fatalf("message %d: link %v (repeated or not imported)", n, m.Link)
			}
			seen[slug] = true
			// A sample compared field by field with GET: ids and the
			// store's timestamps included.
			if n%250 == 0 {
				get := e.do(http.MethodGet, "/api/v1/links/"+slug, token, "")
				mustStatus(t, get, http.StatusOK)
				if want := decoded(t, get); !reflect.DeepEqual(m.Link, want) {
					t.Errorf("imported %s on the feed %v, GET %v", slug, m.Link, want)
				}
			}
		}
	})
}

// TestShowPeerLink: another node's write is shown as this node's API
// renders the link now; an event whose link is gone, or whose slug now
// names another link, is skipped; a deletion needs no read.
func TestShowPeerLink(t *testing.T) {
	testdb.Each(t, func(t *testing.T, st linkforge.Store) {
		tenant, token := mustTenantToken(t, st, "acme")
		hub := mustLiveHub(t)
		e := newEnv(t, st, func(c *web.Config) { useHub(c, hub) })
		conn, r, err := e.dialLive(nil, http.Header{"Authorization": {"Bearer " + token}})
		if err != nil {
			t.Fatalf("dial: %v (%s)", err, r)
		}
		mustWatched(t, hub, tenant)
		l := mustStoreLink(t, st, linkforge.Link{TenantID: tenant, Slug: "peer", URL: "https://example.com/p", Title: "From node 2"})
		// The feed as cmd builds it beside the server: the same hub, store
		// and addresses.
		feed := links.NewFeed(hub, st, links.Addresses{Public: mustURL(t, publicURL), Hosts: web.Cache(e.srv)}.Base, nil)
		show := func(op linkforge.LinkOp, id int64, slug string) {
			t.Helper()
			if err := feed.ShowPeerLink(t.Context(), linkforge.LinkEvent{Op: op, TenantID: tenant, LinkID: id, Slug: slug}); err != nil {
				t.Fatalf("ShowPeerLink %s %s: %v", op, slug, err)
			}
		}
		show(linkforge.LinkUpdated, l.ID+1, "peer")   // the slug names another link now: skipped
		show(linkforge.LinkCreated, 999, "gone")      // deleted since: skipped
		show(linkforge.LinkUpdated, 0, "gone")        // an import's, gone: skipped
		show(linkforge.LinkUpdated, l.ID, "peer")     // shown
		show(linkforge.LinkDeleted, 999, "other-one") // shown without a read

		get := e.do(http.MethodGet, "/api/v1/links/peer", token, "")
		mustStatus(t, get, http.StatusOK)
		if m := mustReadLinkMessage(t, conn); m.Op != "updated" || !reflect.DeepEqual(m.Link, decoded(t, get)) {
			t.Errorf("first message %s %v, want updated %s", m.Op, m.Link, get.body)
		}
		want := map[string]any{"id": "999", "slug": "other-one"}
		if m := mustReadLinkMessage(t, conn); m.Op != "deleted" || !reflect.DeepEqual(m.Link, want) {
			t.Errorf("second message %s %v, want deleted %v", m.Op, m.Link, want)
		}
	})
}
