-- The settings a running deployment serves with that the other commands
-- need (the public URL its one-time URLs are on, how it verifies domains):
-- `linkforge serve` writes them at each start, `linkforge user add` and
-- the rest read them, so that a command run beside the server acts as the
-- server would (docs/adr/019-command-line.md). Keys are the serve
-- flags' names, values their canonical text.

-- +goose Up
CREATE TABLE instance_settings (
	key        TEXT PRIMARY KEY,
	value      TEXT NOT NULL,
	updated_at TIMESTAMPTZ NOT NULL
);

-- +goose Down
DROP TABLE instance_settings;
