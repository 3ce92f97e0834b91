-- Certificates for --tls auto (docs/adr/020-domains.md): the certificates,
-- their keys and the ACME account live in the main database, so that every
-- node serves what one node obtained. tls_assets is a key-value table with
-- slash-separated keys (the layout the ACME library gives its storage);
-- tls_locks holds the cluster-wide locks that make one node issue for a
-- host, each with an expiry so that a node killed while issuing holds it
-- only until then. Times are unix microseconds UTC.

-- +goose Up
CREATE TABLE tls_assets (
	key         TEXT PRIMARY KEY,
	value       BLOB NOT NULL,
	modified_at INTEGER NOT NULL
);

CREATE TABLE tls_locks (
	name       TEXT PRIMARY KEY,
	owner      TEXT NOT NULL,
	expires_at INTEGER NOT NULL
);

-- +goose Down
DROP TABLE tls_locks;
DROP TABLE tls_assets;
