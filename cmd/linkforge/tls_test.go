package main

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/linkforge/linkforge/internal/acmetest"
)

// freePort returns a loopback port free a moment ago: Pebble must be told
// the HTTP port before the server listens on it.
func freePort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	return port
}

// httpsClient dials addr whatever the URL's host, with SNI serverName,
// trusting roots, and follows no redirect.
func httpsClient(addr, serverName string, roots *x509.CertPool) *http.Client {
	dialer := &net.Dialer{Timeout: hangGuard}
	return &http.Client{
		Timeout: hangGuard,
		Transport: &http.Transport{
			TLSClientConfig: &tls.Config{ServerName: serverName, RootCAs: roots},
			DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
				return dialer.DialContext(ctx, network, addr)
			},
		},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

func mustGet(t *testing.T, c *http.Client, url string) (*http.Response, string) {
	t.Helper()
	resp, err := c.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, string(body)
}

// TestServeTLSAuto: `serve --tls auto` obtains the public host's
// certificate from the ACME directory on the first HTTPS request, answering
// the HTTP-01 challenge on --addr, which also answers a pending domain's
// verification URL and redirects everything else to HTTPS
// but the probes; /readyz and /metrics show the certificate; a handshake
// for another host fails and orders nothing. A tenant's verified domain
// gets its certificate too; a pending one does not.
func TestServeTLSAuto(t *testing.T) {
	const host = "go.example.com"
	httpPort, httpsPort := freePort(t), freePort(t)
	acme := acmetest.Start(t, mustAtoi(t, httpPort))
	caFile := filepath.Join(t.TempDir(), "acme-ca.pem")
	if err := os.WriteFile(caFile, acme.RootsPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	n := newNode(t, "")
	n.serveArgs = []string{"--addr", "127.0.0.1:" + httpPort, "--tls", "auto",
		"--https-addr", "127.0.0.1:" + httpsPort, "--acme-directory", acme.Directory,
		"--acme-ca", caFile, "--acme-email", "ops@example.com"}
	const verified, pending = "go.acme.test", "new.acme.test"
	token := strings.TrimSpace(n.mustRun("token", "create", "--tenant", "acme"))
	n.mustRun("domain", "add", "--domain-verify", "none", "--tenant", "acme", verified)
	var pendingDomain struct{ ID string }
	if err := json.Unmarshal([]byte(n.mustRun("domain", "add", "--domain-verify", "http", "--tenant", "acme", pending)), &pendingDomain); err != nil {
		t.Fatal(err)
	}
	n.startServer("https://" + host)
	httpsAddr := "127.0.0.1:" + httpsPort
	c := httpsClient(httpsAddr, host, acme.Issued)

	resp, body := mustGet(t, c, "https://"+host+"/healthz")
	if resp.StatusCode != http.StatusOK || resp.TLS.PeerCertificates[0].DNSNames[0] != host {
		t.Fatalf("GET https /healthz: %d %q", resp.StatusCode, body)
	}
	if n := acme.Orders(host); n != 1 {
		t.Errorf("%d orders, want 1", n)
	}

	_, body = mustGet(t, c, "https://"+host+"/readyz")
	var ready struct {
		TLS struct {
			Mode       string `json:"mode"`
			PublicHost string `json:"public_host"`
			Ready      int    `json:"ready"`
		} `json:"tls"`
	}
	if err := json.Unmarshal([]byte(body), &ready); err != nil || ready.TLS.Mode != "auto" ||
		ready.TLS.PublicHost != "ready" || ready.TLS.Ready != 1 {
		t.Errorf("/readyz = %s (%v), want tls auto, public_host ready, 1 ready", body, err)
	}
	_, body = mustGet(t, c, "https://"+host+"/metrics")
	if !strings.Contains(body, `linkforge_tls_certificate_earliest_expiry_timestamp_seconds{hosts="public"}`) || strings.Contains(body, host) {
		t.Error("/metrics has no expiry of the certificate")
	}

	plain := &http.Client{Timeout: hangGuard, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	req, _ := http.NewRequest(http.MethodGet, "http://127.0.0.1:"+httpPort+"/launch?x=1", nil)
	req.Host = host
	r2, err := plain.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	r2.Body.Close()
	if want := "https://" + host + ":" + httpsPort + "/launch?x=1"; r2.StatusCode != http.StatusPermanentRedirect || r2.Header.Get("Location") != want {
		t.Errorf("plain GET /launch: %d to %q, want 308 to %s", r2.StatusCode, r2.Header.Get("Location"), want)
	}
	if resp, _ := mustGet(t, plain, "http://127.0.0.1:"+httpPort+"/healthz"); resp.StatusCode != http.StatusOK {
		t.Errorf("plain GET /healthz: %d, want 200 (probes stay on --addr)", resp.StatusCode)
	}
	// A pending domain has no certificate: its verification URL and the
	// ACME challenges are answered on --addr, never sent to HTTPS.
	for _, tt := range []struct {
		path   string
		status int
	}{
		{"/.well-known/linkforge-domain/" + pendingDomain.ID, http.StatusOK},
		{"/.well-known/acme-challenge/no-such-token", http.StatusNotFound},
	} {
		req, _ := http.NewRequest(http.MethodGet, "http://127.0.0.1:"+httpPort+tt.path, nil)
		req.Host = pending
		r, err := plain.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(r.Body)
		r.Body.Close()
		if r.StatusCode != tt.status {
			t.Errorf("plain GET %s on %s: %d to %q, want %d", tt.path, pending, r.StatusCode, r.Header.Get("Location"), tt.status)
		}
		if tt.status == http.StatusOK && len(strings.TrimSpace(string(b))) != 64 {
			t.Errorf("plain GET %s: %q, want the domain's token", tt.path, b)
		}
	}

	const stranger = "stranger.example.org"
	if _, err := httpsClient(httpsAddr, stranger, acme.Issued).Get("https://" + stranger + "/healthz"); err == nil {
		t.Error("HTTPS for a host that is not ours succeeded")
	}
	if n := acme.Orders(stranger); n != 0 {
		t.Errorf("%d orders for a host that is not ours, want 0", n)
	}

	resp, _ = mustGet(t, httpsClient(httpsAddr, verified, acme.Issued), "https://"+verified+"/healthz")
	if resp.StatusCode != http.StatusOK || resp.TLS.PeerCertificates[0].DNSNames[0] != verified {
		t.Errorf("GET https /healthz on the verified domain: %d", resp.StatusCode)
	}
	if _, err := httpsClient(httpsAddr, pending, acme.Issued).Get("https://" + pending + "/healthz"); err == nil {
		t.Error("HTTPS for a pending domain succeeded")
	}
	if n := acme.Orders(pending); n != 0 {
		t.Errorf("%d orders for a pending domain, want 0", n)
	}
	// The domains' tls field is the front's state of each.
	req, _ = http.NewRequest(http.MethodGet, "https://"+host+"/api/v1/domains", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	r3, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer r3.Body.Close()
	var list struct {
		Domains []struct{ Host, TLS string }
	}
	if err := json.NewDecoder(r3.Body).Decode(&list); err != nil {
		t.Fatal(err)
	}
	if got, want := fmt.Sprint(list.Domains), "[{"+verified+" ready} {"+pending+" off}]"; got != want {
		t.Errorf("GET /api/v1/domains: %s, want %s", got, want)
	}
}

// TestServeTLSManual: `serve --tls manual` serves the given certificate.
func TestServeTLSManual(t *testing.T) {
	const host = "go.example.com"
	dir := t.TempDir()
	certFile, keyFile, pool := selfSigned(t, dir, host)
	httpsPort := freePort(t)
	n := newNode(t, "")
	n.serveArgs = []string{"--tls", "manual", "--https-addr", "127.0.0.1:" + httpsPort,
		"--tls-cert", certFile, "--tls-key", keyFile}
	n.startServer("https://" + host)
	c := httpsClient("127.0.0.1:"+httpsPort, host, pool)
	resp, body := mustGet(t, c, "https://"+host+"/readyz")
	if resp.StatusCode != http.StatusOK || !strings.Contains(body, `"mode":"manual"`) || !strings.Contains(body, `"public_host":"ready"`) {
		t.Errorf("/readyz over HTTPS: %d %s", resp.StatusCode, body)
	}
}

// selfSigned writes a certificate and key for host, and returns the pool
// that trusts it.
func selfSigned(t *testing.T, dir, host string) (certFile, keyFile string, pool *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: host}, DNSNames: []string{host},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}), 0o600); err != nil {
		t.Fatal(err)
	}
	leaf, _ := x509.ParseCertificate(der)
	pool = x509.NewCertPool()
	pool.AddCert(leaf)
	return certFile, keyFile, pool
}

