package classify

import (
	"errors"
	"io/fs"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/maxmind/mmdbwriter"
	"github.com/maxmind/mmdbwriter/mmdbtype"
)

// notPublic are addresses no country owns; every CountryDB must give
// CountryUnknown for them, whatever its data says.
var notPublic = []string{
	"10.0.0.1", "172.16.5.4", "192.168.1.1", // private
	"127.0.0.1", "::1", // loopback
	"169.254.1.1", "fe80::1", // link-local
	"0.0.0.0", "::", // unspecified
	"100.64.0.1",              // CGNAT
	"fc00::1", "fd12:3456::1", // unique local
	"224.0.0.1", "ff02::1", // multicast
	"192.0.2.1", "198.51.100.1", // documentation
	"203.0.113.1", "2001:db8::1", // documentation
	"240.0.0.1", "255.255.255.255", // reserved, broadcast
	"::ffff:10.0.0.1", // mapped private
}

func TestCountryEmbedded(t *testing.T) {
	tests := []struct{ addr, want string }{
		{"8.8.8.8", "US"},
		{"81.2.69.142", "GB"},
		{"193.0.6.139", "NL"},
		{"133.242.0.3", "JP"},
		{"1.1.1.1", "AU"}, // what IP2Location LITE says for Cloudflare's resolver
		{"2001:4860:4860::8888", "US"},
		{"2a00:1450:4001:80b::200e", "DE"},
		{"2001:67c:2e8:22::c100:68b", "NL"}, // RIPE NCC
		{"::ffff:8.8.8.8", "US"},            // mapped: looked up as IPv4
	}
	for _, a := range notPublic {
		tests = append(tests, struct{ addr, want string }{a, CountryUnknown})
	}
	c := New(Config{})
	for _, tc := range tests {
		t.Run(tc.addr, func(t *testing.T) {
			if got := c.Country(netip.MustParseAddr(tc.addr)); got != tc.want {
				t.Fatalf("Country(%s) = %q, want %q", tc.addr, got, tc.want)
			}
		})
	}
	if got := c.Country(netip.Addr{}); got != CountryUnknown {
		t.Fatalf("Country(invalid) = %q, want %q", got, CountryUnknown)
	}
}

// fixedDB answers the same string for every address.
type fixedDB string

func (f fixedDB) Country(netip.Addr) string { return string(f) }

// TestCountryOnlyTwoLetterCodes: whatever a database answers, only [A-Z]{2}
// (not ZZ) reaches the counts, and it is one of the interned strings.
func TestCountryOnlyTwoLetterCodes(t *testing.T) {
	tests := []struct{ answer, want string }{
		{"DE", "DE"},
		{"de", "DE"},
		{"", CountryUnknown},
		{"-", CountryUnknown},
		{"ZZ", CountryUnknown},
		{"zz", CountryUnknown},
		{"USA", CountryUnknown},
		{"U1", CountryUnknown},
		{"U", CountryUnknown},
		{"\x00\x00", CountryUnknown},
		{"Ü", CountryUnknown}, // two bytes in UTF-8
		{"(more)", CountryUnknown},
	}
	for _, tc := range tests {
		t.Run(tc.answer, func(t *testing.T) {
			c := New(Config{Countries: fixedDB(tc.answer)})
			got := c.Country(netip.MustParseAddr("8.8.8.8"))
			if got != tc.want {
				t.Fatalf("Country with database answer %q = %q, want %q", tc.answer, got, tc.want)
			}
			if got != CountryUnknown && got != countryCodes[int(got[0]-'A')*26+int(got[1]-'A')] {
				t.Fatalf("Country = %q is not the interned string", got)
			}
		})
	}
}

