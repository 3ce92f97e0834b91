package web_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/linkforge/linkforge/internal/testdb"
	"github.com/linkforge/linkforge/password"
	"github.com/linkforge/linkforge/web"
)

// bulkHangGuard bounds a wait that only a bug makes long: the tests below
// assert order and counts, never durations.
const bulkHangGuard = 20 * time.Second

// bulkPasswordBody is a bulk create of n password links.
func bulkPasswordBody(n int) string {
	items := make([]string, n)
	for i := range items {
		items[i] = fmt.Sprintf(`{"url":"https://example.com/b%d","password":"pw-%d"}`, i, i)
	}
	return `{"links":[` + strings.Join(items, ",") + `]}`
}

// TestUnlockDoesNotQueueBehindBulkHashing: three tenants' bulk creates of
// password links hold every hash slot (a test hook keeps each hash in its
// slot until released); another tenant's password unlock still answers its
// 302 while they do, and the bulks then finish with every link created.
func TestUnlockDoesNotQueueBehindBulkHashing(t *testing.T) {
	st := testdb.SQLite(t)
	e := newEnv(t, st)
	_, visitorTok := mustTenantToken(t, st, "visitor")
	e.mustCreate(visitorTok, `{"slug":"locked","url":"https://example.com/secret","password":"open sesame"}`)

	entered := make(chan struct{}, 1000)
	gate := make(chan struct{})
	web.SetHashHook(e.srv, func() {
		entered <- struct{}{}
		<-gate
	})
	released := false
	release := func() {
		if !released {
			released = true
			close(gate)
		}
	}
	defer release()

	const bulks, perBulk = 3, 50
	var wg sync.WaitGroup
	results := make([]response, bulks)
	tenants := make([]int64, bulks)
	for i := range bulks {
		tenant, tok := mustTenantToken(t, st, fmt.Sprintf("bulk%d", i))
		tenants[i] = tenant
		wg.Go(func() { results[i] = e.do(http.MethodPost, "/api/v1/bulk/links", tok, bulkPasswordBody(perBulk)) })
	}
	// Every hash slot is held by a bulk's hash, and the other hashes the
	// bulks' workers want wait: a request queues at most its workers'
	// hashes, not its 50.
	slots := web.PasswordSlots(e.srv)
	wanted := bulks * web.BulkHashWorkers
	holding := min(web.HashSlots(e.srv), wanted)
	saturated := password.SlotStats{Running: [2]int{0, holding}, Waiting: [2]int{0, wanted - holding}}
	for range holding {
		select {
		case <-entered:
		case <-time.After(bulkHangGuard):
			t.Fatal("the bulks never hashed")
		}
	}
	waitSlots(t, slots, func(st password.SlotStats) bool { return st == saturated })

	unlocked := make(chan response, 1)
	go func() { unlocked <- e.postPassword("locked", "open sesame", "") }()
	select {
	case r := <-unlocked:
		mustUnlockCookie(t, r, "/locked")
	case <-time.After(bulkHangGuard):
		st, _ := slots.Watch()
		t.Fatalf("the unlock did not answer while bulk hashes held their slots (%+v): it queued behind bulk work", st)
	}
	// The unlock came and went while the bulks held their slots.
	if st, _ := slots.Watch(); st != saturated {
		t.Errorf("after the unlock: slots %+v, want %+v (the bulks still saturated)", st, saturated)
	}

	release()
	wg.Wait()
	for i, r := range results {
		mustStatus(t, r, http.StatusOK)
		body := mustJSON[struct {
			Results []struct {
				Status int `json:"status"`
			} `json:"results"`
		}](t, r)
		if len(body.Results) != perBulk {
			t.Fatalf("bulk %d: %d results, want %d", i, len(body.Results), perBulk)
		}
		for k, res := range body.Results {
			if res.Status != http.StatusCreated {
				t.Errorf("bulk %d item %d: status %d", i, k, res.Status)
			}
		}
	}
	var n int
	for _, tenant := range tenants {
		for _, l := range mustTenantLinks(t, st, tenant) {
			if l.PasswordHash == "" {
				t.Errorf("link %s has no password hash", l.Slug)
			}
			n++
		}
	}
	if n != bulks*perBulk {
		t.Errorf("%d links stored, want %d", n, bulks*perBulk)
	}
}

// waitSlots waits, without polling, until the counts of slots satisfy ok.
func waitSlots(t *testing.T, slots *password.Slots, ok func(password.SlotStats) bool) {
	t.Helper()
	timeout := time.After(bulkHangGuard)
	for {
		st, changed := slots.Watch()
		if ok(st) {
			return
		}
		select {
		case <-changed:
		case <-timeout:
			t.Fatalf("password slots stay at %+v", st)
		}
	}
}

// TestSlowBulkIsAnswered: a bulk of password links whose hashing takes
// twice the server's write timeout (a test hook makes each hash take a
// fifth of it) still gets its 200 with every link, instead of a cut
// connection after its links were stored.
func TestSlowBulkIsAnswered(t *testing.T) {
	const writeTimeout = time.Second
	st := testdb.SQLite(t)
	pub, _ := url.Parse(publicURL)
	srv, err := web.New(web.Config{Store: st, PublicURL: pub, RateLimit: 1e6, RateBurst: 1e6,
		PasswordParams: testPasswordParams, WriteTimeout: writeTimeout})
	if err != nil {
		t.Fatal(err)
	}
	// The slow part is the work itself: the answer is judged by its
	// status, never by how long it took.
	web.SetHashHook(srv, func() { time.Sleep(writeTimeout / 5) })
	hs := httptest.NewUnstartedServer(srv)
	hs.Config.WriteTimeout = writeTimeout
	hs.Start()
	t.Cleanup(hs.Close)
	tenant, tok := mustTenantToken(t, st, "acme")

	const n = 5 * 2 * web.BulkHashWorkers // 2 × writeTimeout of hashing
	req, _ := http.NewRequest(http.MethodPost, hs.URL+"/api/v1/bulk/links", strings.NewReader(bulkPasswordBody(n)))
	req.Header.Set("Authorization", "Bearer "+tok)
	req.Header.Set("Content-Type", "application/json")
	resp, err := hs.Client().Do(req)
	if err != nil {
		t.Fatalf("bulk of %d password links: no answer: %v (stored: %d links)", n, err, len(mustTenantLinks(t, st, tenant)))
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("read the answer: %v", err)
	}
	r := response{method: req.Method, status: resp.StatusCode, header: resp.Header, body: body}
	mustStatus(t, r, http.StatusOK)
	got := mustJSON[struct {
		Results []struct {
			Status int `json:"status"`
		} `json:"results"`
	}](t, r)
	if len(got.Results) != n {
		t.Fatalf("%d results, want %d", len(got.Results), n)
	}
	for i, res := range got.Results {
		if res.Status != http.StatusCreated {
			t.Errorf("item %d: status %d", i, res.Status)
		}
	}
	if stored := len(mustTenantLinks(t, st, tenant)); stored != n {
		t.Errorf("%d links stored, want %d", stored, n)
	}
}
