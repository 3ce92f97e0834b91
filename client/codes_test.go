package client_test

import (
	"testing"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/client"
)

// TestCodesMatchServer: the client's problem codes are its own copy (it
// imports nothing of the server), so they are checked against the one list
// the server answers with, linkforge's E* codes.
func TestCodesMatchServer(t *testing.T) {
	for _, c := range []struct{ client, server string }{
		{client.CodeInvalid, linkforge.EInvalid},
		{client.CodeNotFound, linkforge.ENotFound},
		{client.CodeConflict, linkforge.EConflict},
		{client.CodeUnauthorized, linkforge.EUnauthorized},
		{client.CodeRateLimited, linkforge.ERateLimited},
		{client.CodeUnavailable, linkforge.EUnavailable},
		{client.CodeQuotaExceeded, linkforge.EQuotaExceeded},
		{client.CodeForbidden, linkforge.EForbidden},
	} {
		if c.client != c.server {
			t.Errorf("client code %q, server code %q", c.client, c.server)
		}
	}
}
