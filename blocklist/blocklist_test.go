package blocklist_test

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/blocklist"
)

func mustParse(t *testing.T, data string, want blocklist.Format) blocklist.Result {
	t.Helper()
	r, err := blocklist.Parse([]byte(data))
	if err != nil {
		t.Fatalf("Parse(%q): %v", data, err)
	}
	if r.Format != want {
		t.Fatalf("Parse(%q): format %s, want %s", data, r.Format, want)
	}
	return r
}

// blocked checks each URL of urls against lists: want names the entry
// that blocks it ("" : not blocked).
func checkURLs(t *testing.T, l blocklist.Lists, cases map[string]string) {
	t.Helper()
	for u, want := range cases {
		got, ok := l.BlockedURL(u)
		if want == "" && ok {
			t.Errorf("%s: blocked by %q, want allowed", u, got)
		}
		if want != "" && (!ok || got != want) {
			t.Errorf("%s: blocked %v by %q, want blocked by %q", u, ok, got, want)
		}
	}
}

func TestDomainsSuffixAndIDNA(t *testing.T) {
	r := mustParse(t, "# my list\n\nevil.test\nEXAMPLE.Bad.\n||ads.test^\n*.wild.test\nhttp://Bücher.test/x?y\n203.0.113.7 # an address\n", blocklist.Domains)
	if r.Set.Len() != 6 {
		t.Errorf("%d entries, want 6", r.Set.Len())
	}
	checkURLs(t, blocklist.Lists{Block: r.Set}, map[string]string{
		"https://evil.test/":               "evil.test",
		"https://x.evil.test/a":            "evil.test",
		"https://X.EVIL.TEST./a":           "evil.test",
		"https://a.b.evil.test:8443/":      "evil.test",
		"https://notevil.test/":            "",
		"https://evil.test.example/":       "",
		"https://example.bad/":             "example.bad",
		"https://www.ads.test/":            "ads.test",
		"https://wild.test/":               "wild.test",
		"https://bücher.test/":             "xn--bcher-kva.test",
		"https://xn--bcher-kva.test/":      "xn--bcher-kva.test",
		"https://shop.BÜCHER.test/":        "xn--bcher-kva.test",
		"https://ｅｖｉｌ.test/":               "evil.test", // fullwidth letters map to ASCII
		"http://203.0.113.7/x":             "203.0.113.7",
		"http://3405803783/x":              "203.0.113.7", // the same address in decimal
		"http://203.0.113.8/":              "",
		"https://bcher.test/":              "",
		"https://user@evil.test@good.test": "",
	})
}

func TestAllowlistWins(t *testing.T) {
	block := mustParse(t, "evil.test\ndrive.example.com\n", blocklist.Domains).Set
	allow := mustParse(t, "good.evil.test\nexample.com\n", blocklist.Domains).Set
	checkURLs(t, blocklist.Lists{Block: block, Allow: allow}, map[string]string{
		"https://x.evil.test/":      "evil.test",
		"https://good.evil.test/":   "",
		"https://a.good.evil.test/": "",
		"https://drive.example.com": "", // a broad allow entry wins over a narrower block
	})
}

func TestPublicSuffixRefused(t *testing.T) {
	for _, line := range []string{"com", "co.uk", "github.io", "test"} {
		if _, err := blocklist.Parse([]byte("evil.test\n" + line + "\n")); err == nil || !strings.Contains(err.Error(), "line 2") {
			t.Errorf("%q: error %v, want one at line 2", line, err)
		}
	}
	if _, err := blocklist.Normalize("user.github.io"); err != nil {
		t.Errorf("user.github.io: %v, want an entry", err)
	}
}

func TestHosts(t *testing.T) {
	r := mustParse(t, "127.0.0.1 localhost\n::1 ip6-localhost ip6-loopback\n0.0.0.0 0.0.0.0\n# ads\n0.0.0.0 ads.test tracker.test # both\n127.0.0.1\tMal.Test.\n", blocklist.Hosts)
	if r.Set.Len() != 3 {
		t.Errorf("%d entries, want 3", r.Set.Len())
	}
	checkURLs(t, blocklist.Lists{Block: r.Set}, map[string]string{
		"https://x.ads.test/":   "ads.test",
		"https://tracker.test/": "tracker.test",
		"https://mal.test/":     "mal.test",
		"http://localhost/":     "",
	})
	if _, err := blocklist.ParseHosts([]byte("0.0.0.0 ok.test\nbad.test 0.0.0.0\n")); err == nil || !strings.Contains(err.Error(), "line 2") {
		t.Errorf("a line without an address: %v, want an error at line 2", err)
	}
}