// TestTLSFlagErrors: a wrong TLS flag is a usage error (exit 2).
func TestTLSFlagErrors(t *testing.T) {
	for _, args := range [][]string{
		{"--tls", "on"},
		{"--tls", "manual"},
		{"--tls", "manual", "--tls-cert", "c.pem"},
		{"--tls-cert", "c.pem", "--tls-key", "k.pem"},
		{"--tls", "auto", "--public-url", "http://localhost:8080"},
		{"--tls", "auto", "--public-url", "https://127.0.0.1"},
		{"--tls", "auto", "--public-url", "https://go.example.com", "--acme-directory", "http://acme.example.com/dir"},
		{"--tls", "auto", "--public-url", "https://go.example.com", "--acme-email", "nobody"},
		{"--https-addr", "443"},
	} {
		_, stderr := mustRunInProcess(t, exitUsage, append([]string{"migrate", "--data-dir", t.TempDir()}, args...)...)
		if !strings.Contains(stderr, "tls") && !strings.Contains(stderr, "acme") && !strings.Contains(stderr, "https") {
			t.Errorf("%v: %q does not name the flag", args, stderr)
		}
	}
}

func mustAtoi(t *testing.T, s string) int {
	t.Helper()
	n, err := strconv.Atoi(s)
	if err != nil {
		t.Fatal(err)
	}
	return n
}
