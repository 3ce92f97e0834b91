-- Abuse reports (docs/operations.md, "Abuse reports"): sent by anyone
-- through /report or POST /api/v1/reports, listed and resolved by the
-- operator. link_id names the reported link when the URL was one (NULL:
-- none, or the link was deleted since); url is what the reporter sent.

-- +goose Up
CREATE TABLE abuse_reports (
    id          INTEGER PRIMARY KEY,
    link_id     INTEGER REFERENCES links (id) ON DELETE SET NULL,
    url         TEXT    NOT NULL,
    reason      TEXT    NOT NULL,
    email       TEXT    NOT NULL DEFAULT '',
    created_at  INTEGER NOT NULL,
    resolved_at INTEGER,
    resolution  TEXT CHECK (resolution IN ('block', 'dismiss'))
);
CREATE INDEX abuse_reports_link ON abuse_reports (link_id);

-- +goose Down
DROP TABLE abuse_reports;
