package main

import (
	"strings"
	"testing"
	"time"
)

func TestFormatLatency(t *testing.T) {
	tests := []struct {
		name string
		d    time.Duration
		want string
	}{
		{"sub-millisecond", 412 * time.Microsecond, "0.41ms"},
		{"milliseconds", 4090 * time.Microsecond, "4.09ms"},
		{"tens of milliseconds", 13900 * time.Microsecond, "13.9ms"},
		{"hundreds of milliseconds", 622200 * time.Microsecond, "622.2ms"},
		{"seconds", 1500 * time.Millisecond, "1.50s"},
		{"zero", 0, "0.00ms"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := formatLatency(tt.d); got != tt.want {
				t.Errorf("formatLatency(%v) = %q, want %q", tt.d, got, tt.want)
			}
		})
	}
}

func TestFormatErrors(t *testing.T) {
	tests := []struct {
		name             string
		errors, requests uint64
		want             string
	}{
		{"none", 0, 1000, "0"},
		{"some", 37, 10000, "37 (0.37%)"},
		{"no requests", 3, 0, "3"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := formatErrors(tt.errors, tt.requests); got != tt.want {
				t.Errorf("formatErrors(%d, %d) = %q, want %q", tt.errors, tt.requests, got, tt.want)
			}
		})
	}
}

func sampleTable() *table {
	tbl := newTable()
	tbl.add(
		row{scenario: "redirect", target: "reference", rate: "max, 64 workers", measured: true,
			thr: 19912.4, p50: 1790 * time.Microsecond, p99: 9420 * time.Microsecond, requests: 200000, notes: "baseline"},
		row{scenario: "counting", target: "linkforge postgres", notes: "skipped: no PostgreSQL"},
		row{scenario: "fanout", target: "live | 1000 viewers", rate: "20 clicks", measured: true, thr: -1,
			p50: 253 * time.Millisecond, p99: 1200 * time.Millisecond, requests: 20000, errors: 20},
	)
	return tbl
}

func TestTableText(t *testing.T) {
	var b strings.Builder
	if err := sampleTable().write(&b, "text"); err != nil {
		t.Fatal(err)
	}
	// Columns padded to their widest cell plus two blanks; the notes are
	// not padded, and an empty one leaves no trailing blanks.
	want := "" +
		"scenario  target               rate             throughput req/s  p50      p99     errors      notes\n" +
		"redirect  reference            max, 64 workers  19912             1.79ms   9.42ms  0           baseline\n" +
		"counting  linkforge postgres                    -                 -        -       -           skipped: no PostgreSQL\n" +
		"fanout    live | 1000 viewers  20 clicks        -                 253.0ms  1.20s   20 (0.10%)\n"
	if got := b.String(); got != want {
		t.Errorf("text table:\n%s\nwant:\n%s", got, want)
	}
}

func TestTableMarkdown(t *testing.T) {
	var b strings.Builder
	if err := sampleTable().write(&b, "markdown"); err != nil {
		t.Fatal(err)
	}
	want := "" +
		"| scenario | target | rate | throughput req/s | p50 | p99 | errors | notes |\n" +
		"|---|---|---|---|---|---|---|---|\n" +
		"| redirect | reference | max, 64 workers | 19912 | 1.79ms | 9.42ms | 0 | baseline |\n" +
		"| counting | linkforge postgres |  | - | - | - | - | skipped: no PostgreSQL |\n" +
		"| fanout | live \\| 1000 viewers | 20 clicks | - | 253.0ms | 1.20s | 20 (0.10%) |  |\n"
	if got := b.String(); got != want {
		t.Errorf("markdown table:\n%s\nwant:\n%s", got, want)
	}
}