const urlhaus = `################################################################
# abuse.ch URLhaus Database Dump (CSV)                         #
################################################################
#
# id,dateadded,url,url_status,last_online,threat,tags,urlhaus_link,reporter
"3371001","2026-12-01 10:00:00","http://198.51.100.9:8080/bins/x.sh","online","2026-12-01 10:00:00","malware_download","elf","https://urlhaus.abuse.ch/url/3371001/","someone"
"3371002","2026-12-01 10:01:00","https://Login.Phish.test/acct","offline","","malware_download","","https://urlhaus.abuse.ch/url/3371002/","someone"
"3371003","2026-12-01 10:02:00","not a url","offline","","malware_download","","https://urlhaus.abuse.ch/url/3371003/","someone"
`

func TestURLhaus(t *testing.T) {
	r := mustParse(t, urlhaus, blocklist.URLhaus)
	if r.Set.Len() != 2 || r.Skipped != 1 || r.FirstSkipped != 8 {
		t.Errorf("%d entries, %d skipped (first at %d), want 2, 1 at line 8", r.Set.Len(), r.Skipped, r.FirstSkipped)
	}
	checkURLs(t, blocklist.Lists{Block: r.Set}, map[string]string{
		"https://login.phish.test/other": "login.phish.test",
		"https://phish.test/":            "", // a feed URL blocks its host, not its domain
		"http://198.51.100.9/":           "198.51.100.9",
	})
	if _, err := blocklist.Parse([]byte(urlhaus + "\"1\",\"2\n")); err == nil || !strings.Contains(err.Error(), "line 9") {
		t.Errorf("an unterminated quote: %v, want an error at line 9", err)
	}
}

func TestPhishTank(t *testing.T) {
	csvData := "phish_id,url,phish_detail_url,submission_time,verified,verification_time,online,target\n" +
		"1,https://secure.bank.test/login,http://www.phishtank.com/phish_detail.php?phish_id=1,2026-12-01T00:00:00+00:00,yes,2026-12-01T00:00:00+00:00,yes,Other\n" +
		"2,\"http://xn--pypal-4ve.test/a,b\",x,y,yes,z,yes,PayPal\n"
	r := mustParse(t, csvData, blocklist.PhishTankCSV)
	checkURLs(t, blocklist.Lists{Block: r.Set}, map[string]string{
		"https://secure.bank.test/": "secure.bank.test",
		"https://pаypal.test/":      "xn--pypal-4ve.test", // Cyrillic а
		"https://bank.test/":        "",
		"https://www.paypal.test/":  "",
	})
	if _, err := blocklist.ParsePhishTankCSV([]byte("phish_id,target\n1,x\n")); err == nil || !strings.Contains(err.Error(), "line 1") {
		t.Errorf("no url column: %v, want an error at line 1", err)
	}

	js := `[{"phish_id":1,"url":"https:\/\/Evil.Phish.test\/x","target":"Other"},
{"phish_id":2,"url":"javascript:alert(1)"}]`
	r = mustParse(t, js, blocklist.PhishTankJSON)
	if r.Set.Len() != 1 || r.Skipped != 1 || r.FirstSkipped != 2 {
		t.Errorf("%d entries, %d skipped (first %d), want 1, 1 (the second)", r.Set.Len(), r.Skipped, r.FirstSkipped)
	}
	checkURLs(t, blocklist.Lists{Block: r.Set}, map[string]string{"https://a.evil.phish.test/": "evil.phish.test"})
	if _, err := blocklist.Parse([]byte("[{\"url\":\"x\"},\n{\"url\": }]")); err == nil || !strings.Contains(err.Error(), "line 2") {
		t.Errorf("bad JSON: %v, want an error at line 2", err)
	}
}

