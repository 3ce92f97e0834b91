package blocklist

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"strings"

	"github.com/linkforge/linkforge"
)

// Format is the format of a blocklist file, detected from its content.
type Format string

// The formats a blocklist file may have.
const (
	// Domains is one entry a line: a host name, an IP address, a URL
	// (its host), or an adblock rule "||host^"; '#' starts a comment.
	Domains Format = "domains"
	// Hosts is hosts-file lines, "0.0.0.0 host1 host2 # comment"; the
	// address is ignored, the names are entries.
	Hosts Format = "hosts"
	// URLhaus is URLhaus's CSV export: '#' comment lines (the header
	// among them), then quoted rows whose url column is the entry's URL.
	URLhaus Format = "urlhaus"
	// PhishTankCSV is PhishTank's CSV: a header naming phish_id and url.
	PhishTankCSV Format = "phishtank-csv"
	// PhishTankJSON is PhishTank's JSON: an array of objects with a url.
	PhishTankJSON Format = "phishtank-json"
)

// Result is a parsed file: its format and entries. The feeds (URLhaus,
// PhishTank) list URLs that some other tool wrote down: an entry whose
// URL has no host this server reads, or whose host is a public suffix,
// is skipped, not an error; Skipped counts them and FirstSkipped is the
// line of the first (for JSON, its index in the array, from 1).
type Result struct {
	Format       Format
	Set          *Set
	Skipped      int
	FirstSkipped int
}

// Parse detects data's format and parses it. The error names the line
// that cannot be read.
func Parse(data []byte) (Result, error) {
	f := Detect(data)
	var (
		r   Result
		err error
	)
	switch f {
	case PhishTankJSON:
		r, err = ParsePhishTankJSON(data)
	case PhishTankCSV:
		r, err = ParsePhishTankCSV(data)
	case URLhaus:
		r, err = ParseURLhaus(data)
	case Hosts:
		r, err = ParseHosts(data)
	default:
		r, err = ParseDomains(data)
	}
	if err != nil {
		return Result{Format: f}, fmt.Errorf("%s format: %w", f, err)
	}
	return r, nil
}

// Detect guesses data's format from its first lines.
func Detect(data []byte) Format {
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	if t := bytes.TrimLeft(data, " \t\r\n"); len(t) > 0 && t[0] == '[' {
		return PhishTankJSON
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 1<<20)
	urlhaus := false
	for n := 0; sc.Scan() && n < 100; n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		if strings.HasPrefix(line, "#") {
			l := strings.ToLower(line)
			if strings.Contains(l, "urlhaus") || strings.Contains(l, "dateadded") {
				urlhaus = true
			}
			continue
		}
		switch {
		case strings.HasPrefix(line, "phish_id,"):
			return PhishTankCSV
		case strings.HasPrefix(line, `"`) || (urlhaus && strings.Count(line, ",") >= 2):
			return URLhaus
		}
		if f := strings.Fields(line); len(f) >= 2 {
			if _, err := netip.ParseAddr(f[0]); err == nil {
				return Hosts
			}
		}
		return Domains
	}
	return Domains
}

// lines calls fn with each line of data (1-based number, comment and
// spaces trimmed), skipping empty ones, until fn fails.
func lines(data []byte, fn func(n int, line string) error) error {
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	n := 0
	for len(data) > 0 {
		n++
		var line []byte
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			line, data = data[:i], data[i+1:]
		} else {
			line, data = data, nil
		}
		s := string(line)
		if i := strings.IndexByte(s, '#'); i >= 0 {
			s = s[:i]
		}
		if s = strings.TrimSpace(s); s == "" {
			continue
		}
		if err := fn(n, s); err != nil {
			return err
		}
	}
	return nil
}

// ParseDomains parses the Domains format.
func ParseDomains(data []byte) (Result, error) {
	r := Result{Format: Domains, Set: &Set{}}
	err := lines(data, func(n int, line string) error {
		if strings.HasPrefix(line, "!") { // an adblock comment
			return nil
		}
		var (
			h   string
			err error
		)
		if strings.Contains(line, "://") {
			h, err = linkforge.TargetURLHost(line)
		} else {
			e := strings.TrimSuffix(strings.TrimPrefix(line, "||"), "^")
			if strings.ContainsAny(e, " \t") {
				return lineError(n, "%q is not one host name", truncate(line))
			}
			h, err = Normalize(e)
		}
		if err != nil {
			return lineError(n, "%q %v", truncate(line), err)
		}
		r.Set.Add(h, h)
		return nil
	})
	return r, err
}

// localNames are the names of a hosts file's own lines (the machine's),
// which are not entries.
var localNames = map[string]bool{"localhost": true, "localhost.localdomain": true, "local": true,
	"broadcasthost": true, "0.0.0.0": true, "localdomain": true}

