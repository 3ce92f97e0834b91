package sqlite

import (
	"context"
	"fmt"
	"maps"
	"slices"

	"github.com/linkforge/linkforge"
)

var _ linkforge.InstanceStore = (*DB)(nil)

// Initialized reports whether a migration ran on the file: goose's version
// table is the first thing it creates.
func (db *DB) Initialized(ctx context.Context) (bool, error) {
	var n int
	if err := db.reader.QueryRowContext(ctx,
		`SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name = 'goose_db_version'`).Scan(&n); err != nil {
		return false, fmt.Errorf("sqlite: schema present: %w", err)
	}
	return n > 0, nil
}

// InstanceSettings returns the settings serve stored.
func (db *DB) InstanceSettings(ctx context.Context) (map[string]string, error) {
	rows, err := db.reader.QueryContext(ctx, `SELECT key, value FROM instance_settings`)
	if err != nil {
		return nil, fmt.Errorf("sqlite: instance settings: %w", err)
	}
	out := map[string]string{}
	var k, v string
	if err := forEach(rows, []any{&k, &v}, func() error { out[k] = v; return nil }); err != nil {
		return nil, fmt.Errorf("sqlite: instance settings: %w", err)
	}
	return out, nil
}

// SetInstanceSettings upserts settings in one transaction, in key order.
func (db *DB) SetInstanceSettings(ctx context.Context, settings map[string]string) error {
	tx, err := db.writer.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("sqlite: set instance settings: %w", err)
	}
	defer tx.Rollback()
	at := toMicros(now())
	for _, k := range slices.Sorted(maps.Keys(settings)) {
		if _, err := tx.ExecContext(ctx, `INSERT INTO instance_settings (key, value, updated_at) VALUES (?, ?, ?)
			ON CONFLICT (key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at`,
			k, settings[k], at); err != nil {
			return fmt.Errorf("sqlite: set instance setting %s: %w", k, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("sqlite: set instance settings: %w", err)
	}
	return nil
}
