package classify

import (
	"net/http"
	"net/netip"
	"strings"

	"github.com/linkforge/linkforge"
)

// The values that stand for "nothing known" in each dimension. They are
// ordinary values to the counter and the API.
const (
	CountryUnknown = "unknown" // no client address, or one that is not public, or not in the table
	ReferrerDirect = "direct"  // no Referer, an unparsable one, or the short link's own host
	UTMNone        = "none"    // no utm_source parameter, or an empty one
	Other          = "other"   // device, browser or OS outside the named values, and every bot
	// Private is every dimension but traffic of a click whose browser
	// asks not to be tracked (IsPrivate).
	Private = "private"
)

// IsPrivate reports whether the request carries Sec-GPC: 1 (Global Privacy
// Control) or DNT: 1 (Do Not Track). Such a click is still counted, and
// classified human or automated, but its other dimensions are Private: the
// count of a link is not tracking, where its visitor's country, device and
// referrer are what the signal asks not to record.
func IsPrivate(h http.Header) bool {
	return strings.TrimSpace(headerValue(h, "Sec-Gpc")) == "1" || strings.TrimSpace(headerValue(h, "Dnt")) == "1"
}

// Click is the classification of one request, one field per dimension in the
// order of the Dimension schema of web/openapi.json (and of the root
// package's Dimension, which names the dimensions for the counter and the
// API). Every field is set (never empty). Country, Device, Browser and OS are
// constants of this package (Country one of the 26×26 interned two-letter
// codes or CountryUnknown), so they cost nothing to keep. Referrer and
// UTMSource may share memory with the request's header and URL: a holder that
// keeps them longer than the request (a counter's map key) should
// strings.Clone them once, so that a request is not kept alive by a map.
type Click struct {
	Country   string // ISO 3166-1 alpha-2 (upper case) or CountryUnknown
	Referrer  string // lowercased host without "www." and port, or ReferrerDirect
	Device    string // DeviceDesktop, DeviceMobile, DeviceTablet or Other
	Browser   string // one of Browsers
	OS        string // one of OSes
	UTMSource string // lowercased, printable ASCII, at most MaxUTMSourceLen bytes, or UTMNone
	Traffic   string // TrafficHuman or TrafficAutomated
}

// Dims returns the click as the counter takes it, one value per
// linkforge.Dimension. It is a copy of the string headers, returned by
// value so that it stays on the caller's stack; the strings themselves are
// shared, so the Referrer and UTMSource caveat of Click holds for the result.
func (c Click) Dims() linkforge.ClickDims {
	var d linkforge.ClickDims
	d[linkforge.DimCountry] = c.Country
	d[linkforge.DimReferrer] = c.Referrer
	d[linkforge.DimDevice] = c.Device
	d[linkforge.DimBrowser] = c.Browser
	d[linkforge.DimOS] = c.OS
	d[linkforge.DimUTMSource] = c.UTMSource
	// Not a classification: the redirect sets the variant it served.
	d[linkforge.DimVariant] = linkforge.DimVariant.Default()
	d[linkforge.DimTraffic] = c.Traffic
	return d
}

// Private reports whether the click is private (IsPrivate of its
// request): its dimensions but traffic are Private, a value no country
// takes otherwise.
func (c Click) Private() bool { return c.Country == Private }

// DeviceTarget returns which of a link's device_urls keys applies to this
// click: see the package function DeviceTarget.
func (c Click) DeviceTarget() string { return DeviceTarget(c.OS, c.Device) }

// Device-URL keys of a link (schema DeviceURLs in web/openapi.json).
const (
	TargetIOS     = "ios"
	TargetAndroid = "android"
	TargetDesktop = "desktop"
)

// DeviceTarget is the one rule that picks a link's device URL, shared by the
// redirect and by the analytics so that they cannot disagree: TargetIOS when
// the OS is iOS (iPhone, iPad and iPod all report OSiOS here; there is no
// separate iPadOS value, see ADR 008), TargetAndroid when it is Android,
// TargetDesktop when the device class is desktop, and "" otherwise (bots,
// TVs, unknown agents), meaning the link's plain url. The OS is checked
// first, so an iPad or an Android tablet gets its platform's URL.
func DeviceTarget(os, device string) string {
	switch {
	case os == OSiOS:
		return TargetIOS
	case os == OSAndroid:
		return TargetAndroid
	case device == DeviceDesktop:
		return TargetDesktop
	}
	return ""
}

