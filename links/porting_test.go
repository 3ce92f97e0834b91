package links_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/linkforge/linkforge/links"
	"github.com/linkforge/linkforge/porting"
)

// TestImportEffects: each imported link is dropped from this node's cache
// and shown once; the scheduler hears of the batch's earliest expiry; a
// skipped or failed line tells nobody.
func TestImportEffects(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	file := "slug,url,expires_at\n" +
		"a,https://example.com/a,2031-01-01T00:00:00Z\n" +
		"b,https://example.com/b,2030-01-01T00:00:00Z\n" +
		"c,not a url,\n"
	res, err := f.svc.Import(ctx, f.tenant, porting.CSV, strings.NewReader(file), links.ImportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Created != 2 || res.Failed != 1 {
		t.Fatalf("result = %+v, want 2 created, 1 failed", res)
	}
	eq(t, "local", f.fx.local, []string{"a", "b"})
	eq(t, "peer", f.fx.peer, []string{"a", "b"})
	eq(t, "imported", f.fx.imported, []string{"a", "b"})
	if len(f.fx.due) != 1 || f.fx.due[0].Year() != 2030 {
		t.Errorf("rescheduled %v, want once, at the 2030 expiry", f.fx.due)
	}

	// Again: every line is skipped or fails; nobody is told.
	*f.fx = effects{}
	res, err = f.svc.Import(ctx, f.tenant, porting.CSV, strings.NewReader(file), links.ImportOptions{})
	if err != nil || res.Skipped != 2 {
		t.Fatalf("second import = %+v, %v; want 2 skipped", res, err)
	}
	if len(f.fx.local)+len(f.fx.peer)+len(f.fx.imported)+len(f.fx.due) != 0 {
		t.Errorf("effects of a second import: %+v", f.fx)
	}

	var rep struct {
		Errors []struct {
			Line    int
			Problem struct {
				Status int
				Code   string
			}
		}
	}
	b, _ := json.Marshal(links.Report(res))
	if err := json.Unmarshal(b, &rep); err != nil || len(rep.Errors) != 1 || rep.Errors[0].Line != 4 ||
		rep.Errors[0].Problem.Status != 400 || rep.Errors[0].Problem.Code != "invalid" {
		t.Errorf("report = %s, want line 4 as a 400 invalid problem", b)
	}
}

// TestImportAnnounceLimit: past the first 1,000 links of an import the
// other nodes and the dashboards are not told (they would be flooded);
// this node's cache still is, of every link.
func TestImportAnnounceLimit(t *testing.T) {
	f := newFixture(t)
	var file strings.Builder
	file.WriteString("slug,url\n")
	for i := range 1200 {
		fmt.Fprintf(&file, "s%04d,https://example.com/\n", i)
	}
	res, err := f.svc.Import(context.Background(), f.tenant, porting.CSV, strings.NewReader(file.String()), links.ImportOptions{})
	if err != nil || res.Created != 1200 {
		t.Fatalf("import = %+v, %v", res, err)
	}
	if len(f.fx.local) != 1200 || len(f.fx.peer) != 1000 || len(f.fx.imported) != 1000 {
		t.Errorf("local %d, peer %d, imported %d; want 1200, 1000, 1000", len(f.fx.local), len(f.fx.peer), len(f.fx.imported))
	}
}

// TestExportRoundTrip: the JSON export carries the API's body on the
// configured short base, with the password hash, and imports back.
func TestExportRoundTrip(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	if _, err := f.svc.Import(ctx, f.tenant, porting.CSV, strings.NewReader("slug,url\nx,https://example.com/x\n"), links.ImportOptions{}); err != nil {
		t.Fatal(err)
	}
	svc, err := links.New(links.Config{Store: f.st, ShortBase: "https://sho.rt"})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	flushes := 0
	if err := svc.Export(ctx, &buf, f.tenant, porting.JSON, func() error { flushes++; return nil }); err != nil {
		t.Fatal(err)
	}
	var got []map[string]any
	if err := json.Unmarshal(buf.Bytes(), &got); err != nil || len(got) != 1 || got[0]["short_url"] != "https://sho.rt/x" {
		t.Fatalf("export = %s (%v), want x on https://sho.rt", buf.Bytes(), err)
	}
	if flushes != 1 {
		t.Errorf("flushed %d times, want once at the end", flushes)
	}
	g := newFixture(t)
	res, err := g.svc.Import(ctx, g.tenant, porting.JSON, &buf, links.ImportOptions{})
	if err != nil || res.Created != 1 {
		t.Errorf("import of the export = %+v, %v", res, err)
	}
}
