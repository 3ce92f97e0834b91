package clienttest_test

import (
	"context"
	"reflect"
	"testing"

	"github.com/linkforge/linkforge/client"
)

// TestClientRouting: the routing fields go out in a create and an update
// and come back in the Link.
func TestClientRouting(t *testing.T) {
	s := newServer(t, serverOpts{})
	c := mustClient(t, s)
	ctx := context.Background()
	yes := true
	rules := []client.Rule{{Conditions: []client.Condition{{Type: "country", Value: "DE"}}, URL: "https://example.com/de"}}
	variants := []client.Variant{{URL: "https://example.com/a", Weight: 50}, {URL: "https://example.com/b", Weight: 50}}
	l, err := c.CreateLink(ctx, client.NewLink{URL: "https://example.com/", Slug: "ab",
		Routing: client.Routing{RedirectStatus: 307, ForwardQuery: &yes, Rules: rules, Variants: variants,
			OG: &client.OG{Title: "Spring"}}})
	if err != nil {
		t.Fatal(err)
	}
	if l.RedirectStatus != 307 || !l.ForwardQuery || !reflect.DeepEqual(l.Rules, rules) ||
		!reflect.DeepEqual(l.Variants, variants) || l.OG == nil || l.OG.Title != "Spring" {
		t.Fatalf("created %+v", l)
	}
	l, err = c.UpdateLink(ctx, "ab", client.LinkUpdate{Routing: &client.Routing{RedirectStatus: 308},
		ClearRouting: client.RoutingClear{Rules: true, OG: true, ForwardQuery: true}})
	if err != nil {
		t.Fatal(err)
	}
	if l.RedirectStatus != 308 || l.ForwardQuery || len(l.Rules) != 0 || l.OG != nil || len(l.Variants) != 2 {
		t.Fatalf("updated %+v", l)
	}
}
