// Package rules decides where a short link's redirect goes: its routing
// rules (first match wins), then its device URLs, then its A/B variants,
// then its url, with the answer code and query forwarding the link asks for
// (schemas Rules, Variants and OG of web/openapi.json).
//
// A link is compiled once, when the redirect cache loads it (Compile):
// CIDRs and times are parsed, values lowercased or put in their canonical
// form, and every Location header value that does not depend on the request
// is built then. Evaluate runs per request on the classification the click
// already has (package classify), so nothing is classified twice; it does
// not allocate unless the link forwards a query string, and its work is
// bounded whatever the request sends (ADR 042): the query conditions see
// the first 64 pairs within the query's first 4 KiB, parsed once; the
// language conditions see the first 8 entries of Accept-Language; and the
// rules stop when the request's context ends.
//
// The variant a visitor gets comes from the daily visitor hash (package
// visitor), so the visitor keeps it for the UTC day on every node, and the
// analytics can count clicks per variant exactly.
//
// The link's fields themselves are plain data in the root package
// (linkforge.Rule, linkforge.Variant, linkforge.OG), where the stores and the
// API carry them; this package validates them (Validate) because it knows
// the analytics' value sets that device, os and browser conditions name.
package rules