// Config is what a Classifier needs. The zero value is usable: no trusted
// proxies (the peer is always the client) and the embedded country table.
type Config struct {
	// TrustedProxies are the peers whose X-Forwarded-For is believed
	// (--trusted-proxies, parsed by ParseTrustedProxies).
	TrustedProxies []netip.Prefix
	// Countries maps a public address to a country; nil means Embedded
	// (the IP2Location LITE table compiled into the binary).
	Countries CountryDB
}

// Classifier classifies requests. It holds no per-request state and is safe
// for concurrent use.
type Classifier struct {
	trustedProxies []netip.Prefix
	countries      CountryDB
}

// New returns a Classifier for cfg. The prefixes are copied, so the caller
// may reuse its slice. It builds what the first click would otherwise wait
// for, once per process: the User-Agent parser's trie (about 40 ms, 5 MB)
// and, with the embedded table, its IPv6 part, which the module keeps
// compressed until the first IPv6 lookup (about 55 ms, 11 MB).
func New(cfg Config) *Classifier {
	parser()
	c := &Classifier{
		trustedProxies: append([]netip.Prefix(nil), cfg.TrustedProxies...),
		countries:      cfg.Countries,
	}
	if c.countries == nil {
		c.countries = Embedded{}
		c.countries.Country(netip.IPv6Loopback())
	}
	return c
}

// Classify classifies request r, which arrived from peer (the TCP peer, as
// RemoteAddrPort parses it). It does not read the body and does not keep r.
func (c *Classifier) Classify(r *http.Request, peer netip.AddrPort) Click {
	return c.ClassifyAgent(r, peer, LookupAgent(headerValue(r.Header, "User-Agent")))
}

// ClassifyAgent is Classify for a caller that has already looked up the
// request's User-Agent (LookupAgent(r.UserAgent()), as the redirect does
// for its preview check): the agent's device, browser and OS are used as
// they are, saving a second lookup.
func (c *Classifier) ClassifyAgent(r *http.Request, peer netip.AddrPort, agent Agent) Click {
	click, _ := c.ClassifyClient(r, peer, agent)
	return click
}

// ClassifyClient is ClassifyAgent that also returns the client address
// (ClientAddr of r's header and peer), the one the country is looked up
// from, for a caller that needs it too (the visitor hash, a routing
// rule's ip condition): the X-Forwarded-For walk is done once. For a
// private click (IsPrivate) it is returned as well, and the classification
// derives nothing from it.
func (c *Classifier) ClassifyClient(r *http.Request, peer netip.AddrPort, agent Agent) (Click, netip.Addr) {
	client := c.ClientAddr(r.Header, peer.Addr())
	var click Click
	click.Traffic = TrafficHuman
	if agent.Automated || IsAutomatedRequest(r) {
		click.Traffic = TrafficAutomated
	}
	if IsPrivate(r.Header) {
		// Counted and classified human or automated, and nothing else
		// derived: not even the country lookup runs.
		click.Country, click.Referrer, click.Device = Private, Private, Private
		click.Browser, click.OS, click.UTMSource = Private, Private, Private
		return click, client
	}
	click.Country = c.Country(client)
	click.Device, click.Browser, click.OS = agent.Device, agent.Browser, agent.OS
	click.Referrer = Referrer(headerValue(r.Header, "Referer"), r.Host)
	click.UTMSource = UTMSource(r.URL.RawQuery)
	return click, client
}

// RemoteAddrPort parses r.RemoteAddr, which net/http sets to the TCP peer
// as "ip:port". It returns the zero AddrPort when that is not an address
// (a test request, a unix socket), which Classify counts as unknown.
func RemoteAddrPort(r *http.Request) netip.AddrPort {
	ap, err := netip.ParseAddrPort(r.RemoteAddr)
	if err != nil {
		return netip.AddrPort{}
	}
	return ap
}

// headerValue is Header.Get for a key already in canonical form: a direct
// map read, skipping the canonicalization Get would do on every request.
func headerValue(h http.Header, canonicalKey string) string {
	if v := h[canonicalKey]; len(v) > 0 {
		return v[0]
	}
	return ""
}
