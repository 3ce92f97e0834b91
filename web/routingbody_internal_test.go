package web

import (
	"strings"
	"testing"

	"github.com/linkforge/linkforge/rules"
)

// TestRoutingFieldsListed: the error messages' list of routing fields is
// rules.Fields.
func TestRoutingFieldsListed(t *testing.T) {
	if want := strings.Join(rules.Fields, ", "); routingFields != want {
		t.Fatalf("routingFields = %q, want %q", routingFields, want)
	}
}
