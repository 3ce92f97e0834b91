package postgres

import (
	"context"
	"fmt"
	"maps"
	"slices"

	"github.com/jackc/pgx/v5"

	"github.com/linkforge/linkforge"
)

var _ linkforge.InstanceStore = (*DB)(nil)

// Initialized reports whether a migration ran on the database: goose's
// version table is the first thing it creates (in the search path's first
// schema, where to_regclass looks).
func (db *DB) Initialized(ctx context.Context) (bool, error) {
	var ok bool
	if err := db.pool.QueryRow(ctx, `SELECT to_regclass('goose_db_version') IS NOT NULL`).Scan(&ok); err != nil {
		return false, fmt.Errorf("postgres: schema present: %w", err)
	}
	return ok, nil
}

// InstanceSettings returns the settings serve stored.
func (db *DB) InstanceSettings(ctx context.Context) (map[string]string, error) {
	rows, err := db.pool.Query(ctx, `SELECT key, value FROM instance_settings`)
	if err != nil {
		return nil, fmt.Errorf("postgres: instance settings: %w", err)
	}
	out := map[string]string{}
	var k, v string
	if _, err := pgx.ForEachRow(rows, []any{&k, &v}, func() error { out[k] = v; return nil }); err != nil {
		return nil, fmt.Errorf("postgres: instance settings: %w", err)
	}
	return out, nil
}

// SetInstanceSettings upserts settings in one transaction, in key order
// (two nodes starting together take the rows' locks in the same order).
func (db *DB) SetInstanceSettings(ctx context.Context, settings map[string]string) error {
	at := now()
	err := pgx.BeginFunc(ctx, db.pool, func(tx pgx.Tx) error {
		for _, k := range slices.Sorted(maps.Keys(settings)) {
			if _, err := tx.Exec(ctx, `INSERT INTO instance_settings (key, value, updated_at) VALUES ($1, $2, $3)
				ON CONFLICT (key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at`,
				k, settings[k], at); err != nil {
				return fmt.Errorf("%s: %w", k, err)
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("postgres: set instance settings: %w", err)
	}
	return nil
}
