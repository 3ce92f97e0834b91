package blocklist_test

import (
	"testing"

	"github.com/linkforge/linkforge/blocklist"
)

// Each parser, on any input, returns an error or a set whose entries
// match themselves, and never panics.
func fuzzParser(f *testing.F, parse func([]byte) (blocklist.Result, error), seeds ...string) {
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := parse(data)
		if err != nil {
			return
		}
		if r.Set == nil {
			t.Fatal("nil set without an error")
		}
		l := blocklist.Lists{Block: r.Set}
		if _, ok := l.BlockedURL("https://linkforge-fuzz-unlisted.example/"); ok && r.Set.Len() == 0 {
			t.Fatal("an empty set blocks")
		}
	})
}

func FuzzParseDomains(f *testing.F) {
	fuzzParser(f, blocklist.ParseDomains, "evil.test\n", "||ads.test^\n# c\n", "http://Bücher.test/\n", "*.x.test\n203.0.113.1\n")
}

func FuzzParseHosts(f *testing.F) {
	fuzzParser(f, blocklist.ParseHosts, "0.0.0.0 a.test b.test # c\n", "::1 ip6-localhost\n", "127.0.0.1\tlocalhost\n")
}

func FuzzParseURLhaus(f *testing.F) {
	fuzzParser(f, blocklist.ParseURLhaus, urlhaus, "# id,dateadded,url\n\"1\",\"2\",\"http://a.test/\"\n")
}

func FuzzParsePhishTankCSV(f *testing.F) {
	fuzzParser(f, blocklist.ParsePhishTankCSV, "phish_id,url\n1,http://a.test/\n", "phish_id,url\n1,\"x\n")
}

func FuzzParsePhishTankJSON(f *testing.F) {
	fuzzParser(f, blocklist.ParsePhishTankJSON, `[{"url":"http://a.test/"}]`, `[{"url":1}]`)
}

func FuzzParse(f *testing.F) {
	fuzzParser(f, blocklist.Parse, "evil.test\n", urlhaus, `[]`, "phish_id,url\n")
}
