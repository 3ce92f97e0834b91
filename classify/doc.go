// Package classify turns one short-link request into the small, bounded
// strings the click analytics count: country, referrer host, device class,
// browser, operating system and utm_source (the Dimension schema of
// web/openapi.json), and whether the click was a person's or a program's
// (traffic: human or automated, the human and automated members of schema
// Stats).
//
// Automated traffic is recognized by isbot's maintained User-Agent patterns
// (vendored in patterns/, translated from JavaScript to RE2 by
// patterns/gen.go, refreshed by patterns/refresh.sh) and by headers no
// person's click sends (IsAutomatedRequest): prefetches, no Accept, HTTP/1.0
// without Accept-Language.
//
// It exists as a package of its own because two callers need exactly the
// same answers: the counting pipeline (ADR 009), which keeps one count per
// dimension value, and the device-specific targets of a link (ADR 011,
// [DeviceTarget]), which must pick the iOS, Android or desktop URL from the
// very classification the analytics then report. It also decides, in one
// place, which client address a request comes from ([Classifier.ClientAddr]),
// so that anything limited per client (password guessing) agrees with the
// country the click is counted under.
//
// What it never keeps: the client's IP address and the User-Agent header are
// inputs only. They are reduced here to a country code and to a device,
// browser and OS name from fixed sets; neither the raw address nor the raw
// User-Agent is returned, stored or logged by this package (it does not log
// at all), and callers must not log them either. The referrer is reduced to
// its host name and utm_source is bounded and sanitized, because both are
// outside input that becomes a stored value.
//
// Every value comes from a bounded set or has bounded length and printable
// ASCII bytes; ADR 008 lists the value sets and why.
package classify
