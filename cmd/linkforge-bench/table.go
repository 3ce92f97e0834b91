package main

import (
	"fmt"
	"io"
	"strings"
	"time"
	"unicode/utf8"
)

// row is one line of the result table. A row without a measurement (a
// skipped scenario, a failure) prints "-" in the measured columns.
type row struct {
	scenario string
	target   string
	rate     string // offered load: "max, 64 workers", "4000/s"
	measured bool
	thr      float64 // successful requests per second; negative: not a throughput measurement
	p50, p99 time.Duration
	requests uint64
	errors   uint64
	notes    string
}

var tableHeader = []string{"scenario", "target", "rate", "throughput req/s", "p50", "p99", "errors", "notes"}

func (r row) cells() []string {
	c := []string{r.scenario, r.target, r.rate, "-", "-", "-", "-", r.notes}
	if r.measured {
		if r.thr >= 0 {
			c[3] = fmt.Sprintf("%.0f", r.thr)
		}
		c[4] = formatLatency(r.p50)
		c[5] = formatLatency(r.p99)
		c[6] = formatErrors(r.errors, r.requests)
	}
	return c
}

// formatLatency keeps three significant digits or so in a unit a person
// reads at a glance.
func formatLatency(d time.Duration) string {
	ms := float64(d) / float64(time.Millisecond)
	switch {
	case d < 10*time.Millisecond:
		return fmt.Sprintf("%.2fms", ms)
	case d < time.Second:
		return fmt.Sprintf("%.1fms", ms)
	default:
		return fmt.Sprintf("%.2fs", d.Seconds())
	}
}

func formatErrors(errs, requests uint64) string {
	if errs == 0 || requests == 0 {
		return fmt.Sprint(errs)
	}
	return fmt.Sprintf("%d (%.2f%%)", errs, 100*float64(errs)/float64(requests))
}

// table collects rows and prints them once, at the end of the run.
type table struct {
	rows []row
}

func newTable() *table { return &table{} }

func (t *table) add(rows ...row) { t.rows = append(t.rows, rows...) }

// write prints the table as aligned text or as a Markdown (GitHub) table.
func (t *table) write(w io.Writer, format string) error {
	lines := [][]string{tableHeader}
	for _, r := range t.rows {
		lines = append(lines, r.cells())
	}
	var b strings.Builder
	if format == "markdown" {
		writeMarkdown(&b, lines)
	} else {
		writeText(&b, lines)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// writeText pads every column but the last (the notes, which may be long)
// to its widest cell.
func writeText(b *strings.Builder, lines [][]string) {
	width := make([]int, len(tableHeader))
	for _, l := range lines {
		for i, c := range l {
			width[i] = max(width[i], utf8.RuneCountInString(c))
		}
	}
	for _, l := range lines {
		var line strings.Builder
		for i, c := range l {
			line.WriteString(c)
			if i < len(l)-1 {
				line.WriteString(strings.Repeat(" ", width[i]-utf8.RuneCountInString(c)+2))
			}
		}
		// No trailing blanks when the notes are empty.
		b.WriteString(strings.TrimRight(line.String(), " "))
		b.WriteByte('\n')
	}
}

func writeMarkdown(b *strings.Builder, lines [][]string) {
	for n, l := range lines {
		b.WriteString("|")
		for _, c := range l {
			b.WriteString(" ")
			b.WriteString(strings.ReplaceAll(c, "|", `\|`))
			b.WriteString(" |")
		}
		b.WriteByte('\n')
		if n == 0 {
			b.WriteString(strings.Repeat("|---", len(l)) + "|\n")
		}
	}
}
