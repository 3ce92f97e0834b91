-- The operator's target blocklist and allowlist entries (docs/operations.md,
-- "Target blocklist"): in the database so that every node applies them;
-- the --blocklist files are each node's own. host is canonical (ASCII,
-- lowercase, no trailing dot) and blocks or allows the hosts under it.

-- +goose Up
CREATE TABLE target_entries (
    id         INTEGER PRIMARY KEY,
    list       TEXT    NOT NULL CHECK (list IN ('block', 'allow')),
    host       TEXT    NOT NULL,
    note       TEXT    NOT NULL DEFAULT '',
    created_at INTEGER NOT NULL,
    UNIQUE (list, host)
);

-- +goose Down
DROP TABLE target_entries;
