package main

import (
	"context"
	"crypto/tls"
	"io"
)

// serveReference is serveReferenceArgs over plain HTTP.
func serveReference(ctx context.Context, stdin io.Reader, stdout io.Writer) error {
	return serveReferenceTLS(ctx, "", "", stdin, stdout)
}

// benchTLSConfig is countedTLSConfig without its count.
func benchTLSConfig(c benchCert, host string) *tls.Config {
	cfg, _ := countedTLSConfig(c, host)
	return cfg
}
