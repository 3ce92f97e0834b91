package clienttest_test

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/linkforge/linkforge/client"
)

// TestClientUTM: utm goes out in a create and an update and comes back
// in the Link, ClearRouting.UTM removes it; templates are created,
// listed, refused for a taken name and deleted; Campaigns reads clicks
// counted and flushed by the real counter.
func TestClientUTM(t *testing.T) {
	s := newServer(t, serverOpts{})
	c := mustClient(t, s)
	ctx := context.Background()
	spring := client.UTM{Source: "news", Medium: "email", Campaign: "spring"}
	l, err := c.CreateLink(ctx, client.NewLink{URL: "https://example.com/", Slug: "u", Routing: client.Routing{UTM: &spring}})
	if err != nil {
		t.Fatal(err)
	}
	if l.UTM == nil || *l.UTM != spring {
		t.Fatalf("created %+v", l.UTM)
	}
	l, err = c.UpdateLink(ctx, "u", client.LinkUpdate{Routing: &client.Routing{UTM: &client.UTM{Campaign: "autumn"}}})
	if err != nil || l.UTM == nil || *l.UTM != (client.UTM{Campaign: "autumn"}) {
		t.Fatalf("updated %+v, %v", l.UTM, err)
	}
	l, err = c.UpdateLink(ctx, "u", client.LinkUpdate{ClearRouting: client.RoutingClear{UTM: true}})
	if err != nil || l.UTM != nil {
		t.Fatalf("cleared %+v, %v", l.UTM, err)
	}
	if _, err := c.UpdateLink(ctx, "u", client.LinkUpdate{Routing: &client.Routing{UTM: &spring}}); err != nil {
		t.Fatal(err)
	}

	tp, err := c.CreateUTMTemplate(ctx, "Newsletter", client.UTM{Source: "news", Medium: "email"})
	if err != nil || tp.ID == "" || tp.Name != "Newsletter" {
		t.Fatalf("CreateUTMTemplate = %+v, %v", tp, err)
	}
	var apiErr *client.Error
	if _, err := c.CreateUTMTemplate(ctx, "Newsletter", client.UTM{Source: "x"}); !errors.As(err, &apiErr) || apiErr.Code != client.CodeConflict {
		t.Errorf("a taken name: %v, want a 409", err)
	}
	list, err := c.UTMTemplates(ctx)
	if err != nil || len(list) != 1 || list[0].ID != tp.ID || list[0].UTM != tp.UTM {
		t.Errorf("UTMTemplates = %+v, %v", list, err)
	}
	if err := c.DeleteUTMTemplate(ctx, tp.ID); err != nil {
		t.Fatal(err)
	}
	if list, err := c.UTMTemplates(ctx); err != nil || len(list) != 0 {
		t.Errorf("after the delete: %+v, %v", list, err)
	}

	for range 2 {
		s.click("u", "")
	}
	s.flush()
	rows, err := c.Campaigns(ctx, client.CampaignOptions{})
	if err != nil || !slices.Equal(rows, []client.Campaign{{Campaign: "spring", Source: "news", Medium: "email", Links: 1, Clicks: 2}}) {
		t.Errorf("Campaigns = %+v, %v", rows, err)
	}
	// The two traffics share the clicks out.
	var sum int64
	for _, traffic := range []string{"human", "automated"} {
		rows, err := c.Campaigns(ctx, client.CampaignOptions{Traffic: traffic})
		if err != nil || len(rows) > 1 {
			t.Fatalf("Campaigns(%s) = %+v, %v", traffic, rows, err)
		}
		for _, r := range rows {
			sum += r.Clicks
		}
	}
	if sum != 2 {
		t.Errorf("human and automated campaign clicks sum to %d, want 2", sum)
	}
}