// writeMMDB writes a small MaxMind-format database of the given type to a
// temporary file, with records shaped like GeoLite2-City (country nested
// under "country", plus a different registered_country, as for an address
// of a foreign-registered network).
func writeMMDB(t testing.TB, dbType string, ipVersion int, records map[string]mmdbtype.Map) string {
	t.Helper()
	w, err := mmdbwriter.New(mmdbwriter.Options{DatabaseType: dbType, IPVersion: ipVersion, RecordSize: 24, IncludeReservedNetworks: true})
	if err != nil {
		t.Fatal(err)
	}
	for cidr, rec := range records {
		_, n, err := net.ParseCIDR(cidr)
		if err != nil {
			t.Fatal(err)
		}
		if err := w.Insert(n, rec); err != nil {
			t.Fatalf("insert %s: %v", cidr, err)
		}
	}
	path := filepath.Join(t.TempDir(), "test.mmdb")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.WriteTo(f); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

func cityRecord(country, registered string) mmdbtype.Map {
	return mmdbtype.Map{
		"city":               mmdbtype.Map{"names": mmdbtype.Map{"en": mmdbtype.String("Somewhere")}},
		"country":            mmdbtype.Map{"iso_code": mmdbtype.String(country), "geoname_id": mmdbtype.Uint32(1)},
		"registered_country": mmdbtype.Map{"iso_code": mmdbtype.String(registered)},
	}
}

func TestCountryMMDB(t *testing.T) {
	for _, dbType := range []string{"GeoLite2-Country", "GeoLite2-City", "DBIP-Country-Lite", "GeoIP2-Enterprise"} {
		t.Run(dbType, func(t *testing.T) {
			path := writeMMDB(t, dbType, 6, map[string]mmdbtype.Map{
				// Deliberately unlike the embedded table, so the test shows
				// which source answered.
				"8.8.8.0/24":     cityRecord("SE", "US"),
				"81.2.69.0/24":   cityRecord("gb", "GB"), // lower case in the data
				"2001:4860::/32": cityRecord("CH", "US"),
				"5.5.5.0/24":     cityRecord("XYZ", "US"),                                                 // not a code
				"6.6.6.0/24":     {"registered_country": mmdbtype.Map{"iso_code": mmdbtype.String("FR")}}, // no country
				"7.7.7.0/24":     {"country": mmdbtype.String("DE")},                                      // another shape
				"10.0.0.0/8":     cityRecord("DE", "DE"),                                                  // in the data, but private
			})
			db, err := OpenMMDB(path)
			if err != nil {
				t.Fatalf("OpenMMDB: %v", err)
			}
			t.Cleanup(func() {
				if err := db.Close(); err != nil {
					t.Errorf("Close: %v", err)
				}
			})
			c := New(Config{Countries: db})
			tests := []struct{ addr, want string }{
				{"8.8.8.8", "SE"},
				{"::ffff:8.8.8.8", "SE"},
				{"81.2.69.142", "GB"},
				{"2001:4860:4860::8888", "CH"},
				{"5.5.5.5", CountryUnknown},
				{"6.6.6.6", CountryUnknown},
				{"7.7.7.7", CountryUnknown},
				{"9.9.9.9", CountryUnknown},     // not in the database
				{"193.0.6.139", CountryUnknown}, // not in the database
				{"10.1.2.3", CountryUnknown},    // private: never looked up
			}
			for _, tc := range tests {
				if got := c.Country(netip.MustParseAddr(tc.addr)); got != tc.want {
					t.Errorf("Country(%s) = %q, want %q", tc.addr, got, tc.want)
				}
			}
		})
	}
}

// TestCountryMMDBIPv4Only: an IPv4-only database answers unknown for IPv6
// clients instead of failing.
func TestCountryMMDBIPv4Only(t *testing.T) {
	path := writeMMDB(t, "GeoLite2-Country", 4, map[string]mmdbtype.Map{"8.8.8.0/24": cityRecord("SE", "US")})
	db, err := OpenMMDB(path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	c := New(Config{Countries: db})
	if got := c.Country(netip.MustParseAddr("8.8.8.8")); got != "SE" {
		t.Errorf("Country(8.8.8.8) = %q, want SE", got)
	}
	if got := c.Country(netip.MustParseAddr("2001:4860:4860::8888")); got != CountryUnknown {
		t.Errorf("Country(IPv6) = %q, want %q", got, CountryUnknown)
	}
}

func TestOpenMMDBErrors(t *testing.T) {
	dir := t.TempDir()
	garbage := filepath.Join(dir, "garbage.mmdb")
	if err := os.WriteFile(garbage, []byte("this is not a MaxMind database\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	empty := filepath.Join(dir, "empty.mmdb")
	if err := os.WriteFile(empty, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	asn := writeMMDB(t, "GeoLite2-ASN", 6, map[string]mmdbtype.Map{
		"8.8.8.0/24": {"autonomous_system_number": mmdbtype.Uint32(15169)},
	})
	tests := []struct {
		name, path string
		want       []string
		is         error
	}{
		{"missing file", filepath.Join(dir, "nope.mmdb"), []string{"open geoip database", "nope.mmdb"}, fs.ErrNotExist},
		{"not a database", garbage, []string{"open geoip database", "garbage.mmdb", "MaxMind-format"}, nil},
		{"empty file", empty, []string{"open geoip database", "empty.mmdb"}, nil},
		{"ASN database", asn, []string{`database type "GeoLite2-ASN" has no country data`}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			db, err := OpenMMDB(tc.path)
			if err == nil {
				db.Close()
				t.Fatal("OpenMMDB succeeded, want an error")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
			if tc.is != nil && !errors.Is(err, tc.is) {
				t.Errorf("error %v is not %v", err, tc.is)
			}
		})
	}
}

// publicScan is public without the first-octet shortcut: every address is
// checked against every special-purpose prefix of its family.
func publicScan(a netip.Addr) bool {
	if !a.IsValid() || a.IsUnspecified() || a.IsLoopback() || a.IsPrivate() ||
		a.IsLinkLocalUnicast() || a.IsLinkLocalMulticast() || a.IsInterfaceLocalMulticast() ||
		a.IsMulticast() {
		return false
	}
	special := nonPublic6
	if a.Is4() {
		special = nonPublic4
	}
	for _, p := range special {
		if p.Contains(a) {
			return false
		}
	}
	return true
}

// TestPublicShortcut: the first-octet shortcut changes no answer, over every
// first octet and the edges of every special-purpose IPv4 prefix.
func TestPublicShortcut(t *testing.T) {
	var addrs []netip.Addr
	for a := range 256 {
		for _, b := range []byte{0, 1, 18, 19, 20, 51, 63, 64, 100, 127, 128, 168, 254, 255} {
			for _, c := range []byte{0, 2, 100, 113, 255} {
				addrs = append(addrs, netip.AddrFrom4([4]byte{byte(a), b, c, 7}))
			}
		}
	}
	for _, p := range nonPublic4 {
		first := p.Masked().Addr()
		addrs = append(addrs, first, first.Prev(), first.Next())
		// the last address of the prefix and the one after it
		b := first.As4()
		n := uint32(b[0])<<24 | uint32(b[1])<<16 | uint32(b[2])<<8 | uint32(b[3])
		end := n + (1<<(32-p.Bits()) - 1)
		for _, v := range []uint32{end, end + 1} {
			addrs = append(addrs, netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)})) //nolint:gosec // G115: the truncation to each byte of the address is the point
		}
	}
	checked := 0
	for _, a := range addrs {
		if !a.IsValid() {
			continue
		}
		checked++
		if got, want := public(a), publicScan(a); got != want {
			t.Errorf("public(%v) = %v, want %v", a, got, want)
		}
	}
	if checked < 256*14*5 {
		t.Fatalf("only %d addresses checked", checked)
	}
}
