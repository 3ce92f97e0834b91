package links_test

import (
	"bytes"
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/links"
	"github.com/linkforge/linkforge/porting"
)

// TestRoutingExportImport: the routing fields survive a JSON export and
// its import into another server; bad routing values in a file are that
// line's field errors; the service refuses them on create.
func TestRoutingExportImport(t *testing.T) {
	ctx := context.Background()
	src := newFixture(t)
	in := linkforge.Link{TenantID: src.tenant, Slug: "ab", URL: "https://example.com/", Routing: &linkforge.Routing{RedirectStatus: 308, ForwardQuery: true, Rules: []linkforge.Rule{{Conditions: []linkforge.Condition{{Type: "language", Value: "de"}, {Type: "ip", Value: "10.0.0.0/8"}},
		URL: "https://example.com/de"}}, Variants: []linkforge.Variant{{URL: "https://example.com/a", Weight: 30}, {URL: "https://example.com/b", Weight: 70}}, OG: &linkforge.OG{Title: "Spring", ImageURL: "https://example.com/i.png"}}}
	if _, err := src.svc.Create(ctx, links.NewLink{Link: in}); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := src.svc.Export(ctx, &buf, src.tenant, porting.JSON, nil); err != nil {
		t.Fatal(err)
	}
	dst := newFixture(t)
	res, err := dst.svc.Import(ctx, dst.tenant, porting.JSON, &buf, links.ImportOptions{})
	if err != nil || res.Created != 1 {
		t.Fatalf("import = %+v, %v", res, err)
	}
	got, err := dst.st.TenantLink(ctx, dst.tenant, linkforge.PublicDomainID, "ab")
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got.Routing, in.Routing) {
		t.Fatalf("imported %+v, want the routing of %+v", got, in)
	}

	file := `[{"slug":"bad","url":"https://example.com/","variants":[{"url":"https://example.com/a","weight":500},{"url":"https://example.com/b","weight":1}],"redirect_status":303}]`
	res, err = dst.svc.Import(ctx, dst.tenant, porting.JSON, strings.NewReader(file), links.ImportOptions{})
	if err != nil || res.Failed != 1 || len(res.Errors) != 1 {
		t.Fatalf("import of a bad line = %+v, %v", res, err)
	}
	var ae *linkforge.Error
	if !asErr(res.Errors[0].Err, &ae) || len(ae.Fields) != 2 || ae.Fields[0].Field != "redirect_status" || ae.Fields[1].Field != "variants[0].weight" {
		t.Fatalf("line error %v, want redirect_status and variants[0].weight", res.Errors[0].Err)
	}

	bad := in
	bad.Slug, bad.Routing = "bad2", &linkforge.Routing{Rules: []linkforge.Rule{{URL: "https://example.com/x"}}}
	if _, err := src.svc.Create(ctx, links.NewLink{Link: bad}); linkforge.ErrorCode(err) != linkforge.EInvalid {
		t.Fatalf("Create of a rule without conditions: %v, want invalid", err)
	}
}

func asErr(err error, target **linkforge.Error) bool { return errors.As(err, target) }
