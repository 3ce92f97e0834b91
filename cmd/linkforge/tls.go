package main

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"os"
	"strconv"
	"strings"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/linkforge/linkforge/certs"
	"github.com/linkforge/linkforge/domain"
	"github.com/linkforge/linkforge/web"
)

// tlsConfig is the HTTPS part of the configuration (the flags of tlsFlags:
// --tls, --https-addr, --acme-*, --tls-cert, --tls-key; docs/adr/020-domains.md).
type tlsConfig struct {
	Mode          string // off, auto or manual
	HTTPSAddr     string
	ACMEDirectory string
	ACMEEmail     string
	ACMECA        string // PEM file of extra roots for the directory; read by serve
	CertFile      string // manual
	KeyFile       string // manual
}

// tlsFlags are global flags, as the others serve reads, appended to
// globalFlags in init so that they keep their own file.
var tlsFlags = []flagSpec{
	{"tls", "MODE", "off", "off; auto: certificates by ACME for the public URL's host and the verified domains, stored in the database, renewed before expiry; manual: --tls-cert and --tls-key"},
	{"https-addr", "ADDR", ":443", "HTTPS listen address when --tls is not off; --addr then answers ACME HTTP-01 challenges and domain verification URLs and redirects everything else to HTTPS"},
	{"acme-directory", "URL", certs.DefaultDirectory, "the ACME directory (--tls auto)"},
	{"acme-email", "EMAIL", "", "ACME account contact (--tls auto): the authority's expiry warnings go there"},
	{"acme-ca", "FILE", "", "PEM file of extra roots trusted for the ACME directory (--tls auto)"},
	{"tls-cert", "FILE", "", "PEM certificate chain (--tls manual)"},
	{"tls-key", "FILE", "", "PEM private key (--tls manual)"},
}

func init() { globalFlags = append(globalFlags, tlsFlags...) }

// buildTLSConfig validates the TLS flags into cfg.TLS; cfg.PublicURL is set.
func buildTLSConfig(cfg *config, get func(string) (string, string)) error {
	var t tlsConfig
	var source string
	t.Mode, source = get("tls")
	if t.Mode != "off" && t.Mode != "auto" && t.Mode != "manual" {
		return usagef("invalid %s %q: want off, auto or manual", source, t.Mode)
	}
	t.HTTPSAddr, source = get("https-addr")
	if _, port, err := net.SplitHostPort(t.HTTPSAddr); err != nil {
		return usagef("invalid %s %q: want host:port or :port", source, t.HTTPSAddr)
	} else if _, err := strconv.ParseUint(port, 10, 16); err != nil {
		return usagef("invalid %s %q: port must be a number from 0 to 65535", source, t.HTTPSAddr)
	}
	t.ACMEDirectory, source = get("acme-directory")
	if u, err := url.Parse(t.ACMEDirectory); err != nil || u.Scheme != "https" || u.Host == "" {
		return usagef("invalid %s %q: want an https:// URL", source, t.ACMEDirectory)
	}
	t.ACMEEmail, source = get("acme-email")
	if t.ACMEEmail != "" && !strings.Contains(t.ACMEEmail, "@") {
		return usagef("invalid %s %q: want an email address", source, t.ACMEEmail)
	}
	t.ACMECA, _ = get("acme-ca")
	var certSource, keySource string
	t.CertFile, certSource = get("tls-cert")
	t.KeyFile, keySource = get("tls-key")
	switch {
	case t.Mode == "manual" && (t.CertFile == "" || t.KeyFile == ""):
		return usagef("--tls manual needs --tls-cert and --tls-key")
	case t.Mode != "manual" && (t.CertFile != "" || t.KeyFile != ""):
		return usagef("%s and %s are for --tls manual", certSource, keySource)
	case t.Mode == "auto":
		host := cfg.PublicURL.Hostname()
		if _, err := netip.ParseAddr(host); err == nil || !strings.Contains(host, ".") {
			return usagef("--tls auto needs a --public-url whose host is a public DNS name, not %q: certificate authorities issue for those only", host)
		}
	}
	cfg.TLS = t
	return nil
}

// tlsFront is what serve adds for HTTPS: the certificates, the plain
// listener's challenges and redirect, and the state /readyz shows. A nil
// *tlsFront is --tls off.
type tlsFront struct {
	tlsConfig *tls.Config
	// wrap answers ACME challenges on --addr before next (auto only).
	wrap       func(next http.Handler) http.Handler
	status     func() certs.Status
	hostState  func(host string) certs.State
	publicHost string
	httpsPort  string
}

