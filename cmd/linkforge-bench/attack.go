package main

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"sort"
	"strings"
	"sync/atomic"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"
)

// attackSpec is one bounded vegeta attack.
type attackSpec struct {
	name     string
	targeter vegeta.Targeter
	// rate is the offered load; the zero Rate means as fast as the workers
	// go (vegeta's "infinite" rate), which with a fixed number of workers
	// finds the maximum sustainable throughput.
	rate        vegeta.Rate
	workers     uint64 // fixed at max rate; the initial count at a constant rate
	duration    time.Duration
	maxRequests uint64
	// onResult, if set, sees every result, on the goroutine that reads them.
	onResult func(*vegeta.Result)
	// serverPID is the process under attack, whose CPU time is measured;
	// 0: unknown.
	serverPID int
	// tlsConfig is the client's for https:// targets (nil: Go's default).
	// A custom one leaves the transport on HTTP/1.1, as the plain attacks
	// are, so the two compare like for like.
	tlsConfig *tls.Config
}

// attackResult is what the scenarios report of an attack.
type attackResult struct {
	metrics vegeta.Metrics
	// found counts the 302 answers: the redirects a client received.
	found uint64
	// errors counts every result that is not a 302: transport errors and
	// other statuses alike (a redirect benchmark expects 302 only).
	errors uint64
	// cpuPerReq is the server process's CPU time per request over the
	// attack; 0 when not measured.
	cpuPerReq time.Duration
}

// throughput is the rate of 302s over the attack, in requests per second.
func (r attackResult) throughput() float64 {
	d := r.metrics.Duration + r.metrics.Wait
	if d <= 0 {
		return 0
	}
	return float64(r.found) / d.Seconds()
}

// errorSummary lists the distinct errors and statuses, for the notes.
func (r attackResult) errorSummary() string {
	if r.errors == 0 {
		return ""
	}
	var codes []string
	for code, n := range r.metrics.StatusCodes {
		if code != "302" {
			codes = append(codes, fmt.Sprintf("%s×%d", code, n))
		}
	}
	sort.Strings(codes)
	s := "statuses " + strings.Join(codes, " ")
	if len(r.metrics.Errors) > 0 {
		s += "; " + strings.Join(r.metrics.Errors[:min(3, len(r.metrics.Errors))], "; ")
	}
	return s
}

// boundedPacer stops an attack after max hits, whatever its pacer says:
// every attack is bounded in requests as well as in time.
type boundedPacer struct {
	vegeta.Pacer
	max uint64
}

func (p boundedPacer) Pace(elapsed time.Duration, hits uint64) (time.Duration, bool) {
	if hits >= p.max {
		return 0, true
	}
	return p.Pacer.Pace(elapsed, hits)
}

// maxAttackWorkers caps vegeta's worker growth at a constant rate: a
// server that stalls must not make the tool open thousands of connections.
const maxAttackWorkers = 2048

