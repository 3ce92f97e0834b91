// Package porting moves links into and out of LinkForge: it reads the files
// other shorteners export (YOURLS, Shlink, Bitly, Dub, Kutt, Rebrandly) and
// LinkForge's own CSV and JSON exports, and writes those two exports. It
// also reads other shorteners' per-visit files (ImportVisits) into the
// click history of the links they name.
//
// Reading is streamed: a Parser yields one Record per line of the file,
// with the line number the user sees in an editor, so that an import of a
// million links never holds the file in memory and every problem names its
// line. Import applies the records to a store: a slug the tenant already
// has is skipped, a slug of another tenant is a conflict, a bad line writes
// nothing, and the good lines are written in batches, one transaction each.
// Writing (CSVWriter, JSONWriter) is streamed too, page by page from the
// store (Links). docs/adr/013-import-export.md records the choices.
package porting

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/linkforge/linkforge"
)

// Format is a file format of the import and export.
type Format string

// The formats. CSV and JSON are LinkForge's own exports, the only ones
// Export writes; the others are read only.
const (
	CSV       Format = "csv"
	JSON      Format = "json"
	YOURLS    Format = "yourls"
	Shlink    Format = "shlink"
	Bitly     Format = "bitly"
	Dub       Format = "dub"
	Kutt      Format = "kutt"
	Rebrandly Format = "rebrandly"
)

// Formats lists the import formats, in the order the docs list them: the
// link formats, then the per-visit ones (Format.History).
var Formats = []Format{CSV, JSON, YOURLS, Shlink, Bitly, Dub, Kutt, Rebrandly, ShlinkVisits, YOURLSLog, DubEvents}

// FormatNames is Formats as the errors list them: "csv, json, ...".
func FormatNames() string {
	names := make([]string, len(Formats))
	for i, f := range Formats {
		names[i] = string(f)
	}
	return strings.Join(names, ", ")
}

// ParseFormat returns the import format called name, or an EInvalid error
// naming the field "format".
func ParseFormat(name string) (Format, error) {
	for _, f := range Formats {
		if string(f) == name {
			return f, nil
		}
	}
	return "", linkforge.InvalidField("format", fmt.Sprintf("must be one of %s; not %q", FormatNames(), truncate(name, 32)))
}

// ParseExportFormat returns the export format called name (csv or json),
// or an EInvalid error naming the field "format".
func ParseExportFormat(name string) (Format, error) {
	if name == string(CSV) || name == string(JSON) {
		return Format(name), nil
	}
	return "", linkforge.InvalidField("format", fmt.Sprintf("must be csv or json; not %q", truncate(name, 32)))
}

// Record is one link read from a file.
type Record struct {
	// Line is the line of the file the link starts on, counting from 1
	// (a CSV header is line 1); for JSON, the array index plus 1.
	Line int
	// Link is the link as the file describes it, without a tenant. An
	// empty Slug means the file gave none: Import generates one.
	// ImportedClicks holds the file's click count.
	Link linkforge.Link
	// Domain is the host of the link's domain as the file wrote it (a
	// domain column or member); "": none given.
	Domain string
	// Err, when not nil, says why the line cannot be imported: an
	// EInvalid *linkforge.Error naming the file's own column or member.
	// Nothing of such a line is written.
	Err error
	// Notes name what of the line the import leaves out, although the
	// line is imported (a Shlink redirect rule LinkForge cannot express):
	// Result.Notes reports them when the link is created.
	Notes []linkforge.FieldError
}

// Parser reads a file one record at a time. Next returns io.EOF after the
// last record. Any other error means the rest of the file cannot be read
// (malformed JSON, a body cut short); the records returned before it stand.
type Parser interface {
	Next() (Record, error)
	// Column returns the file's own name for a link field ("keyword" for
	// YOURLS' slug), which the errors of a line name.
	Column(field string) string
}

// NewParser returns the parser of format f reading r. It reads what it
// needs to know the file's shape (a CSV header, the JSON array's opening
// bracket) before it returns: an error then is about the whole file, and
// nothing has been read as a link.
func NewParser(f Format, r io.Reader) (Parser, error) {
	switch f {
	case JSON:
		return newJSONParser(r)
	case Shlink:
		br := bufio.NewReader(r)
		if shlinkIsJSON(br) {
			return newShlinkJSONParser(br)
		}
		return newCSVParser(specs[f], br)
	case Bitly, Kutt, Rebrandly:
		br := bufio.NewReader(r)
		if shlinkIsJSON(br) {
			return newForeignJSONParser(specs[f], br)
		}
		return newCSVParser(specs[f], br)
	case CSV, YOURLS, Dub:
		return newCSVParser(specs[f], r)
	}
	return nil, linkforge.InvalidField("format", fmt.Sprintf("unknown format %q", truncate(string(f), 32)))
}

