-- A link whose target a check flagged (docs/operations.md, "Unsafe
-- links"): the blocklist at a re-check, or the --threat-dns filter.
-- unsafe_reason says why; NULL: not flagged. Visitors get a warning
-- interstitial before the target.

-- +goose Up
ALTER TABLE links ADD COLUMN unsafe_reason TEXT;

-- +goose Down
ALTER TABLE links DROP COLUMN unsafe_reason;
