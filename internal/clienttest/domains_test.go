package clienttest_test

import (
	"encoding/json"
	"io"
	"net/http"
	"testing"

	"github.com/linkforge/linkforge/client"
	"github.com/linkforge/linkforge/domain"
	"github.com/linkforge/linkforge/web"
)

// TestDomains: the client adds, lists, changes and removes a domain, and
// creates a link on it.
func TestDomains(t *testing.T) {
	s := newServer(t, serverOpts{web: func(c *web.Config) { c.DomainVerify = domain.VerifyNone }})
	c := mustClient(t, s)
	ctx := t.Context()
	d, err := c.CreateDomain(ctx, client.NewDomain{Host: "Go.Acme.com", RootURL: "https://acme.com/"})
	if err != nil || d.Host != "go.acme.com" || d.State != "verified" || d.RootURL == nil {
		t.Fatalf("CreateDomain = %+v, %v", d, err)
	}
	_, err = c.CreateDomain(ctx, client.NewDomain{Host: "go.acme.com:8080"})
	mustAPIError(t, err, http.StatusBadRequest, "invalid")
	yes, clear := true, ""
	d, err = c.UpdateDomain(ctx, "go.acme.com", client.DomainUpdate{Default: &yes, RootURL: &clear})
	if err != nil || !d.Default || d.RootURL != nil {
		t.Fatalf("UpdateDomain = %+v, %v", d, err)
	}
	l, err := c.CreateLink(ctx, client.NewLink{URL: "https://example.com/", Slug: "launch"})
	if err != nil || l.Domain != "go.acme.com" || l.ShortURL != "http://go.acme.com/launch" {
		t.Fatalf("CreateLink on the default domain = %+v, %v", l, err)
	}
	if _, err := c.CreateLink(ctx, client.NewLink{URL: "https://example.com/pub", Slug: "launch", Domain: "lf.test"}); err != nil {
		t.Fatalf("CreateLink on the public host: %v", err)
	}
	on, err := c.LinkOnDomain(ctx, "go.acme.com", "launch")
	if err != nil || on.ID != l.ID {
		t.Errorf("LinkOnDomain = %+v, %v; want link %s", on, err, l.ID)
	}
	dest := "https://example.com/new"
	if u, err := c.UpdateLinkOnDomain(ctx, "go.acme.com", "launch", client.LinkUpdate{URL: &dest}); err != nil || u.URL != dest {
		t.Errorf("UpdateLinkOnDomain = %+v, %v", u, err)
	}
	page, err := c.ListLinks(ctx, client.ListOptions{Domain: "lf.test"})
	if err != nil || len(page.Links) != 1 || page.Links[0].URL != "https://example.com/pub" {
		t.Errorf("ListLinks on the public host = %+v, %v", page, err)
	}
	if err := c.DeleteLinkOnDomain(ctx, "lf.test", "launch"); err != nil {
		t.Errorf("DeleteLinkOnDomain: %v", err)
	}
	ds, err := c.Domains(ctx)
	if err != nil || len(ds) != 1 {
		t.Fatalf("Domains = %+v, %v", ds, err)
	}
	err = c.DeleteDomain(ctx, "go.acme.com")
	mustAPIError(t, err, http.StatusConflict, "conflict")
	if _, err := c.Domain(ctx, "go.acme.com"); err != nil {
		t.Errorf("Domain after the refused delete: %v", err)
	}
}

// TestDomainDocuments: the client sets, reads and clears a domain's
// app-link documents, and the domain's host serves them.
func TestDomainDocuments(t *testing.T) {
	s := newServer(t, serverOpts{web: func(c *web.Config) { c.DomainVerify = domain.VerifyNone }})
	c := mustClient(t, s)
	ctx := t.Context()
	aasa := json.RawMessage(`{"applinks":{"details":[]}}`)
	d, err := c.CreateDomain(ctx, client.NewDomain{Host: "go.acme.com", AppleAppSiteAssociation: aasa})
	if err != nil || string(d.AppleAppSiteAssociation) != string(aasa) || string(d.AssetLinks) != "null" {
		t.Fatalf("CreateDomain = %+v, %v", d, err)
	}
	links := json.RawMessage(`[{"relation":["delegate_permission/common.handle_all_urls"]}]`)
	d, err = c.UpdateDomain(ctx, "go.acme.com", client.DomainUpdate{AssetLinks: links, AppleAppSiteAssociation: json.RawMessage("null")})
	if err != nil || string(d.AppleAppSiteAssociation) != "null" || string(d.AssetLinks) != string(links) {
		t.Fatalf("UpdateDomain = %+v, %v", d, err)
	}
	_, err = c.UpdateDomain(ctx, "go.acme.com", client.DomainUpdate{AssetLinks: json.RawMessage(`{}`)})
	mustAPIError(t, err, http.StatusBadRequest, "invalid")
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.URL+"/.well-known/assetlinks.json", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Host = "go.acme.com"
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK || string(body) != string(links) {
		t.Errorf("assetlinks.json = %d %s, want 200 %s", resp.StatusCode, body, links)
	}
}