// parseTime reads the timestamps of the formats: RFC 3339 (LinkForge,
// Shlink), ISO 8601 with a +0000 offset (Bitly), "2006-01-02 15:04:05"
// (YOURLS' MySQL DATETIME), a bare date, or Unix seconds. A time without a
// zone is taken as UTC: the files do not say which zone they mean.
func parseTime(s string) (time.Time, error) {
	s = strings.TrimSpace(s)
	if s != "" && strings.Trim(s, "0123456789") == "" && len(s) <= 12 {
		n, err := strconv.ParseInt(s, 10, 64)
		if err == nil {
			return time.Unix(n, 0).UTC(), nil
		}
	}
	for _, layout := range timeLayouts {
		if t, err := time.Parse(layout, s); err == nil {
			return t.UTC(), nil
		}
	}
	return time.Time{}, fmt.Errorf("is not a timestamp (want RFC 3339 such as 2026-12-01T00:00:00Z, or 2026-12-01 00:00:00); cannot read %q", truncate(s, 40))
}

var timeLayouts = []string{
	time.RFC3339Nano,
	"2006-01-02T15:04:05Z0700",
	"2006-01-02T15:04:05.999999999Z0700",
	"2006-01-02T15:04:05",
	"2006-01-02 15:04:05",
	"2006-01-02 15:04:05Z07:00",
	"2006-01-02 15:04:05 -0700",
	"2006-01-02",
}

// parseCount reads a click count: a non-negative integer, empty for 0.
func parseCount(s string) (int64, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, nil
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("must be a non-negative integer; cannot read %q", truncate(s, 40))
	}
	return n, nil
}

// parseClicks reads an imported click count: a count of at most
// linkforge.MaxImportedClicks.
func parseClicks(s string) (int64, error) {
	n, err := parseCount(s)
	if err != nil {
		return 0, err
	}
	if linkforge.ValidateImportedClicks(n) != nil {
		return 0, errClicksTooLarge
	}
	return n, nil
}

var errClicksTooLarge = fmt.Errorf("must be at most %d (10^15), the largest click count an import takes", int64(linkforge.MaxImportedClicks))

// plaintextRefused is the detail of a password given in clear.
const plaintextRefused = "is a plaintext password, which an import never takes; " +
	"LinkForge's exports carry password_hash instead (or set the password through the API after the import)"

// formulaStarts are the first characters that make a spreadsheet read a
// cell as a formula (OWASP's list for CSV injection).
const formulaStarts = "=+-@\t\r"

// formulaLike reports whether cell, once its leading apostrophes are
// taken off, starts like a formula. The apostrophes count so that quoting
// is reversible: a cell that already starts with "'=" gets one more.
func formulaLike(cell string) bool {
	s := strings.TrimLeft(cell, "'")
	return s != "" && strings.IndexByte(formulaStarts, s[0]) >= 0
}

// quoteFormula prefixes an apostrophe to a cell a spreadsheet would run as
// a formula, as spreadsheet exporters do; the spreadsheet shows the cell
// as text, without the apostrophe.
func quoteFormula(cell string) string {
	if formulaLike(cell) {
		return "'" + cell
	}
	return cell
}

// unquoteFormula reverses quoteFormula, so that the CSV round trip is
// exact: "'-dash" is the slug -dash again, and a title written as two
// apostrophes and "=x" is the title "'=x".
func unquoteFormula(cell string) string {
	if strings.HasPrefix(cell, "'") && formulaLike(cell) {
		return cell[1:]
	}
	return cell
}

// splitTags splits a cell of tags at sep, trims each, and drops empty ones
// and repeats: "a| b||a" is [a b]. What remains is checked by
// linkforge.ValidateTags when the link is.
func splitTags(cell, sep string) []string {
	tags := []string{}
	for t := range strings.SplitSeq(cell, sep) {
		t = strings.TrimSpace(t)
		if t == "" || contains(tags, t) {
			continue
		}
		tags = append(tags, t)
	}
	return tags
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// cleanTitle makes a page title from another shortener fit LinkForge's
// title rule: runs of whitespace and control characters become one space,
// and a title over linkforge.MaxTitleLength characters is cut there. YOURLS and
// Shlink fetch titles from the target pages, which may be long or hold
// newlines; refusing the link for its title would lose it for a label.
func cleanTitle(s string) string {
	var b strings.Builder
	space := false
	for _, r := range s {
		if r == utf8.RuneError || unicode.IsSpace(r) || unicode.IsControl(r) || unicode.Is(unicode.Cf, r) {
			space = b.Len() > 0
			continue
		}
		if space {
			b.WriteByte(' ')
			space = false
		}
		b.WriteRune(r)
	}
	t := b.String()
	if utf8.RuneCountInString(t) > linkforge.MaxTitleLength {
		t = string([]rune(t)[:linkforge.MaxTitleLength])
	}
	return t
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}
