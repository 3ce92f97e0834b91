package classify

import (
	"fmt"
	"net/netip"
	"strings"

	"github.com/oschwald/maxminddb-golang/v2"
	"github.com/phuslu/iploc"
)

// CountryDB maps a public IP address to a country. Country returns an
// ISO 3166-1 alpha-2 code in upper case, or anything else (typically "")
// when the address is not in the database; the Classifier checks the answer
// and keeps only two-letter codes, so an implementation cannot put an
// arbitrary string into the counts. Implementations must be safe for
// concurrent use.
type CountryDB interface {
	Country(a netip.Addr) string
}

// Embedded is the default CountryDB: the IP2Location LITE IP-to-country
// table that github.com/phuslu/iploc compiles into the binary (IPv4 and
// IPv6, about 15 ns and no allocation a lookup; updated with each release of
// that module). Using it requires the attribution in the README (IP2Location
// LITE data is licensed CC BY-SA 4.0).
type Embedded struct{}

// Country implements CountryDB.
func (Embedded) Country(a netip.Addr) string { return iploc.IPCountry(a) }

// MMDB is a CountryDB reading a MaxMind-format database (--geoip-db): the
// GeoLite2/GeoIP2 Country or City databases, or DB-IP's country or city
// databases in MMDB form, which all store the code at country.iso_code.
type MMDB struct {
	r *maxminddb.Reader
}

// OpenMMDB opens the MaxMind-format database at path. It refuses a file that
// is not an MMDB and a database whose type does not name country data (an
// ASN or ISP database), so a wrong --geoip-db fails at start-up instead of
// counting every click as unknown. Close releases it.
func OpenMMDB(path string) (*MMDB, error) {
	r, err := maxminddb.Open(path)
	if err != nil {
		return nil, fmt.Errorf("open geoip database %q (want a MaxMind-format .mmdb such as GeoLite2-Country.mmdb): %w", path, err)
	}
	t := strings.ToLower(r.Metadata.DatabaseType)
	if !strings.Contains(t, "country") && !strings.Contains(t, "city") && !strings.Contains(t, "enterprise") {
		_ = r.Close()
		return nil, fmt.Errorf("open geoip database %q: database type %q has no country data (want a GeoLite2/GeoIP2 or DB-IP country or city database)", path, r.Metadata.DatabaseType)
	}
	return &MMDB{r: r}, nil
}

// Country implements CountryDB. Lookup errors (an IPv6 address in an
// IPv4-only database, a corrupt record) count as not found: one bad record
// must not fail a redirect.
func (m *MMDB) Country(a netip.Addr) string {
	var code string
	if err := m.r.Lookup(a).DecodePath(&code, "country", "iso_code"); err != nil {
		return ""
	}
	return code
}

// Close releases the database (its memory map).
func (m *MMDB) Close() error {
	if err := m.r.Close(); err != nil {
		return fmt.Errorf("close geoip database: %w", err)
	}
	return nil
}

// Country returns the country dimension value for client address a:
// CountryUnknown for an invalid address, for one that is not globally
// routable (private, loopback, link-local, unspecified, shared CGNAT space,
// documentation and other special-purpose ranges), or when the database has
// no two-letter code for it ("ZZ", which IP2Location uses for unassigned
// space, counts as unknown too).
func (c *Classifier) Country(a netip.Addr) string {
	a = a.Unmap()
	if !public(a) {
		return CountryUnknown
	}
	return countryValue(c.countries.Country(a))
}

// countryValue interns a database answer: the result is one of 676
// preallocated strings, so a database that allocates its answer (MMDB) does
// not make the counter keep per-click memory, and nothing but [A-Z]{2} gets
// through.
func countryValue(code string) string {
	if len(code) != 2 {
		return CountryUnknown
	}
	a, b := code[0]&^0x20, code[1]&^0x20 // upper-case ASCII letters
	if a < 'A' || a > 'Z' || b < 'A' || b > 'Z' || (a == 'Z' && b == 'Z') {
		return CountryUnknown
	}
	return countryCodes[int(a-'A')*26+int(b-'A')]
}

var countryCodes = func() (t [26 * 26]string) {
	for i := range t {
		t[i] = string([]byte{byte('A' + i/26), byte('A' + i%26)})
	}
	return t
}()

// Special-purpose ranges the net/netip predicates do not cover but that no
// country owns (IANA special-purpose registries), one list per family so a
// lookup scans only its own. Kept short: the table answers "ZZ" for most of
// them anyway; this makes the answer independent of the table.
var (
	nonPublic4 = []netip.Prefix{
		netip.MustParsePrefix("0.0.0.0/8"),       // "this network"
		netip.MustParsePrefix("100.64.0.0/10"),   // shared address space (CGNAT)
		netip.MustParsePrefix("192.0.0.0/24"),    // IETF protocol assignments
		netip.MustParsePrefix("192.0.2.0/24"),    // TEST-NET-1
		netip.MustParsePrefix("198.18.0.0/15"),   // benchmarking
		netip.MustParsePrefix("198.51.100.0/24"), // TEST-NET-2
		netip.MustParsePrefix("203.0.113.0/24"),  // TEST-NET-3
		netip.MustParsePrefix("240.0.0.0/4"),     // reserved, and broadcast
	}
	nonPublic6 = []netip.Prefix{
		netip.MustParsePrefix("2001:db8::/32"),  // documentation
		netip.MustParsePrefix("64:ff9b:1::/48"), // local-use NAT64
		netip.MustParsePrefix("100::/64"),       // discard-only
	}
)

// special4First marks the first octets that some prefix of nonPublic4
// covers, so that public scans that list only for the few addresses that
// can be in it (0, 100, 192, 198, 203, 240 to 255): the scan, a Contains
// per prefix, was an eighth of Classify's time for every IPv4 click.
var special4First = func() (first [256]bool) {
	for _, p := range nonPublic4 {
		lo := p.Addr().As4()[0]
		n := 1
		if p.Bits() < 8 {
			n = 1 << (8 - p.Bits())
		}
		for i := range n {
			first[int(lo)+i] = true
		}
	}
	return first
}()

// public reports whether a is a unicast address a country can own.
func public(a netip.Addr) bool {
	if !a.IsValid() || a.IsUnspecified() || a.IsLoopback() || a.IsPrivate() ||
		a.IsLinkLocalUnicast() || a.IsLinkLocalMulticast() || a.IsInterfaceLocalMulticast() ||
		a.IsMulticast() {
		return false
	}
	special := nonPublic6
	if a.Is4() {
		if !special4First[a.As4()[0]] {
			return true
		}
		special = nonPublic4
	}
	for _, p := range special {
		if p.Contains(a) {
			return false
		}
	}
	return true
}
