package clienttest_test

import (
	"encoding/json"
	"os"
	"slices"
	"testing"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/client"
)

// clientCodes are all the client's problem codes.
var clientCodes = []string{
	client.CodeInvalid, client.CodeNotFound, client.CodeConflict, client.CodeUnauthorized,
	client.CodeGone, client.CodeTooLarge, client.CodeRateLimited, client.CodeUnavailable,
	client.CodeInternal, client.CodeQuotaExceeded, client.CodeForbidden,
	client.CodeMethodNotAllowed, client.CodeUnsupportedMediaType, client.CodeRequestTimeout,
	client.CodeBlockedTarget,
	client.CodeUnsafeTarget,
}

// TestCodesMatchServer: the client's problem codes are its own copy (its
// module imports nothing of the server), so they are checked against the
// server's E* codes and against the enum of schema Problem in the OpenAPI
// document: every code the API answers with has a constant.
func TestCodesMatchServer(t *testing.T) {
	for _, c := range []struct{ client, server string }{
		{client.CodeInvalid, linkforge.EInvalid},
		{client.CodeNotFound, linkforge.ENotFound},
		{client.CodeConflict, linkforge.EConflict},
		{client.CodeUnauthorized, linkforge.EUnauthorized},
		{client.CodeGone, linkforge.EGone},
		{client.CodeTooLarge, linkforge.ETooLarge},
		{client.CodeRateLimited, linkforge.ERateLimited},
		{client.CodeUnavailable, linkforge.EUnavailable},
		{client.CodeInternal, linkforge.EInternal},
		{client.CodeQuotaExceeded, linkforge.EQuotaExceeded},
		{client.CodeForbidden, linkforge.EForbidden},
		{client.CodeMethodNotAllowed, linkforge.EMethodNotAllowed},
		{client.CodeUnsupportedMediaType, linkforge.EUnsupportedMediaType},
		{client.CodeRequestTimeout, linkforge.ERequestTimeout},
		{client.CodeBlockedTarget, linkforge.EBlockedTarget},
		{client.CodeUnsafeTarget, linkforge.EUnsafeTarget},
	} {
		if c.client != c.server {
			t.Errorf("client code %q, server code %q", c.client, c.server)
		}
	}

	raw, err := os.ReadFile("../../web/openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Components struct {
			Schemas struct {
				Problem struct {
					Properties struct {
						Code struct {
							Enum []string `json:"enum"`
						} `json:"code"`
					} `json:"properties"`
				} `json:"Problem"`
			} `json:"schemas"`
		} `json:"components"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	enum := slices.Sorted(slices.Values(doc.Components.Schemas.Problem.Properties.Code.Enum))
	have := slices.Sorted(slices.Values(clientCodes))
	if len(enum) == 0 || !slices.Equal(enum, have) {
		t.Errorf("schema Problem's codes %v, the client's %v", enum, have)
	}
}