// newAttacker returns an attacker on a client of its own that never follows
// redirects (the 302 is the answer being measured, and its Location points
// off this machine), never uses a proxy, and keeps one connection per
// worker alive. The caller closes the transport's idle connections when
// the attack is over, so that no attack inherits another's connections.
func newAttacker(s attackSpec) (*vegeta.Attacker, *http.Transport) {
	maxWorkers := uint64(maxAttackWorkers)
	if s.rate.Freq == 0 {
		maxWorkers = s.workers
	}
	tr := &http.Transport{
		DialContext:         (&net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConnsPerHost: int(maxWorkers),
		TLSClientConfig:     s.tlsConfig,
	}
	client := &http.Client{
		Transport:     tr,
		Timeout:       10 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	atk := vegeta.NewAttacker(
		vegeta.Client(client),
		vegeta.Workers(s.workers),
		vegeta.MaxWorkers(maxWorkers),
		vegeta.MaxBody(0), // a 302 has no body worth keeping
	)
	return atk, tr
}

// runAttack runs s to its end (duration, request cap, or ctx) and returns
// its metrics. With serverPID set it also measures that process's CPU time
// per request.
func runAttack(ctx context.Context, s attackSpec) attackResult {
	cpu := startCPU(s.serverPID)
	atk, tr := newAttacker(s)
	defer tr.CloseIdleConnections()
	stop := context.AfterFunc(ctx, func() { atk.Stop() })
	defer stop()

	pacer := boundedPacer{Pacer: s.rate, max: s.maxRequests}
	var res attackResult
	for r := range atk.Attack(s.targeter, pacer, s.duration, s.name) {
		res.metrics.Add(r)
		if r.Code == http.StatusFound && r.Error == "" {
			res.found++
		} else {
			res.errors++
		}
		if s.onResult != nil {
			s.onResult(r)
		}
	}
	res.metrics.Close()
	res.cpuPerReq = cpu.perRequest(res.metrics.Requests)
	return res
}

// roundRobin returns a targeter that cycles through urls with method. It is
// safe for vegeta's concurrent workers.
func roundRobin(method string, urls []string) vegeta.Targeter {
	return roundRobinClicks(method, urls, nil)
}

// roundRobinClicks is roundRobin with each request carrying the next of
// profiles (nil: no headers of its own, so Go's short default User-Agent).
// Vegeta copies a target's header into each request, so the profiles are
// shared read-only.
func roundRobinClicks(method string, urls []string, profiles []clickProfile) vegeta.Targeter {
	var next atomic.Uint64
	return func(t *vegeta.Target) error {
		i := next.Add(1) - 1
		t.Method = method
		t.URL = urls[i%uint64(len(urls))]
		t.Header = nil
		if len(profiles) > 0 {
			p := profiles[i%uint64(len(profiles))]
			t.URL += p.query
			t.Header = p.header
		}
		t.Body = nil
		return nil
	}
}

// clickProfile is what a browser's click sends besides the path: the
// headers the redirect classifies (User-Agent, Referer, and the
// X-Forwarded-For of a proxy in front) and sometimes a utm_source.
type clickProfile struct {
	query  string
	header http.Header
}

// browserClicks are the profiles of --click-headers browser: phones and
// desktops of the common browsers, from social, search and mail, with
// client addresses of four countries (the tool's servers trust loopback as
// their proxy, so the addresses are looked up). Long, real User-Agent
// headers: their parsing is most of the classification's cost. Accept and
// Accept-Language as a browser's navigation sends them: a click without
// Accept is automated to LinkForge, since no browser omits it.
var browserClicks = []clickProfile{
	{"?utm_source=newsletter", http.Header{
		"User-Agent":      {"Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1"},
		"Accept":          {browserAccept},
		"Accept-Language": {"en-GB,en;q=0.9"},
		"Referer":         {"https://mail.example.com/"},
		"X-Forwarded-For": {"81.2.69.142"}}},
	{"", http.Header{
		"User-Agent":      {"Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.6478.71 Mobile Safari/537.36"},
		"Accept":          {browserAccept},
		"Accept-Language": {"en-US,en;q=0.9"},
		"Referer":         {"https://t.co/"},
		"X-Forwarded-For": {"8.8.8.8"}}},
	{"", http.Header{
		"User-Agent":      {"Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36 Edg/126.0.0.0"},
		"Accept":          {browserAccept},
		"Accept-Language": {"de-DE,de;q=0.9,en;q=0.8"},
		"Referer":         {"https://www.google.com/"},
		"X-Forwarded-For": {"193.0.6.139"}}},
	{"?utm_source=twitter", http.Header{
		"User-Agent":      {"Mozilla/5.0 (Macintosh; Intel Mac OS X 14_5) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Safari/605.1.15"},
		"Accept":          {browserAccept},
		"Accept-Language": {"ja-JP,ja;q=0.9"},
		"X-Forwarded-For": {"133.242.0.3"}}},
}

// browserAccept is the Accept of a browser's navigation.
const browserAccept = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"

// resultRow turns an attack into a table row.
func resultRow(scenario, target, rate string, r attackResult, notes ...string) row {
	n := append(notes[:len(notes):len(notes)], cpuNote(r.cpuPerReq))
	if s := r.errorSummary(); s != "" {
		n = append(n, s)
	}
	return row{
		scenario: scenario,
		target:   target,
		rate:     rate,
		measured: true,
		thr:      r.throughput(),
		p50:      r.metrics.Latencies.P50,
		p99:      r.metrics.Latencies.P99,
		requests: r.metrics.Requests,
		errors:   r.errors,
		notes:    strings.Join(nonEmpty(n), "; "),
	}
}

func nonEmpty(ss []string) []string {
	out := ss[:0:0]
	for _, s := range ss {
		if s != "" {
			out = append(out, s)
		}
	}
	return out
}

func maxRateLabel(workers uint64) string { return fmt.Sprintf("max, %d workers", workers) }

func constRateLabel(perSecond int) string { return fmt.Sprintf("%d/s", perSecond) }
