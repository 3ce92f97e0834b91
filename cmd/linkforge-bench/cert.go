package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"time"
)

// benchCert is a throwaway self-signed certificate for the https scenario:
// the server (LinkForge or the reference) loads the files, the tool trusts
// pool and nothing else.
type benchCert struct {
	certFile, keyFile string
	pool              *x509.CertPool
}

// newBenchCert writes a self-signed ECDSA P-256 certificate for hosts into
// dir, valid for a day: long enough for any run, useless after it. ECDSA,
// as an ACME authority would issue by default, so the handshake costs what
// it does in production.
func newBenchCert(dir string, hosts ...string) (benchCert, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return benchCert{}, fmt.Errorf("generate key: %w", err)
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	if err != nil {
		return benchCert{}, fmt.Errorf("serial: %w", err)
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{CommonName: hosts[0]},
		DNSNames:              hosts,
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(24 * time.Hour),
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true, // its own root: the pool trusts it directly
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return benchCert{}, fmt.Errorf("create certificate: %w", err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return benchCert{}, fmt.Errorf("marshal key: %w", err)
	}
	c := benchCert{certFile: filepath.Join(dir, "bench-cert.pem"), keyFile: filepath.Join(dir, "bench-key.pem")}
	if err := os.WriteFile(c.certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		return benchCert{}, fmt.Errorf("write certificate: %w", err)
	}
	if err := os.WriteFile(c.keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}), 0o600); err != nil {
		return benchCert{}, fmt.Errorf("write key: %w", err)
	}
	leaf, err := x509.ParseCertificate(der)
	if err != nil {
		return benchCert{}, fmt.Errorf("parse certificate: %w", err)
	}
	c.pool = x509.NewCertPool()
	c.pool.AddCert(leaf)
	return c, nil
}
