-- A link whose target a check flagged (docs/operations.md, "Unsafe
-- links"): the blocklist at a re-check, or the --threat-dns filter.
-- unsafe_reason says why; NULL: not flagged. Visitors get a warning
-- interstitial before the target. health_* are the last check of the
-- link's targets (package health); health_state NULL: never checked.

-- +goose Up
ALTER TABLE links ADD COLUMN unsafe_reason TEXT;
ALTER TABLE links ADD COLUMN health_state TEXT CHECK (health_state IN ('ok', 'broken'));
ALTER TABLE links ADD COLUMN health_status INTEGER NOT NULL DEFAULT 0;
ALTER TABLE links ADD COLUMN health_checked_at INTEGER;
ALTER TABLE links ADD COLUMN health_error TEXT NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE links DROP COLUMN health_error;
ALTER TABLE links DROP COLUMN health_checked_at;
ALTER TABLE links DROP COLUMN health_status;
ALTER TABLE links DROP COLUMN health_state;
ALTER TABLE links DROP COLUMN unsafe_reason;