// TestFilesReload: a file that changes is read again; one that no longer
// parses keeps its last good copy; the operator's entries merge in, the
// allowlist winning.
func TestFilesReload(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.txt"), filepath.Join(dir, "b.hosts")
	write := func(p, s string, mod time.Time) {
		t.Helper()
		if err := os.WriteFile(p, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, mod, mod); err != nil {
			t.Fatal(err)
		}
	}
	t0 := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	write(a, "one.test\n", t0)
	write(b, "0.0.0.0 two.test\n", t0)
	f := blocklist.NewFiles([]string{a, b}, nil)
	if err := f.Load(); err != nil {
		t.Fatal(err)
	}
	blocked := func(h string) bool { _, ok := f.BlockedHost(h); return ok }
	if !blocked("x.one.test") || !blocked("two.test") || blocked("three.test") {
		t.Fatal("after Load: want one.test and two.test blocked, three.test not")
	}
	if f.Reload() {
		t.Error("Reload of unchanged files reports a change")
	}
	write(a, "three.test\n", t0.Add(time.Minute))
	if !f.Reload() || blocked("one.test") || !blocked("three.test") {
		t.Error("after a change: want three.test blocked instead of one.test")
	}
	write(a, "three.test\ncom\n", t0.Add(2*time.Minute))
	if f.Reload() || !blocked("three.test") {
		t.Error("a file that no longer parses must keep its last good copy")
	}
	op := mustParse(t, "four.test\n", blocklist.Domains).Set
	allow := mustParse(t, "ok.two.test\n", blocklist.Domains).Set
	f.SetOperator(blocklist.Lists{Block: op, Allow: allow})
	if !blocked("four.test") || blocked("ok.two.test") || !blocked("no.two.test") {
		t.Error("operator entries: want four.test blocked, ok.two.test allowed")
	}

	bad := filepath.Join(dir, "bad.txt")
	write(bad, "fine.test\nnot a host\n", t0)
	err := blocklist.NewFiles([]string{b, bad}, nil).Load()
	if err == nil || !strings.Contains(err.Error(), bad) || !strings.Contains(err.Error(), "line 2") {
		t.Errorf("Load of a bad file: %v, want its name and line 2", err)
	}
}

// TestRun: Run reloads on each tick until stopped.
func TestRun(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "a.txt")
	if err := os.WriteFile(p, []byte("one.test\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	f := blocklist.NewFiles([]string{p}, nil)
	if err := f.Load(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte("one.test\ntwo.test\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tick, stop, done := make(chan time.Time), make(chan struct{}), make(chan struct{})
	go func() { f.Run(time.Hour, tick, stop); close(done) }()
	tick <- time.Time{}
	tick <- time.Time{} // the first tick's Reload has returned
	close(stop)
	<-done
	if _, ok := f.BlockedHost("two.test"); !ok {
		t.Error("after a tick: two.test not blocked")
	}
}

// TestEmpty: a policy that blocks nothing says so, and CheckTargets lets
// every link through it; one entry makes it non-empty.
func TestEmpty(t *testing.T) {
	f := blocklist.NewFiles(nil, nil)
	if !f.Empty() || !(blocklist.Lists{}).Empty() {
		t.Error("no files, no entries: want Empty")
	}
	l := &linkforge.Link{URL: "https://evil.test/"}
	if err := linkforge.CheckTargets(l, f); err != nil {
		t.Errorf("CheckTargets through an empty policy: %v", err)
	}
	f.SetOperator(blocklist.Lists{Block: mustParse(t, "evil.test\n", blocklist.Domains).Set})
	if f.Empty() {
		t.Error("one entry: want not Empty")
	}
	err := linkforge.CheckTargets(l, f)
	if linkforge.ErrorCode(err) != linkforge.EBlockedTarget {
		t.Errorf("CheckTargets: %v, want blocked_target", err)
	}
}

// BenchmarkBlockedURL: one target checked against 100,000 entries (a
// large feed), as each create checks each of its URLs.
func BenchmarkBlockedURL(b *testing.B) {
	var sb strings.Builder
	for i := range 100_000 {
		sb.WriteString("host" + strconv.Itoa(i) + ".feed.test\n")
	}
	r, err := blocklist.Parse([]byte(sb.String()))
	if err != nil {
		b.Fatal(err)
	}
	l := blocklist.Lists{Block: r.Set}
	b.ReportAllocs()
	for b.Loop() {
		if _, ok := l.BlockedURL("https://a.b.c.host99999.feed.test/path?q=1"); !ok {
			b.Fatal("not blocked")
		}
	}
}
