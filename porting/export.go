package porting

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"iter"
	"strconv"
	"strings"
	"time"

	"github.com/linkforge/linkforge"
)

// ExportStore is what Links needs of a store. Both store/sqlite and
// store/postgres implement it.
type ExportStore interface {
	// ExportLinks returns up to limit of the tenant's links whose id is
	// above afterID, by id ascending, with their Clicks: one keyset page.
	ExportLinks(ctx context.Context, tenantID, afterID int64, limit int) ([]linkforge.Link, error)
}

// ExportPageSize is the links Links reads per query: memory stays at one
// page whatever the number of links.
const ExportPageSize = 1000

// Links yields every link of the tenant, oldest first, a page at a time
// (keyset pages, one short query each: no transaction or cursor is held
// open while the client reads). A link created during the export after the
// current page is included; one deleted before its page is not. An error
// ends the sequence.
func Links(ctx context.Context, st ExportStore, tenantID int64, pageSize int) iter.Seq2[linkforge.Link, error] {
	if pageSize <= 0 {
		pageSize = ExportPageSize
	}
	return func(yield func(linkforge.Link, error) bool) {
		var after int64
		for {
			page, err := st.ExportLinks(ctx, tenantID, after, pageSize)
			if err != nil {
				yield(linkforge.Link{}, fmt.Errorf("export: read links after id %d: %w", after, err))
				return
			}
			for _, l := range page {
				if !yield(l, nil) {
					return
				}
			}
			if len(page) < pageSize {
				return
			}
			after = page[len(page)-1].ID
		}
	}
}

// CSVHeader is the header of the CSV export (operation exportLinks). The
// columns after clicks carry the rest of what makes the link behave as it
// does, so that a round trip never weakens it: password_hash is the stored
// argon2id hash (never the password), which the import takes back as it is;
// domain is empty for the public host; the columns after it are the JSON
// export's other members (rules, variants and og as their JSON), so that the
// CSV carries every field the JSON does.
var CSVHeader = []string{"slug", "url", "title", "tags", "created_at", "expires_at", "max_clicks", "clicks",
	"fallback_url", "device_ios", "device_android", "device_desktop", "password_hash", "domain",
	"updated_at", "expired_at", "redirect_status", "forward_query", "rules", "variants", "og", "utm"}

// CSVWriter writes the CSV export, one link per Write. Tags are joined by
// "|"; times are RFC 3339 in UTC; empty cells are absent values. A cell
// that a spreadsheet would run as a formula (starting with = + - @, a tab
// or a carriage return) gets a leading apostrophe, which the CSV import
// takes off again, so that the round trip stays exact (ADR 013).
type CSVWriter struct {
	w      *csv.Writer
	row    []string
	header bool
	// domain names the host of a link's domain; nil: the cell is empty.
	domain func(*linkforge.Link) string
}

// NewCSVWriterWithDomains is NewCSVWriter whose domain column is what
// domain names for each link.
func NewCSVWriterWithDomains(w io.Writer, domain func(*linkforge.Link) string) *CSVWriter {
	cw := NewCSVWriter(w)
	cw.domain = domain
	return cw
}

// NewCSVWriter returns a CSVWriter on w.
func NewCSVWriter(w io.Writer) *CSVWriter {
	return &CSVWriter{w: csv.NewWriter(w), row: make([]string, len(CSVHeader))}
}

// Write writes l (and the header before the first link).
func (cw *CSVWriter) Write(l *linkforge.Link) error {
	if err := cw.writeHeader(); err != nil {
		return err
	}
	r := cw.row
	r[0], r[1], r[2] = l.Slug, l.URL, l.Title
	r[3] = strings.Join(l.Tags, "|")
	r[4] = l.CreatedAt.UTC().Format(time.RFC3339Nano)
	r[5], r[6] = "", ""
	if l.ExpiresAt != nil {
		r[5] = l.ExpiresAt.UTC().Format(time.RFC3339Nano)
	}
	if l.MaxClicks != nil {
		r[6] = strconv.FormatInt(*l.MaxClicks, 10)
	}
	r[7] = strconv.FormatInt(l.Clicks, 10)
	r[8], r[9], r[10], r[11] = l.FallbackURL, l.DeviceURLs.IOS, l.DeviceURLs.Android, l.DeviceURLs.Desktop
	r[12], r[13] = l.PasswordHash, ""
	if cw.domain != nil {
		r[13] = cw.domain(l)
	}
	r[14], r[15] = "", ""
	if !l.UpdatedAt.IsZero() {
		r[14] = l.UpdatedAt.UTC().Format(time.RFC3339Nano)
	}
	if l.ExpiredAt != nil {
		r[15] = l.ExpiredAt.UTC().Format(time.RFC3339Nano)
	}
	rt := l.Routes()
	r[16], r[17] = strconv.Itoa(l.RedirectCode()), strconv.FormatBool(rt.ForwardQuery)
	r[18], r[19], r[20] = jsonCell(rt.Rules), jsonCell(rt.Variants), ""
	if !rt.OG.IsZero() {
		r[20] = jsonCell(rt.OG)
	}
	r[21] = ""
	if !rt.UTM.IsZero() {
		r[21] = jsonCell(rt.UTM)
	}
	for i := range r {
		r[i] = quoteFormula(r[i])
	}
	return cw.w.Write(r)
}

// jsonCell is a routing value as a cell: its JSON, "" for none. HTML
// characters stay as they are (a URL's & is not \u0026), for whoever
// reads the cell. The types hold only strings and ints, which always
// encode.
func jsonCell(v any) string {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
	cell := strings.TrimSuffix(b.String(), "\n")
	if cell == "null" || cell == "[]" {
		return ""
	}
	return cell
}

func (cw *CSVWriter) writeHeader() error {
	if cw.header {
		return nil
	}
	cw.header = true
	return cw.w.Write(CSVHeader)
}

// Flush sends what is buffered to the underlying writer.
func (cw *CSVWriter) Flush() error {
	cw.w.Flush()
	return cw.w.Error()
}

// Close writes the header if no link came, and flushes.
func (cw *CSVWriter) Close() error {
	if err := cw.writeHeader(); err != nil {
		return err
	}
	return cw.Flush()
}

// JSONWriter writes the JSON export: one array, one element per Write,
// each the value encode makes of the link (the web server's link JSON, so
// that the export is the links "as the API returns them").
type JSONWriter struct {
	w      io.Writer
	buf    bytes.Buffer
	enc    *json.Encoder
	encode func(*linkforge.Link) any
	n      int
}

// NewJSONWriter returns a JSONWriter on w.
func NewJSONWriter(w io.Writer, encode func(*linkforge.Link) any) *JSONWriter {
	jw := &JSONWriter{w: w, encode: encode}
	jw.enc = json.NewEncoder(&jw.buf)
	jw.enc.SetEscapeHTML(false)
	return jw
}

// Write writes l as the next element, one per line.
func (jw *JSONWriter) Write(l *linkforge.Link) error {
	jw.buf.Reset()
	if jw.n == 0 {
		jw.buf.WriteString("[\n")
	} else {
		jw.buf.WriteString(",\n")
	}
	jw.n++
	if err := jw.enc.Encode(jw.encode(l)); err != nil {
		return err
	}
	// Encode ends the element with a newline; the separator goes first.
	jw.buf.Truncate(jw.buf.Len() - 1)
	_, err := jw.w.Write(jw.buf.Bytes())
	return err
}

// Close ends the array.
func (jw *JSONWriter) Close() error {
	end := "\n]\n"
	if jw.n == 0 {
		end = "[]\n"
	}
	_, err := io.WriteString(jw.w, end)
	return err
}
