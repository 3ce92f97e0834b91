package main

import (
	"bufio"
	"context"
	"crypto/ecdsa"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"io"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"
)

// TestNewBenchCert: an ECDSA certificate for the bench host that the pool
// trusts for that host and no other, and a key that matches it.
func TestNewBenchCert(t *testing.T) {
	c, err := newBenchCert(t.TempDir(), benchDomain)
	if err != nil {
		t.Fatal(err)
	}
	pair, err := tls.LoadX509KeyPair(c.certFile, c.keyFile)
	if err != nil {
		t.Fatalf("load the pair: %v", err)
	}
	if _, ok := pair.PrivateKey.(*ecdsa.PrivateKey); !ok {
		t.Errorf("key is %T, want ECDSA", pair.PrivateKey)
	}
	data, err := os.ReadFile(c.certFile)
	if err != nil {
		t.Fatal(err)
	}
	block, _ := pem.Decode(data)
	leaf, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := leaf.Verify(x509.VerifyOptions{DNSName: benchDomain, Roots: c.pool}); err != nil {
		t.Errorf("verify for %s: %v", benchDomain, err)
	}
	if _, err := leaf.Verify(x509.VerifyOptions{DNSName: "other.bench.test", Roots: c.pool}); err == nil {
		t.Error("verified for other.bench.test, want only the bench host")
	}
}

// TestReferenceTLSResumes runs the reference's child side over TLS in
// process: it answers 302 over TLS, and a second connection with the same
// session cache resumes the first one's session.
func TestReferenceTLSResumes(t *testing.T) {
	c, err := newBenchCert(t.TempDir(), benchDomain)
	if err != nil {
		t.Fatal(err)
	}
	stdinR, stdinW := io.Pipe()
	stdoutR, stdoutW := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- serveReferenceArgs(context.Background(), []string{"--tls-cert", c.certFile, "--tls-key", c.keyFile}, stdinR, stdoutW)
		stdoutW.Close()
	}()
	go io.WriteString(stdinW, `{"abc1234":"https://example.com/a"}`+"\n")
	line, err := bufio.NewReader(stdoutR).ReadString('\n')
	if err != nil {
		t.Fatalf("read the announced address: %v", err)
	}
	addr, _ := strings.CutPrefix(strings.TrimSpace(line), "listening ")

	tlsCfg := benchTLSConfig(c, benchDomain)
	for i, wantResumed := range []bool{false, true} {
		// A transport per request: a new connection each time, sharing
		// only the session cache.
		tr := &http.Transport{TLSClientConfig: tlsCfg}
		client := noFollow(&http.Client{Transport: tr, Timeout: 10 * time.Second})
		resp, _ := mustRequest(t, client, http.MethodGet, "https://"+addr+"/abc1234")
		tr.CloseIdleConnections()
		if resp.StatusCode != http.StatusFound || resp.Header.Get("Location") != "https://example.com/a" {
			t.Fatalf("request %d: %d to %q, want 302 to https://example.com/a", i+1, resp.StatusCode, resp.Header.Get("Location"))
		}
		if resp.TLS == nil {
			t.Fatalf("request %d: not over TLS", i+1)
		}
		if resp.TLS.DidResume != wantResumed {
			t.Errorf("request %d: DidResume %v, want %v", i+1, resp.TLS.DidResume, wantResumed)
		}
	}

	stdinW.Close()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("serveReferenceArgs: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("serveReferenceArgs did not return after stdin closed")
	}
}

func TestServeReferenceArgsRefusesHalfTLS(t *testing.T) {
	err := serveReferenceArgs(context.Background(), []string{"--tls-cert", "x.pem"}, strings.NewReader("{}"), io.Discard)
	if err == nil || !strings.Contains(err.Error(), "--tls-key") {
		t.Fatalf("--tls-cert alone: %v, want an error naming --tls-key", err)
	}
}
