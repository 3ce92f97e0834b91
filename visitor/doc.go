// Package visitor computes the daily visitor hash: a keyed hash of a
// request's client address and User-Agent, whose 32-byte key exists for one
// UTC day and is destroyed after it. Two requests of the same visitor on the
// same day hash alike on every node; nothing links one day's hashes to the
// next day's, and neither the address nor the agent is kept.
//
// It is the one place that hashes visitors, because two features must agree
// on who a visitor is: the A/B variant a visitor keeps for the day (package
// rules) and the daily unique-visitor sketch of the analytics. Where the
// day's key comes from, and why it is shared through the main database
// rather than derived from a deployment secret, is ADR 024
// (docs/adr/024-visitor-hash.md).
package visitor