// ParseHosts parses the Hosts format.
func ParseHosts(data []byte) (Result, error) {
	r := Result{Format: Hosts, Set: &Set{}}
	err := lines(data, func(n int, line string) error {
		f := strings.Fields(line)
		if _, err := netip.ParseAddr(f[0]); err != nil {
			return lineError(n, "%q does not start with an IP address", truncate(line))
		}
		if len(f) < 2 {
			return lineError(n, "%q names no host after its address", truncate(line))
		}
		for _, name := range f[1:] {
			l := strings.ToLower(name)
			if localNames[l] || strings.HasPrefix(l, "ip6-") {
				continue
			}
			h, err := Normalize(name)
			if err != nil {
				return lineError(n, "%q %v", truncate(name), err)
			}
			r.Set.Add(h, h)
		}
		return nil
	})
	return r, err
}

// addURL adds the host of a feed's URL, or counts it skipped at pos.
func (r *Result) addURL(raw string, pos int) {
	h, err := linkforge.TargetURLHost(strings.TrimSpace(raw))
	if err == nil {
		if _, perr := netip.ParseAddr(h); perr != nil {
			h, err = Normalize(h)
		}
	}
	if err != nil || h == "" {
		if r.Skipped == 0 {
			r.FirstSkipped = pos
		}
		r.Skipped++
		return
	}
	r.Set.Add(h, h)
}

// ParseURLhaus parses the URLhaus format. The url column is found in the
// commented header ("# id,dateadded,url,..."), or is the third.
func ParseURLhaus(data []byte) (Result, error) {
	r := Result{Format: URLhaus, Set: &Set{}}
	col := 2
	for _, line := range strings.SplitN(string(data), "\n", 50) {
		l := strings.TrimSpace(line)
		if h, ok := strings.CutPrefix(l, "#"); ok && strings.Contains(h, "dateadded") {
			for i, name := range strings.Split(h, ",") {
				if strings.TrimSpace(name) == "url" {
					col = i
				}
			}
			break
		}
	}
	return r, readCSV(data, '#', func(line int, rec []string) error {
		if len(rec) <= col {
			return lineError(line, "has %d columns, no url column (column %d)", len(rec), col+1)
		}
		r.addURL(rec[col], line)
		return nil
	})
}

// ParsePhishTankCSV parses the PhishTankCSV format.
func ParsePhishTankCSV(data []byte) (Result, error) {
	r := Result{Format: PhishTankCSV, Set: &Set{}}
	col := -1
	return r, readCSV(data, 0, func(line int, rec []string) error {
		if col < 0 {
			for i, name := range rec {
				if strings.TrimSpace(strings.TrimPrefix(name, "\ufeff")) == "url" {
					col = i
				}
			}
			if col < 0 {
				return lineError(line, "the header names no url column")
			}
			return nil
		}
		if len(rec) <= col {
			return lineError(line, "has %d columns, no url column (column %d)", len(rec), col+1)
		}
		r.addURL(rec[col], line)
		return nil
	})
}

// readCSV calls fn with each record of data and its line.
func readCSV(data []byte, comment rune, fn func(line int, rec []string) error) error {
	cr := csv.NewReader(bytes.NewReader(data))
	cr.Comment = comment
	cr.FieldsPerRecord = -1
	cr.ReuseRecord = true
	for {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			var pe *csv.ParseError
			if errors.As(err, &pe) {
				return lineError(pe.Line, "%v", pe.Err)
			}
			return err
		}
		line, _ := cr.FieldPos(0)
		if err := fn(line, rec); err != nil {
			return err
		}
	}
}

// ParsePhishTankJSON parses the PhishTankJSON format.
func ParsePhishTankJSON(data []byte) (Result, error) {
	r := Result{Format: PhishTankJSON, Set: &Set{}}
	var entries []struct {
		URL string `json:"url"`
	}
	if err := json.Unmarshal(data, &entries); err != nil {
		var se *json.SyntaxError
		var te *json.UnmarshalTypeError
		switch {
		case errors.As(err, &se):
			return r, lineError(lineOf(data, se.Offset), "%v", se)
		case errors.As(err, &te):
			return r, lineError(lineOf(data, te.Offset), "%v", te)
		}
		return r, fmt.Errorf("%w", err)
	}
	for i, e := range entries {
		r.addURL(e.URL, i+1)
	}
	return r, nil
}

// lineOf is the line of data's byte offset.
func lineOf(data []byte, offset int64) int {
	offset = min(max(offset, 0), int64(len(data)))
	return bytes.Count(data[:offset], []byte("\n")) + 1
}

// truncate shortens a line quoted in an error.
func truncate(s string) string {
	if len(s) > 80 {
		return s[:80] + "…"
	}
	return s
}
