package main

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"
)

func TestBoundedPacer(t *testing.T) {
	tests := []struct {
		name     string
		pacer    vegeta.Pacer
		hits     uint64
		wantStop bool
	}{
		{"max rate under the cap", vegeta.Rate{}, 99, false},
		{"max rate at the cap", vegeta.Rate{}, 100, true},
		{"constant rate under the cap", vegeta.Rate{Freq: 10, Per: time.Second}, 5, false},
		{"constant rate past the cap", vegeta.Rate{Freq: 10, Per: time.Second}, 101, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, stop := boundedPacer{Pacer: tt.pacer, max: 100}.Pace(time.Second, tt.hits)
			if stop != tt.wantStop {
				t.Errorf("Pace(1s, %d) stop = %v, want %v", tt.hits, stop, tt.wantStop)
			}
		})
	}
}

func TestRoundRobin(t *testing.T) {
	urls := []string{"http://127.0.0.1:1/a", "http://127.0.0.1:1/b", "http://127.0.0.1:1/c"}
	tr := roundRobin(http.MethodHead, urls)
	var got []string
	for range 7 {
		var tgt vegeta.Target
		if err := tr(&tgt); err != nil {
			t.Fatal(err)
		}
		if tgt.Method != http.MethodHead {
			t.Fatalf("method %s, want HEAD", tgt.Method)
		}
		got = append(got, tgt.URL[len(tgt.URL)-1:])
	}
	if s := strings.Join(got, ""); s != "abcabca" {
		t.Errorf("sequence %s, want abcabca", s)
	}
}

// TestRoundRobinClicks: each request carries the next profile's query and
// headers, over the URLs in turn; vegeta's request copies the headers.
func TestRoundRobinClicks(t *testing.T) {
	urls := []string{"http://127.0.0.1:1/a", "http://127.0.0.1:1/b"}
	tr := roundRobinClicks(http.MethodGet, urls, browserClicks)
	for i := range 2 * len(browserClicks) {
		var tgt vegeta.Target
		if err := tr(&tgt); err != nil {
			t.Fatal(err)
		}
		p := browserClicks[i%len(browserClicks)]
		if want := urls[i%len(urls)] + p.query; tgt.URL != want {
			t.Errorf("request %d: URL %s, want %s", i, tgt.URL, want)
		}
		req, err := tgt.Request()
		if err != nil {
			t.Fatal(err)
		}
		for _, h := range []string{"User-Agent", "Referer", "X-Forwarded-For"} {
			if req.Header.Get(h) != p.header.Get(h) {
				t.Errorf("request %d: %s %q, want %q", i, h, req.Header.Get(h), p.header.Get(h))
			}
		}
	}
	if ua := browserClicks[0].header.Get("User-Agent"); !strings.Contains(ua, "iPhone") {
		t.Errorf("first profile's agent %q: the profiles were changed by a request", ua)
	}
}

// TestRunAttackCountsRedirects attacks the reference handler at the
// maximum rate with a request cap: the attack stops at the cap, every
// answer is a 302 (never followed), and each URL is hit in turn.
func TestRunAttackCountsRedirects(t *testing.T) {
	var mu sync.Mutex
	hits := map[string]int{}
	ref := newReferenceServer(testRoutes).Handler
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		hits[r.URL.Path]++
		mu.Unlock()
		ref.ServeHTTP(w, r)
	}))
	defer srv.Close()

	var seen int
	res := runAttack(context.Background(), attackSpec{
		name:        "test",
		targeter:    roundRobin(http.MethodGet, []string{srv.URL + "/abc1234", srv.URL + "/hot"}),
		workers:     4,
		duration:    time.Minute, // the cap ends it long before
		maxRequests: 500,
		onResult:    func(*vegeta.Result) { seen++ },
	})
	if res.metrics.Requests != 500 || seen != 500 {
		t.Fatalf("%d requests, %d results seen; want 500 (the cap)", res.metrics.Requests, seen)
	}
	if res.found != 500 || res.errors != 0 {
		t.Errorf("found %d, errors %d; want 500 and 0", res.found, res.errors)
	}
	if hits["/abc1234"] != 250 || hits["/hot"] != 250 || len(hits) != 2 {
		t.Errorf("server saw %v; want 250 of each slug and no followed redirect", hits)
	}
	if res.throughput() <= 0 {
		t.Errorf("throughput %v, want > 0", res.throughput())
	}
	if s := res.errorSummary(); s != "" {
		t.Errorf("errorSummary = %q, want empty", s)
	}
}

func TestRunAttackCountsErrors(t *testing.T) {
	srv := httptest.NewServer(newReferenceServer(testRoutes).Handler)
	defer srv.Close()

	res := runAttack(context.Background(), attackSpec{
		name:        "test",
		targeter:    roundRobin(http.MethodGet, []string{srv.URL + "/hot", srv.URL + "/missing"}),
		rate:        vegeta.Rate{Freq: 1000, Per: time.Second},
		workers:     2,
		duration:    time.Minute,
		maxRequests: 100,
	})
	if res.found != 50 || res.errors != 50 {
		t.Fatalf("found %d, errors %d; want 50 and 50", res.found, res.errors)
	}
	if s := res.errorSummary(); !strings.Contains(s, "404×50") {
		t.Errorf("errorSummary = %q, want it to name 404×50", s)
	}
	row := resultRow("redirect", "reference", "1000/s", res, "a note")
	if row.errors != 50 || row.requests != 100 || !strings.HasPrefix(row.notes, "a note; statuses 404×50") {
		t.Errorf("row %+v: want 50 errors of 100 requests and the notes then the statuses", row)
	}
}

// TestRunAttackStopsOnCancel: a cancelled context ends an attack that has
// neither reached its duration nor its cap.
func TestRunAttackStopsOnCancel(t *testing.T) {
	srv := httptest.NewServer(newReferenceServer(testRoutes).Handler)
	defer srv.Close()
	ctx, cancel := context.WithCancel(context.Background())
	var once sync.Once
	res := runAttack(ctx, attackSpec{
		name:        "test",
		targeter:    roundRobin(http.MethodGet, []string{srv.URL + "/hot"}),
		workers:     2,
		duration:    time.Hour,
		maxRequests: 1 << 40,
		onResult:    func(*vegeta.Result) { once.Do(cancel) },
	})
	if res.found == 0 {
		t.Fatal("no request before the cancel")
	}
}