// newTLSFront builds the certificates of --tls auto or manual (nil for
// off), and registers their stop with lc: after both HTTP servers.
func (a *app) newTLSFront(lc *lifecycle, st store, id string, registry prometheus.Registerer) (*tlsFront, error) {
	t := a.cfg.TLS
	if t.Mode == "off" {
		return nil, nil
	}
	_, port, _ := net.SplitHostPort(t.HTTPSAddr)
	f := &tlsFront{publicHost: strings.ToLower(a.cfg.PublicURL.Hostname()), httpsPort: port}
	if t.Mode == "manual" {
		s, err := certs.LoadStatic(t.CertFile, t.KeyFile, registry, nil)
		if err != nil {
			return nil, failed("cannot load the certificate (--tls-cert, --tls-key)", err)
		}
		f.tlsConfig, f.wrap = s.TLSConfig(), s.HTTPHandler
		f.status = func() certs.Status { return s.Status(f.publicHost) }
		f.hostState = s.HostState
		return f, nil
	}
	roots, err := acmeRoots(t.ACMECA)
	if err != nil {
		return nil, failed("cannot read --acme-ca", err)
	}
	m, err := certs.New(certs.Config{
		Store:      st,
		Policy:     a.tlsPolicy(st),
		PublicHost: f.publicHost,
		Directory:  t.ACMEDirectory,
		Email:      t.ACMEEmail,
		Roots:      roots,
		HTTPAddr:   a.cfg.Addr,
		NodeID:     id,
		Logger:     a.log,
		Registerer: registry,
	})
	if err != nil {
		return nil, failed("cannot create certificate manager", err)
	}
	m.Start(a.ctx)
	lc.add("certs", componentStopBudget, m.Stop)
	f.tlsConfig, f.wrap, f.status, f.hostState = m.TLSConfig(), m.HTTPHandler, m.Status, m.HostState
	return f, nil
}

// tlsPolicy is the hosts --tls auto obtains certificates for: the public
// URL's host, and the tenants' verified domains (never a pending one).
func (a *app) tlsPolicy(domains domain.AllDomainsReader) certs.Policy {
	return certs.AnyOf(certs.AllowHosts(a.cfg.PublicURL.Hostname()), domain.AllowVerified(domains))
}

// acmeRoots is the system's roots plus those of file (none: nil, the
// system's alone).
func acmeRoots(file string) (*x509.CertPool, error) {
	if file == "" {
		return nil, nil
	}
	pemBytes, err := os.ReadFile(file) //nolint:gosec // G304: the operator's --acme-ca
	if err != nil {
		return nil, err
	}
	pool, err := x509.SystemCertPool()
	if err != nil {
		pool = x509.NewCertPool()
	}
	if !pool.AppendCertsFromPEM(pemBytes) {
		return nil, fmt.Errorf("%s: no PEM certificate", file)
	}
	return pool, nil
}

// acmeChallengePath is where ACME HTTP-01 challenges are fetched (RFC
// 8555, 8.3).
const acmeChallengePath = "/.well-known/acme-challenge/"

// plainHandler is --addr's handler: next itself with --tls off; else the
// ACME challenges, the domains' verification URLs, the probes and metrics
// (which load balancers and scrapers ask over plain HTTP), and a redirect
// to HTTPS for the rest.
func (f *tlsFront) plainHandler(next http.Handler) http.Handler {
	if f == nil {
		return next
	}
	return f.wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/healthz", "/readyz", "/metrics":
			next.ServeHTTP(w, r)
			return
		}
		// What must be fetched over plain HTTP: a domain's verification
		// URL (--domain-verify http fetches http://HOST/...) and an ACME
		// challenge the wrapper did not know. A pending domain has no
		// certificate yet, so a redirect to HTTPS could never be answered.
		if strings.HasPrefix(r.URL.Path, domain.VerificationPath) || strings.HasPrefix(r.URL.Path, acmeChallengePath) {
			next.ServeHTTP(w, r)
			return
		}
		host := r.Host
		if h, _, err := net.SplitHostPort(host); err == nil {
			host = h
		}
		if host == "" {
			host = f.publicHost
		}
		if f.httpsPort != "443" {
			host = net.JoinHostPort(host, f.httpsPort)
		}
		// 308 keeps the method and body, as 301 would not for a POST.
		// The host the client asked for, over HTTPS: only the scheme (and
		// port) change, so this sends no one elsewhere.
		http.Redirect(w, r, "https://"+host+r.URL.RequestURI(), http.StatusPermanentRedirect) //nolint:gosec // G710: see above
	}))
}

// HostState is host's certificate state, for the domains' tls field:
// off with --tls off.
func (f *tlsFront) HostState(host string) certs.State {
	if f == nil {
		return certs.StateOff
	}
	return f.hostState(host)
}

// readiness is the TLS part of /readyz; nil with --tls off.
func (f *tlsFront) readiness() func() web.TLSReadiness {
	if f == nil {
		return nil
	}
	return func() web.TLSReadiness {
		s := f.status()
		return web.TLSReadiness{Mode: s.Mode, PublicHost: string(s.PublicHost), Ready: s.Ready, Pending: s.Pending, Failed: s.Failed}
	}
}

// serveHTTPS serves handler over TLS on --https-addr (nothing with --tls
// off: a nil channel, which never receives).
func (a *app) serveHTTPS(lc *lifecycle, f *tlsFront, handler http.Handler) (chan error, error) {
	if f == nil {
		return nil, nil
	}
	ln, err := listen(a.cfg.TLS.HTTPSAddr, a.cfg.MaxConnections)
	if err != nil {
		return nil, err
	}
	a.log.Info("listening for HTTPS", "addr", ln.Addr().String(), "tls", a.cfg.TLS.Mode)
	return a.serveHTTP(lc, tls.NewListener(ln, f.tlsConfig), handler), nil
}
