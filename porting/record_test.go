package porting_test

import (
	"io"
	"strings"
	"testing"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/internal/testdb"
	"github.com/linkforge/linkforge/porting"
)

// countingReader counts the bytes read from it.
type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// repeat is an endless run of one byte.
type repeat byte

func (r repeat) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = byte(r)
	}
	return len(p), nil
}

// TestRecordSizeIsCapped: a CSV row or JSON element over
// porting.MaxRecordBytes ends the import with a 413 line, after the
// links before it are written, and the parser reads little more than the
// cap of it: memory stays bounded by the cap, not by the record (a 48 MiB
// title here), whatever the body's size.
func TestRecordSizeIsCapped(t *testing.T) {
	const huge = 48 << 20
	for _, tt := range []struct {
		format     porting.Format
		head, tail string
		breakLine  int
	}{
		{porting.CSV, "slug,url,title\nfirst,https://example.com/1,ok\nbig,https://example.com/2,\"", "\"\n", 3},
		{porting.JSON, `[{"slug":"first","url":"https://example.com/1"},{"slug":"big","url":"https://example.com/2","title":"`, `"}]`, 2},
	} {
		t.Run(string(tt.format), func(t *testing.T) {
			st := asStore(t, testdb.SQLite(t))
			tenant, err := st.EnsureTenant(t.Context(), "acme")
			if err != nil {
				t.Fatal(err)
			}
			body := &countingReader{r: io.MultiReader(strings.NewReader(tt.head), io.LimitReader(repeat('a'), huge), strings.NewReader(tt.tail))}
			res, err := porting.Import(t.Context(), st, tt.format, body, porting.Options{TenantID: tenant.ID, SelfHosts: selfHosts})
			if err != nil {
				t.Fatal(err)
			}
			if res.Created != 1 || res.Failed != 1 || len(res.Errors) != 1 {
				t.Fatalf("import = %+v, want first created and the break", res)
			}
			if le := res.Errors[0]; le.Line != tt.breakLine || linkforge.ErrorCode(le.Err) != linkforge.ETooLarge {
				t.Errorf("break = line %d %v, want line %d, %s", le.Line, le.Err, tt.breakLine, linkforge.ETooLarge)
			}
			if limit := int64(porting.MaxRecordBytes + 64<<10); body.n > limit {
				t.Errorf("the parser read %d bytes of the body, want at most %d", body.n, limit)
			}
		})
	}
}
