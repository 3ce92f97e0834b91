// Package clienttest holds the tests of the Go client (package client, its
// own module under client/) against a real server: the real HTTP handler
// on a real SQLite store, with a real click counter and live feed. They
// live in the server's module because they import the server's packages,
// which the client's module must not require. It has no code of its own.
package clienttest
