package main

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net/http"
	"sync/atomic"

	vegeta "github.com/tsenart/vegeta/v12/lib"
)

// benchDomain is the tenant's own domain in the https scenario: a name
// under .test (RFC 2606), which no resolver answers; the tool dials
// loopback and names the host in Host and SNI only.
const benchDomain = "go.bench.test"

// handshakeCount counts a client's TLS handshakes, and those of them that
// resumed a session: the proof that the resumption the row claims happened.
type handshakeCount struct{ full, resumed atomic.Int64 }

func (h *handshakeCount) note() string {
	return fmt.Sprintf("TLS handshakes %d full, %d resumed", h.full.Load(), h.resumed.Load())
}

// countedTLSConfig is the client's TLS for host: the bench certificate as
// the only root, SNI host, and a session cache of its own (resumption on;
// one per server, as a ticket of one means nothing to the other), counting
// its handshakes.
func countedTLSConfig(c benchCert, host string) (*tls.Config, *handshakeCount) {
	n := &handshakeCount{}
	return &tls.Config{
		RootCAs:            c.pool,
		ServerName:         host,
		ClientSessionCache: tls.NewLRUClientSessionCache(256),
		MinVersion:         tls.VersionTLS12,
		// Runs after verification, on full and resumed handshakes alike.
		VerifyConnection: func(cs tls.ConnectionState) error {
			if cs.DidResume {
				n.resumed.Add(1)
			} else {
				n.full.Add(1)
			}
			return nil
		},
	}, n
}

// withHost returns profiles each carrying Host: host, which is how a
// client reaches a domain that resolves to this machine; nil profiles
// become one with the Host header alone.
func withHost(profiles []clickProfile, host string) []clickProfile {
	if len(profiles) == 0 {
		return []clickProfile{{header: http.Header{"Host": {host}}}}
	}
	out := make([]clickProfile, len(profiles))
	for i, p := range profiles {
		p.header = p.header.Clone()
		p.header.Set("Host", host)
		out[i] = p
	}
	return out
}

// httpsTarget is one of the https scenario's five attacks.
type httpsTarget struct {
	name    string
	tr      vegeta.Targeter
	pid     int
	tlsCfg  *tls.Config
	results []attackResult
}

// runHTTPS measures the counted redirect of a link on a tenant's own
// domain: over plain HTTP against the same link on the public host (what
// the host lookup costs), and over HTTPS with TLS resumption against the
// reference over HTTPS with the same certificate. Two LinkForge servers:
// with --tls on, plain HTTP answers everything with a redirect to HTTPS,
// so the plain rows need one with --tls off. Rounds alternate all five
// targets, as in the redirect scenario.
func runHTTPS(ctx context.Context, b *bench) ([]row, error) {
	if b.cfg.target != "" {
		return nil, errors.New("https: starts linkforge with --tls manual itself; not with --target")
	}
	cert, err := newBenchCert(b.tmp, benchDomain)
	if err != nil {
		return nil, fmt.Errorf("https: %w", err)
	}
	public, onDomain := b.newLinks(b.cfg.links), onHost(b.newLinks(b.cfg.links), benchDomain)
	plain, err := b.start(ctx, b.cfg.backend, append(append([]benchLink{}, public...), onDomain...))
	if err != nil {
		return nil, err
	}
	defer plain.close()
	secureLinks := onHost(b.newLinks(b.cfg.links), benchDomain)
	secure, err := b.startWith(ctx, b.cfg.backend, secureLinks, b.cfg.flushEvery, "--tls", "manual",
		"--tls-cert", cert.certFile, "--tls-key", cert.keyFile, "--https-addr", "127.0.0.1:0", "--domain-verify", "none")
	if err != nil {
		return nil, err
	}
	defer secure.close()
	if secure.httpsBase == "" {
		return nil, errors.New(`https: linkforge logged no "listening for HTTPS" address`)
	}
	ref, refURLs, err := startReferenceFor(ctx, public)
	if err != nil {
		return nil, err
	}
	defer ref.stop()
	refTLS, refTLSURLs, err := startReferenceForCert(ctx, secureLinks, &cert)
	if err != nil {
		return nil, err
	}
	defer refTLS.stop()

	refCfg, refShakes := countedTLSConfig(cert, benchDomain)
	lfCfg, lfShakes := countedTLSConfig(cert, benchDomain)
	secureURLs := make([]string, len(secureLinks))
	for i, l := range secureLinks {
		secureURLs[i] = secure.httpsBase + "/" + l.slug
	}
	var profiles []clickProfile
	if b.cfg.clickHeaders == "browser" {
		profiles = browserClicks
	}
	hostProfiles := withHost(profiles, benchDomain)
	get := http.MethodGet
	targets := []*httpsTarget{
		{name: "reference", tr: roundRobinClicks(get, refURLs, profiles), pid: ref.pid()},
		{name: "linkforge-public", tr: roundRobinClicks(get, plain.urls(public), profiles), pid: plain.pid()},
		{name: "linkforge-domain", tr: roundRobinClicks(get, plain.urls(onDomain), hostProfiles), pid: plain.pid()},
		{name: "reference-https", tr: roundRobinClicks(get, refTLSURLs, profiles), pid: refTLS.pid(), tlsCfg: refCfg},
		{name: "linkforge-https", tr: roundRobinClicks(get, secureURLs, hostProfiles), pid: secure.pid(), tlsCfg: lfCfg},
	}
	for r := range b.cfg.rounds {
		b.log.Info("https: max rate", "round", r+1, "of", b.cfg.rounds)
		for _, tg := range targets {
			tg.results = append(tg.results, b.measureMaxTLS(ctx, tg.name, tg.tr, tg.pid, r == 0, tg.tlsCfg))
		}
	}
	return httpsRows(b, plain.label(), targets, refShakes, lfShakes), nil
}

// httpsRows are the https scenario's rows, each ratio paired by round.
func httpsRows(b *bench, label string, t []*httpsTarget, refShakes, lfShakes *handshakeCount) []row {
	ref, public, domain, refTLS, secure := t[0].results, t[1].results, t[2].results, t[3].results, t[4].results
	maxLabel := maxRateLabel(b.cfg.workers)
	baseline := "baseline; --click-headers " + b.cfg.clickHeaders
	x := func(a, base []attackResult, of string) string {
		return fmt.Sprintf("%s × %s", pairedRatios(a, base), of)
	}
	return []row{
		summarize(ref).row("https", "reference net/http (map)", maxLabel, baseline),
		summarize(public).row("https", label+" GET, counted, public host", maxLabel, x(public, ref, "reference")),
		summarize(domain).row("https", label+" GET, counted, own domain (Host)", maxLabel,
			x(domain, ref, "reference"), x(domain, public, "public host")),
		summarize(refTLS).row("https", "reference net/http (map), HTTPS", maxLabel,
			"baseline over HTTPS", x(refTLS, ref, "plain reference"), refShakes.note()),
		summarize(secure).row("https", label+" GET, counted, own domain, HTTPS", maxLabel,
			x(secure, refTLS, "reference HTTPS"), x(secure, public, "public host plain"), lfShakes.note()),
	}
}
